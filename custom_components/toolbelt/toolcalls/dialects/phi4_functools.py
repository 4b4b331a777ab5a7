"""Phi-4-mini and FireFunction: ``functools[{"name": .., "arguments": ..}, ...]``.

Phi-4-mini's own chat template (llama.cpp's copy) writes each call as
``<|tool_call|>{"name": .., "arguments": ..}<|/tool_call|>`` instead; Ollama's
writes a list between the same tokens. Both are read here too.
"""

from __future__ import annotations

import re
from typing import ClassVar, override

from ..catalog import Catalog
from ..model import ParseResult
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.markup import refuse_unread, token_json_calls, too_many
from ..reading.scan import MAX_BLOCKS, json_calls_at
from .base import Dialect

__all__ = ["FunctoolsDialect"]

MARKER = "functools"
_TOKEN = "<|tool_call|>"
_CLOSER = "<|/tool_call|>"
# The word, then the list that opens right after it (blanks between).
_LIST = re.compile(r"functools[ \t\r\n]*\[")


class FunctoolsDialect(Dialect):
    """A JSON call list after the word ``functools``; an empty list is no call."""

    name: ClassVar[str] = "functools"
    markers: ClassVar[tuple[str, ...]] = ("functools[", _TOKEN)
    start_markers: ClassVar[tuple[str, ...]] = ("functools",)
    triggers: ClassVar[tuple[str, ...]] = (MARKER, _TOKEN)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        # At most ``MAX_BLOCKS`` lists, as every block reader (64 kB of
        # ``functools[`` stays cheap); the word alone is no list and counts not.
        rest = -1
        match = _LIST.search(text)
        for index in range(MAX_BLOCKS + 1):
            if match is None or too_many(found, text, match.start()):
                break
            if index == MAX_BLOCKS:
                rest = match.start()
                break
            end = match.end()
            result = json_calls_at(text, end - 1, catalog)
            if result is not None:
                calls, end = result
                found += [Found(match.start(), end, call) for call in calls]
                if not calls:
                    found.append(Found(match.start(), end, None))
            match = _LIST.search(text, end)
        refuse_unread(found, text, rest, match.end() - 1 if match else -1)
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
