"""OpenBMB MiniCPM 3/4 and MiniCPM 4.1/5.

* MiniCPM 3/4: a thought in ``<|thought_start|>…<|thought_end|>`` (reasoning,
  never spoken), then ``<|tool_call_start|>`` with the calls one per line in a
  ```` ```python ```` fence and ``<|tool_call_end|>``; an answer may follow.
* MiniCPM 4.1/5: ``<function name="fn"><param name="k">v</param></function>``,
  values typed from the tool's schema (``<![CDATA[…]]>`` keeps text as it is).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..model import RejectedCall
from ..prompting.render import compact_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.markup import prefer_outside_reasoning, too_many, typed_text_arguments
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect
from .pythonic import marked_python_blocks

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall

__all__ = ["MiniCpmDialect"]

register_reasoning_delimiters("<|thought_start|>", "<|thought_end|>")

_BLOCKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("<|tool_call_start|>", ("<|tool_call_end|>",)),
)
# The XML form: a function element whose children are params (or nothing).
_FUNCTION = re.compile(
    r"""<function\s+name\s*=\s*["']([^"'<>]+)["']\s*>(?=\s*(?:<param\b|</function>))"""
)
_PARAM = re.compile(
    r"""\s*<param\s+name\s*=\s*["']([^"'<>]+)["']\s*>(.*?)</param>""", re.S
)
_CLOSE = re.compile(r"\s*</function>")
_CDATA = re.compile(r"\A\s*<!\[CDATA\[(.*)\]\]>\s*\Z", re.S)


def _xml_calls(text: str, catalog: Catalog) -> list[Found]:
    found: list[Found] = []
    for match in _FUNCTION.finditer(text):
        if too_many(found, text, match.start()):
            break
        name = match.group(1)
        pos = match.end()
        pairs: list[tuple[str, str]] = []
        while (param := _PARAM.match(text, pos)) is not None:
            value = param.group(2)
            cdata = _CDATA.match(value) if "<![CDATA[" in value else None
            pairs.append((param.group(1), cdata.group(1) if cdata else value))
            pos = param.end()
        close = _CLOSE.match(text, pos)
        call: ToolCall | RejectedCall
        if close is None:
            end = len(text)
            call = RejectedCall(name, text[match.start() :], "call is truncated")
        else:
            end = close.end()
            args = typed_text_arguments(catalog, name, pairs)
            call = make_call(catalog, name, args, raw=text[match.start() : end])
        found.append(Found(match.start(), end, call))
    return found


class MiniCpmDialect(Dialect):
    """MiniCPM fenced Python calls and ``<function name=…>`` XML calls."""

    name = "minicpm"
    markers = ("<|tool_call_start|>",)
    triggers = ("<|tool_call_start|>", "<function")
    cleans = ("<|tool_call_",)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        if "<|tool_call_start|>" in text:
            found = marked_python_blocks(text, catalog, _BLOCKS)
        if "<function" in text:
            found += _xml_calls(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions:\n"
            f"{compact_catalog(catalog)}\n\n"
            "Think first in <|thought_start|> … <|thought_end|>. To call "
            "functions, then write them one per line, with keyword arguments:\n"
            "<|tool_call_start|>\n```python\nfunction_name(param='value')\n```\n"
            "<|tool_call_end|>\n"
            "If no function is needed, answer normally after your thought."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["<|tool_call_end|>"]

    @override
    def sanitize(self, text: str) -> str:
        if "<|tool_call_" in text:
            text = text.replace("<|tool_call_start|>", "").replace(
                "<|tool_call_end|>", ""
            )
        return text
