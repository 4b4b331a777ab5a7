"""Zhipu GLM-4.5/4.6/4.7: ``<tool_call>fn<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

GLM-4.5/4.6 put newlines between the parts, GLM-4.7 does not; a tool without
arguments is ``<tool_call>fn</tool_call>``. Values arrive as text and are
typed from the tool's schema (``"21"`` is a number only where the schema says
so); a string value written as a JSON string (``<arg_value>"London"``, as
GLM-4.7 does) loses its quotes, as the engines read it. A ``<tool_call>`` whose
body is JSON belongs to the Hermes dialect. LongCat-Flash writes the same shape
with its own tag names (``ArgTags``). Read here too: TeleChat4/XingChen4/Xing4.0's
``<param_key>``/``<param_value>`` pairs, IQuest Coder V2's and IQuest Q1's
``<iquestcoder_tool_call>``/``<iquest_tool_call>`` and Poolside Laguna's calls
in ``<user>`` tags (catalog tools only).
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import re
from typing import TYPE_CHECKING, Any, override

from ..model import RejectedCall, ToolCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.literals import literals
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
    """The tokens of one key/value call format, and its patterns."""

    call_open: str
    # What a call cut off inside its arguments starts with, after a pair.
    cut: tuple[str, ...]
    head: re.Pattern[str]
    pair: re.Pattern[str]
    close: re.Pattern[str]

    @classmethod
    def named(
        cls, call: str, key: str, value: str, sep: str = "", kind: str = ""
    ) -> ArgTags:
        """``<call>NAME<key>k</key><value>v</value></call>`` with these names;
        ``sep``: a tag the format may write between the name and the pairs;
        ``kind``: a tag it may write between a key and its value, naming the
        value's type (ignored: the tool's schema types the value)."""
        return cls.tokens(
            (f"<{call}>", f"</{call}>"),
            (f"<{key}>", f"</{key}>"),
            (f"<{value}>", f"</{value}>"),
            cut=(f"<{key}", f"<{value}", *((f"<{kind}",) if kind else ())),
            sep=f"<{sep}>" if sep else "",
            kind=(f"<{kind}>", f"</{kind}>") if kind else None,
        )

    @classmethod
    def tokens(
        cls,
        call: tuple[str, str],
        key: tuple[str, str],
        value: tuple[str, str],
        *,
        cut: tuple[str, ...],
        stops: tuple[str, ...] = (),
        sep: str = "",
        kind: tuple[str, str] | None = None,
    ) -> ArgTags:
        """``CALL NAME KEY k /KEY VALUE v /VALUE /CALL`` with these (opener,
        closer) tokens; a value opener may be empty (Solar Open's key closer
        opens the value, whose blanks are kept). A name ends at a key, the
        call's closer, the end of the text or one of ``stops``; ``sep`` is a
        token the format may write between the name and the pairs, ``kind``
        the (opener, closer) of a type tag it may write before a value."""
        c, cc, k, kc, v, vc = (re.escape(t) for t in (*call, *key, *value))
        v = rf"\s*{v}" if v else ""
        if kind is not None:
            t, tc = map(re.escape, kind)
            v = rf"(?:\s*{t}[^<]*{tc})?{v}"
        ends = "|".join((k, cc, *map(re.escape, stops), "$"))
        after = rf"(?:{re.escape(sep)}\s*)?" if sep else ""
        return cls(
            call_open=call[0],
            cut=cut,
            # Possessive name: giving characters back can never help, only
            # cost (a long dotted name that is not a call would be tried again
            # at every length).
            head=re.compile(rf"{c}\s*([A-Za-z_][\w.\-]*+)\s*{after}(?={ends})"),
            # Keys hold no tags, so a never-closed value cannot make the key
            # backtrack.
            pair=re.compile(rf"\s*{k}([^<]*){kc}{v}(.*?){vc}", re.S),
            close=re.compile(rf"\s*{cc}"),
        )


_PAIR = ("arg_key", "arg_value")
GLM_TAGS = ArgTags.named("tool_call", *_PAIR)
# Poolside Laguna may write a call in ``<user>`` tags; only a catalog tool's
# name makes one a call (as Ollama reads it), anything else is prose.
_USER_TAGS = ArgTags.named("user", *_PAIR)
# The same pairs under other tag names, each read only when its literal is in
# the reply: TeleChat4/XingChen4/Xing4.0's ``<param_key>``/``<param_value>``,
# IQuest Coder V2's and IQuest Q1's own call tags.
_VARIANTS: tuple[tuple[str, ArgTags], ...] = (
    ("<param_key>", ArgTags.named("tool_call", "param_key", "param_value")),
    ("<iquestcoder_tool_call>", ArgTags.named("iquestcoder_tool_call", *_PAIR)),
    ("<iquest_tool_call>", ArgTags.named("iquest_tool_call", *_PAIR)),
)
_OTHER_HEADS = (("<user>", _USER_TAGS), *_VARIANTS)
# One scan for all of them (most replies hold none).
_OTHER_TAGS = literals(literal for literal, _ in _OTHER_HEADS)
# GLM-5.3-Flash's short pairs, ``<arg_key>k=v</arg_value>`` (no ``</arg_key>``
# nor ``<arg_value>``): the key ends at the first ``=``.
_SHORT_PAIR = re.compile(r"<arg_key>[^<=]*=")
_SHORT_TAGS = ArgTags(
    call_open=GLM_TAGS.call_open,
    cut=GLM_TAGS.cut,
    head=GLM_TAGS.head,
    pair=re.compile(r"\s*<arg_key>([^<=]*)=(.*?)</arg_value>", re.S),
    close=GLM_TAGS.close,
)


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
        rest = text[skip_ws(text, pos) : skip_ws(text, pos) + len(tags.call_open)]
        if close is not None:
            end = close.end()
        elif rest.startswith(tags.call_open):
            end = pos  # the next call starts; this one just lacks its closer
        elif not rest or rest.startswith(tags.cut):
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


def _new_spans(found: list[Found], more: list[Found]) -> list[Found]:
    """The spans of ``more`` not already read (``<tool_call>NAME</tool_call>``
    has no pairs to tell two formats sharing the call tag apart)."""
    starts = {span.start for span in found}
    return [span for span in more if span.start not in starts]


def _read_again(found: list[Found], more: list[Found]) -> list[Found]:
    """``found`` with each refused call that ``more`` reads at the same place
    replaced by that reading."""
    calls = {span.start: span for span in more if isinstance(span.call, ToolCall)}
    return [
        calls.get(span.start, span) if isinstance(span.call, RejectedCall) else span
        for span in found
    ]


def _user_calls(text: str, catalog: Catalog) -> list[Found]:
    """Laguna's ``<user>NAME<arg_key>…</user>`` calls to catalog tools, with
    at least one argument: ``<user>NAME</user>`` alone is a quoted user turn."""
    return [
        span
        for span in arg_tag_calls(text, catalog, _USER_TAGS)
        if isinstance(span.call, ToolCall)
        and text.find("<arg_key>", span.start, span.end) >= 0
    ]


class GlmDialect(Dialect):
    """GLM ``<arg_key>``/``<arg_value>`` calls, typed from the schema."""

    name = "glm"
    # ``<user>``: held while streaming until the parse says whether it is a call.
    markers = ("<tool_call>", "<iquestcoder_tool_call>", "<iquest_tool_call>", "<user>")
    triggers = ("<tool_call>", "<user>", "<iquest")

    @override
    def may_match(self, text: str) -> bool:
        """A tag followed by a name (a JSON body is Hermes's)."""
        if GLM_TAGS.head.search(text) is not None:
            return True
        # One scan rules the other tag names out in most replies.
        return _OTHER_TAGS.any_in(text) and any(
            literal in text and tags.head.search(text) is not None
            for literal, tags in _OTHER_HEADS
        )

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
        for literal, tags in _VARIANTS:
            if literal in text:
                found += _new_spans(found, arg_tag_calls(text, catalog, tags))
        if _SHORT_PAIR.search(text):
            found = _read_again(found, arg_tag_calls(text, catalog, _SHORT_TAGS))
        if "<user>" in text:
            found += _user_calls(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)
