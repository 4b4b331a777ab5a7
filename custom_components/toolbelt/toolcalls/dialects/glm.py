"""Zhipu GLM-4.5/4.6/4.7: ``<tool_call>fn<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

GLM-4.5/4.6 put newlines between the parts, GLM-4.7 does not; a tool without
arguments is ``<tool_call>fn</tool_call>``. Values arrive as text and are
typed from the tool's schema (``"21"`` is a number only where the schema says
so). A ``<tool_call>`` whose body is JSON belongs to the Hermes dialect.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..calls import Found, build_result, make_call
from ..model import RejectedCall
from ..prompting import json_catalog
from ..scan import skip_ws
from ._markup import (
    prefer_outside_reasoning,
    too_many,
    typed_text_arguments,
)
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["GlmDialect"]

# Possessive name: giving characters back can never help, only cost (a long
# dotted name that is not GLM would be tried again at every length).
_HEAD = re.compile(r"<tool_call>\s*([A-Za-z_][\w.\-]*+)\s*(?=<arg_key>|</tool_call>|$)")
# Keys hold no tags, so a never-closed value cannot make the key backtrack.
_PAIR = re.compile(
    r"\s*<arg_key>([^<]*)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.S
)
_CLOSE = re.compile(r"\s*</tool_call>")


class GlmDialect(Dialect):
    """GLM ``<arg_key>``/``<arg_value>`` calls, typed from the schema."""

    name = "glm"
    markers = ("<tool_call>",)
    triggers = ("<tool_call>",)

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
        found: list[Found] = []
        done = 0
        for head in _HEAD.finditer(text):
            if too_many(found, text, head.start()):
                break
            if head.start() < done:
                continue  # a tag quoted inside an earlier call's value
            name = head.group(1)
            pos = head.end()
            pairs: list[tuple[str, str]] = []
            while (pair := _PAIR.match(text, pos)) is not None:
                pairs.append((pair.group(1), pair.group(2)))
                pos = pair.end()
            close = _CLOSE.match(text, pos)
            rest = text[skip_ws(text, pos) : skip_ws(text, pos) + 12]
            if close is not None:
                end = close.end()
            elif not rest or rest.startswith("<arg_"):
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
            elif rest.startswith("<tool_call>"):
                end = pos  # the next call starts; this one just lacks its closer
            else:
                continue  # not GLM markup
            raw = text[head.start() : end]
            args = typed_text_arguments(catalog, name, pairs)
            found.append(
                Found(
                    head.start(),
                    end,
                    make_call(catalog, name, args, raw=raw, coerce=True),
                )
            )
            done = end
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)
