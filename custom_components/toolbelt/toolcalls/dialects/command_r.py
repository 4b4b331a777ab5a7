"""Cohere Command-R7B / Command-A and Command-R+.

* R7B/A: ``<|START_THINKING|>…<|END_THINKING|>`` is reasoning,
  ``<|START_RESPONSE|>…<|END_RESPONSE|>`` (or ``<|START_TEXT|>…``) is content,
  and ``<|START_ACTION|>[{"tool_call_id": "0", "tool_name": …, "parameters":
  {…}}]<|END_ACTION|>`` holds the calls; ``tool_call_id`` is kept as the id.
* R+: ``Action: ```json [{"tool_name": …, "parameters": {…}}] ```''; the
  ``directly-answer`` pseudo-tool means "no tool".

Citation markup ``<co>text</co: 0:[1]>`` is removed, keeping the text.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..catalog import fold
from ..model import RejectedCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.jsonrepair import find_json_end
from ..reading.markup import (
    MAX_CALLS,
    marked_json_calls,
    prefer_outside_reasoning,
    too_many,
)
from ..reading.scan import json_calls_at, json_error_at, skip_ws, tag_blocks
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall

__all__ = ["CommandRDialect"]

_ACTION = re.compile(r"^[ \t]*Action:", re.M)
_ACTION_FENCE = re.compile(r"[ \t]*\n?[ \t]*```[ \t]*(?:json)?[ \t]*\n?")
# Cohere's R+ list items start with "tool_name".
_COHERE_CALL = re.compile(r'\[?\s*\{\s*"tool_name"\s*:')
_NO_TOOL = frozenset({"directlyanswer", "directanswer"})
_CITATION = re.compile(r"</?co(?::[^>\n]{0,80})?>")
_TOOL_NAME = re.compile(r'"tool_name"\s*:\s*"([^"\n]{1,128})"')


def too_many_calls(calls: list[ToolCall | RejectedCall]) -> bool:
    """Whether a salvaged list already holds as many calls as any reply may."""
    return len(calls) >= MAX_CALLS


def _drop_no_tool(
    calls: list[ToolCall | RejectedCall],
) -> list[ToolCall | RejectedCall | None]:
    """``directly-answer`` is Cohere's way of saying no tool is needed."""
    return [None if fold(c.name) in _NO_TOOL else c for c in calls]


def _salvage(
    text: str, pos: int, limit: int, catalog: Catalog
) -> list[ToolCall | RejectedCall]:
    """An action list that does not read as a whole, read call by call.

    One malformed call (``"time": 15:30``) is refused and its well-formed
    siblings still run, as Ollama's parser keeps them; a missing comma between
    calls loses nothing. A block that holds no call object at all is refused
    whole, so its text is never spoken.
    """
    calls: list[ToolCall | RejectedCall] = []
    if text.startswith("[", pos):
        pos = skip_ws(text, pos + 1, limit)
    while pos < limit and text[pos] == "{" and not too_many_calls(calls):
        end = find_json_end(text, pos, limit)
        if end < 0:
            calls.append(RejectedCall("", text[pos:limit], "call is truncated"))
            return calls
        result = json_calls_at(text, pos, catalog, limit=end)
        if result is None:
            why = json_error_at(text, pos, end) or "not a call"
            named = _TOOL_NAME.search(text, pos, end)
            calls.append(
                RejectedCall(
                    named.group(1) if named else "",
                    text[pos:end],
                    f"cannot read the call: {why}",
                )
            )
        else:
            calls.extend(result[0])
        pos = skip_ws(text, end, limit)
        if pos < limit and text[pos] == ",":
            pos = skip_ws(text, pos + 1, limit)
    if not calls:
        raw = text[pos:limit]
        calls.append(RejectedCall("", raw, "the action block is not a JSON call list"))
    return calls


class CommandRDialect(Dialect):
    """``<|START_ACTION|>`` JSON calls and R+ ``Action:`` fenced JSON."""

    name = "command_r"
    markers = ("<|START_ACTION|>",)
    triggers = ("<|START_ACTION|>", "Action:")
    cleans = ("<co", "</co")

    @override
    def may_match(self, text: str) -> bool:
        """An action block, or R+'s ``Action:`` with a fenced ``tool_name`` list."""
        return "<|START_ACTION|>" in text or (
            "Action:" in text and "```" in text and '"tool_name"' in text
        )

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "## Available Tools\nYou can ONLY use these tools, described as JSON"
            f" signatures:\n{json_catalog(catalog)}\n\n"
            "To use tools, write <|START_ACTION|> followed by a JSON list of calls"
            " and <|END_ACTION|>: <|START_ACTION|>["
            '{"tool_call_id": "0", "tool_name": "tool_name", "parameters": {"arg": "value"}}'
            "]<|END_ACTION|>\nOtherwise answer the user directly."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["<|END_ACTION|>"]

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = self._actions(text, catalog)
        if not found and "Action:" in text:
            found = self._plus(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _actions(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        if "<|START_ACTION|>" not in text:
            return found
        for start, body_start, body_end, end in tag_blocks(
            text, "<|START_ACTION|>", "<|END_ACTION|>"
        ):
            if too_many(found, text, start):
                break
            pos = skip_ws(text, body_start)
            result = marked_json_calls(text, pos, catalog)
            if result is None:
                if pos >= body_end:  # an empty action block
                    found.append(Found(start, end, None))
                elif text[pos] in "[{":
                    calls = _salvage(text, pos, body_end, catalog)
                    found.extend([Found(start, end, c) for c in _drop_no_tool(calls)])
                continue
            calls, json_end = result
            found.extend(
                Found(start, max(end, json_end), c) for c in _drop_no_tool(calls)
            )
        return found

    def _plus(self, text: str, catalog: Catalog) -> list[Found]:
        """R+: ``Action:`` followed by a ```json fence (same or next line) with the calls."""
        found: list[Found] = []
        for match in _ACTION.finditer(text):
            if too_many(found, text, match.start()):
                break
            fence = _ACTION_FENCE.match(text, match.end())
            if fence is None:
                continue
            body_start = fence.end()
            close = text.find("```", body_start)
            body_end = close if close >= 0 else len(text)
            end = close + 3 if close >= 0 else len(text)
            pos = skip_ws(text, body_start)
            if not _COHERE_CALL.match(text, pos):
                continue  # other JSON (a ReAct blob, data): not Cohere's call list
            result = json_calls_at(
                text[pos:body_end], 0, catalog, require_arguments=True
            )
            if result is None:
                if close < 0:
                    reject = RejectedCall(
                        "", text[match.start() :], "call is truncated"
                    )
                    found.append(Found(match.start(), end, reject))
                continue
            calls = _drop_no_tool(result[0])
            found.extend([Found(match.start(), end, c) for c in calls])
        return found

    @override
    def sanitize(self, text: str) -> str:
        if "<co" in text or "</co" in text:
            text = _CITATION.sub("", text)
        return text
