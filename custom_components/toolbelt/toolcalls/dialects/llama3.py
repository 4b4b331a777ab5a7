"""Llama 3.x JSON tool calls.

``{"name": .., "parameters": {..}}`` at the start of the reply, several of
them ``;``-separated, optionally after ``<|python_tag|>``, plus the built-in
tools written as Python (``<|python_tag|>brave_search.call(query="...")``).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, override

from ..catalog import Catalog
from ..model import (
    ParseResult,
    ToolCall,
)
from ..prompting.render import json_catalog, result_text
from ..reading.calls import Found, build_result, make_call
from ..reading.markup import refuse_unread, too_many
from ..reading.openers import JSON_CALL, InlineOpener
from ..reading.pycall import PyCallError, parse_python_calls
from ..reading.scan import MAX_BLOCKS, leading_json_calls, skip_ws
from .base import Dialect

__all__ = ["Llama3Dialect"]

PYTHON_TAG = "<|python_tag|>"
# What ends a built-in call's lines, besides the next ``<|python_tag|>``.
_END_TOKENS = ("<|eom_id|>", "<|eot_id|>", "\n\n")


def _python_calls(text: str, start: int, stop: int, catalog: Catalog) -> list[Found]:
    """Built-in calls after ``<|python_tag|>``: ``tool.call(k=v)`` lines, up
    to ``stop`` (the next tag) at most: each stretch of text is searched once."""
    end = stop
    for token in _END_TOKENS:
        idx = text.find(token, start, end)
        if idx >= 0:
            end = idx
    source = text[start:end]
    try:
        parsed = parse_python_calls(source)
    except PyCallError:
        return []
    found: list[Found] = []
    for name, kwargs, positional in parsed:
        if positional:
            resolved = catalog.resolve(name)
            param = catalog.first_required_string(resolved) if resolved else None
            if param and len(positional) == 1 and isinstance(positional[0], str):
                kwargs = {param: positional[0], **kwargs}
        found.append(Found(start, end, make_call(catalog, name, kwargs, raw=source)))
    return found


def _tagged_calls(text: str, pos: int, catalog: Catalog) -> list[Found]:
    """Calls after each ``<|python_tag|>`` (the first at ``pos``), and the tags."""
    found: list[Found] = []
    tags: list[Found] = []  # the tags themselves: cut, but no calls
    for _ in range(MAX_BLOCKS):  # as every block reader; the rest is refused
        if pos < 0 or too_many(found, text, pos):
            return found + tags
        body = skip_ws(text, pos + len(PYTHON_TAG))
        # A call ends by the next tag: each stretch of text is read once.
        nxt = text.find(PYTHON_TAG, body)
        if body < len(text) and text[body] in "{[":
            spans = leading_json_calls(
                text,
                catalog,
                start=body,
                require_arguments=False,
                limit=nxt if nxt >= 0 else None,
            )
        else:
            spans = _python_calls(text, body, nxt if nxt >= 0 else len(text), catalog)
        if spans:
            tags.append(Found(pos, body, None))
            found.extend(spans)
        pos = nxt
    refuse_unread(found, text, pos, pos + len(PYTHON_TAG) if pos >= 0 else -1)
    return found + tags


class Llama3Dialect(Dialect):
    """Meta Llama 3.1 / 3.2 / 3.3 JSON tool calling."""

    name: ClassVar[str] = "llama3"
    # A call object may stand anywhere in prose (if it names its arguments
    # and a catalog tool): its opening also tells the fallback that a reply
    # is in this format.
    markers: ClassVar[tuple[str, ...]] = (PYTHON_TAG, '{"name"', '{ "name"')
    # Streaming holds from wherever such an object may begin.
    inline_openers: ClassVar[tuple[InlineOpener, ...]] = (JSON_CALL,)
    # Every JSON call holds a "{" (a list of calls too).
    triggers: ClassVar[tuple[str, ...]] = (PYTHON_TAG, "{")

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        pos = text.find(PYTHON_TAG)
        found = _tagged_calls(text, pos, catalog) if pos >= 0 else []
        if not found:
            found = leading_json_calls(text, catalog)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "Given the following functions, please respond with a JSON for a function call "
            "with its proper arguments that best answers the given prompt.\n\n"
            'Respond in the format {"name": function name, "parameters": dictionary of '
            "argument name and its value}. Do not use variables.\n\n"
            f"{json_catalog(catalog)}\n\n"
            "If no function is needed, answer the user directly in plain text."
        )

    @override
    def stop_sequences(self) -> list[str]:
        return ["<|eom_id|>"]

    @override
    def format_result(self, call: ToolCall, result: Any) -> str:
        return json.dumps({"output": result_text(result)}, ensure_ascii=False)
