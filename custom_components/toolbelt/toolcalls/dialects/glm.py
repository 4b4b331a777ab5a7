"""Zhipu GLM-4.5/4.6/4.7: ``<tool_call>fn<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

GLM-4.5/4.6 put newlines between the parts, GLM-4.7 does not; a tool without
arguments is ``<tool_call>fn</tool_call>``. Values arrive as text and are
typed from the tool's schema (``"21"`` is a number only where the schema says
so); a string value written as a JSON string (``<arg_value>"London"``, as
GLM-4.7 does) loses its quotes, as the engines read it. A ``<tool_call>`` whose
body is JSON belongs to the Hermes dialect. LongCat-Flash writes the same shape
with its own tag names (``ArgTags``).
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import re
from typing import TYPE_CHECKING, Any, override

from ..model import RejectedCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.markup import (
    prefer_outside_reasoning,
    too_many,
    typed_text_arguments,
)
from ..reading.scan import skip_ws
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["GLM_TAGS", "ArgTags", "GlmDialect", "arg_tag_calls"]


@dataclass(frozen=True, slots=True)
class ArgTags:
    """The tag names of one key/value call format, and its patterns."""

    call: str
    key: str
    value: str
    head: re.Pattern[str]
    pair: re.Pattern[str]
    close: re.Pattern[str]

    @classmethod
    def named(cls, call: str, key: str, value: str, sep: str = "") -> ArgTags:
        """``<call>NAME<key>k</key><value>v</value></call>`` with these names;
        ``sep``: a tag the format may write between the name and the pairs."""
        c, k, v = (re.escape(n) for n in (call, key, value))
        after = rf"(?:<{re.escape(sep)}>\s*)?" if sep else ""
        return cls(
            call=call,
            key=key,
            value=value,
            # Possessive name: giving characters back can never help, only
            # cost (a long dotted name that is not a call would be tried again
            # at every length).
            head=re.compile(
                rf"<{c}>\s*([A-Za-z_][\w.\-]*+)\s*{after}(?=<{k}>|</{c}>|$)"
            ),
            # Keys hold no tags, so a never-closed value cannot make the key
            # backtrack.
            pair=re.compile(rf"\s*<{k}>([^<]*)</{k}>\s*<{v}>(.*?)</{v}>", re.S),
            close=re.compile(rf"\s*</{c}>"),
        )


GLM_TAGS = ArgTags.named("tool_call", "arg_key", "arg_value")


def _json_string(raw: str) -> str | None:
    """The text of a value written as one JSON string (``"London"``), else None."""
    text = raw.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _unquoted(catalog: Catalog, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """String parameters written as JSON strings, without their quotes."""
    resolved = catalog.resolve(name)
    schema = catalog.schema(resolved) if resolved else {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return args
    for key, value in args.items():
        prop = props.get(key)
        kinds = prop.get("type") if isinstance(prop, dict) else None
        kinds = kinds if isinstance(kinds, list) else [kinds]
        if "string" in kinds and isinstance(value, str) and value[:1] in ' \n"':
            text = _json_string(value)
            if text is not None:
                args[key] = text
    return args


def arg_tag_calls(text: str, catalog: Catalog, tags: ArgTags) -> list[Found]:
    """Every ``<call>NAME<key>…</key><value>…</value></call>`` call in ``text``."""
    found: list[Found] = []
    done = 0
    for head in tags.head.finditer(text):
        if too_many(found, text, head.start()):
            break
        if head.start() < done:
            continue  # a tag quoted inside an earlier call's value
        name = head.group(1)
        pos = head.end()
        pairs: list[tuple[str, str]] = []
        while (pair := tags.pair.match(text, pos)) is not None:
            pairs.append((pair.group(1), pair.group(2)))
            pos = pair.end()
        close = tags.close.match(text, pos)
        rest = text[skip_ws(text, pos) : skip_ws(text, pos) + len(tags.call) + 2]
        if close is not None:
            end = close.end()
        elif not rest or rest.startswith((f"<{tags.key}", f"<{tags.value}")):
            # Never closed, or cut off inside a key or value.
            raw = text[head.start() :]
            found.append(
                Found(
                    head.start(),
                    len(text),
                    RejectedCall(name, raw, "call is truncated"),
                )
            )
            break
        elif rest.startswith(f"<{tags.call}>"):
            end = pos  # the next call starts; this one just lacks its closer
        else:
            continue  # not this format's markup
        raw = text[head.start() : end]
        args = _unquoted(catalog, name, typed_text_arguments(catalog, name, pairs))
        found.append(
            Found(
                head.start(),
                end,
                make_call(catalog, name, args, raw=raw, coerce=True),
            )
        )
        done = end
    return found


class GlmDialect(Dialect):
    """GLM ``<arg_key>``/``<arg_value>`` calls, typed from the schema."""

    name = "glm"
    markers = ("<tool_call>",)
    triggers = ("<tool_call>",)

    @override
    def may_match(self, text: str) -> bool:
        """A tag followed by a name (a JSON body is Hermes's)."""
        return GLM_TAGS.head.search(text) is not None

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user"
            " query. The functions, as JSON signatures:\n<tools>\n"
            f"{json_catalog(catalog)}\n</tools>\n\n"
            "For each function call, output the function name and arguments in this"
            " format:\n<tool_call>function_name\n<arg_key>arg</arg_key>\n"
            "<arg_value>value</arg_value>\n</tool_call>"
        )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = arg_tag_calls(text, catalog, GLM_TAGS)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)
