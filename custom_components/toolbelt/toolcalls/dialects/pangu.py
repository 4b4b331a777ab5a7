"""Huawei openPangu: a JSON call list between two tokens.

``[unused11][{"name": .., "arguments": {..}}][unused12]`` (openPangu
Embedded, whose vocabulary has no named tool tokens), or the same list between
``<|tool_call_start|>`` and ``<|tool_call_end|>`` (openPangu v2; LFM2 and
MiniCPM use those tokens for Python calls, which ``pythonic`` reads). Text
before the list is the answer; ``[unused16]…[unused17]`` is reasoning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..reading.calls import build_result
from ..reading.markup import prefer_outside_reasoning, token_json_calls
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["PanguDialect"]

register_reasoning_delimiters("[unused16]", "[unused17]", lone_closer=True)

_PAIRS = (("[unused11]", "[unused12]"), ("<|tool_call_start|>", "<|tool_call_end|>"))
_TOKENS = tuple(token for pair in _PAIRS for token in pair)


class PanguDialect(Dialect):
    """openPangu ``[unused11]`` / ``<|tool_call_start|>`` JSON call lists."""

    name = "pangu"
    markers = ("[unused11]", "<|tool_call_start|>")
    triggers = markers
    cleans = ("[unused1", "<|tool_call_")

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = [
            span
            for opener, closer in _PAIRS
            if opener in text
            for span in token_json_calls(text, catalog, opener, closer)
        ]
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call functions, write them as one JSON list between "
            "[unused11] and [unused12]:\n"
            '[unused11][{"name": "function_name", "arguments": {"arg": "value"}}]'
            "[unused12]\n"
            "If no function is needed, answer normally."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call list; the parser needs no closer."""
        return ["[unused12]", "<|tool_call_end|>"]

    @override
    def sanitize(self, text: str) -> str:
        for token in _TOKENS:
            if token in text:
                text = text.replace(token, "")
        return text
