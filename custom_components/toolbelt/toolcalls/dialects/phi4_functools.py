"""Phi-4-mini and FireFunction: ``functools[{"name": .., "arguments": ..}, ...]``.

Phi-4-mini's own chat template (llama.cpp's copy) writes each call as
``<|tool_call|>{"name": .., "arguments": ..}<|/tool_call|>`` instead; Ollama's
writes a list between the same tokens. Both are read here too.
"""

from __future__ import annotations

from typing import ClassVar, override

from ..catalog import Catalog
from ..model import ParseResult
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.markup import refuse_unread, token_json_calls, too_many
from ..reading.scan import MAX_BLOCKS, json_calls_at, skip_ws
from .base import Dialect

__all__ = ["FunctoolsDialect"]

MARKER = "functools"
_TOKEN = "<|tool_call|>"
_CLOSER = "<|/tool_call|>"


class FunctoolsDialect(Dialect):
    """A JSON call list after the word ``functools``; an empty list is no call."""

    name: ClassVar[str] = "functools"
    markers: ClassVar[tuple[str, ...]] = ("functools[", _TOKEN)
    start_markers: ClassVar[tuple[str, ...]] = ("functools",)
    triggers: ClassVar[tuple[str, ...]] = (MARKER, _TOKEN)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        pos = text.find(MARKER)
        # At most ``MAX_BLOCKS`` lists, as every block reader: 64 kB of
        # ``functools[`` stays cheap.
        for _ in range(MAX_BLOCKS):
            if pos < 0 or too_many(found, text, pos):
                pos = -1
                break
            body = skip_ws(text, pos + len(MARKER))
            end = pos + len(MARKER)
            if body < len(text) and text[body] == "[":
                result = json_calls_at(text, body, catalog)
                if result is not None:
                    calls, end = result
                    found += [Found(pos, end, call) for call in calls]
                    if not calls:
                        found.append(Found(pos, end, None))
            pos = text.find(MARKER, end)
        refuse_unread(found, text, pos)
        if _TOKEN in text:
            found += token_json_calls(text, catalog, _TOKEN, _CLOSER)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You have access to these functions:\n"
            f"{json_catalog(catalog)}\n"
            'To call functions, reply with functools[{"name": "function_name", '
            '"arguments": {"arg": "value"}}, ...]. Otherwise answer directly.'
        )
