"""Preferred Networks PLaMo 3: each call's name and JSON arguments in their own tags.

``<|plamo:begin_tool_requests:plamo|>`` then, per call,
``<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>fn``
``<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>`` (and
``<|plamo:constrain|>json<|plamo:msg|>`` when the engine constrains the
arguments) ``{..}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>``,
then ``<|plamo:end_tool_requests:plamo|>`` and the end-of-turn
``<|plamo:tag|>``. Text before the requests is the answer;
``<|plamo:begin_think:plamo|>…<|plamo:end_think:plamo|>`` is reasoning.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..model import RejectedCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.jsonrepair import LooseJSONError, loads_loose
from ..reading.markup import Finder, prefer_outside_reasoning, too_many
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall

__all__ = ["PlamoDialect"]

register_reasoning_delimiters(
    "<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>", lone_closer=True
)

_REQUESTS = "<|plamo:begin_tool_requests:plamo|>"
_REQUEST = "<|plamo:begin_tool_request:plamo|>"
_ARGS_END = "<|plamo:end_tool_arguments:plamo|>"
# A request up to its arguments: the name, then the arguments tag.
_HEAD = re.compile(
    r"<\|plamo:begin_tool_request:plamo\|>\s*"
    r"<\|plamo:begin_tool_name:plamo\|>([^<>]{1,256}?)<\|plamo:end_tool_name:plamo\|>\s*"
    r"<\|plamo:begin_tool_arguments:plamo\|>(?:<\|plamo:constrain\|>json<\|plamo:msg\|>)?"
)
_REQUEST_END = re.compile(r"\s*<\|plamo:end_tool_request:plamo\|>")


def _requests(text: str, catalog: Catalog) -> list[Found]:
    found: list[Found] = []
    finder = Finder(text)
    pos = finder.find(_REQUEST)
    while pos >= 0:
        if too_many(found, text, pos):
            break
        call: ToolCall | RejectedCall
        head = _HEAD.match(text, pos)
        close = finder.find(_ARGS_END, head.end()) if head else -1
        if head is None or close < 0:
            end = finder.find(_REQUEST, pos + len(_REQUEST))
            end = len(text) if end < 0 else end
            reason = "call is truncated" if end == len(text) else "not a valid call"
            call = RejectedCall(head.group(1) if head else "", text[pos:end], reason)
        else:
            end = close + len(_ARGS_END)
            after = _REQUEST_END.match(text, end)
            end = after.end() if after else end
            name, raw = head.group(1).strip(), text[pos:end]
            body = text[head.end() : close].strip()
            try:
                args = loads_loose(body) if body else {}
            except LooseJSONError:
                call = RejectedCall(name, raw, "arguments are not valid JSON")
            else:
                call = make_call(catalog, name, args, raw=raw)
        found.append(Found(pos, end, call))
        pos = finder.find(_REQUEST, max(end, pos + len(_REQUEST)))
    if not found and _REQUESTS in text:
        start = text.find(_REQUESTS)
        found.append(Found(start, len(text), None))  # requests opened, none written
    return found


class PlamoDialect(Dialect):
    """PLaMo 3 ``<|plamo:begin_tool_request:plamo|>`` calls."""

    name = "plamo"
    markers = (_REQUESTS, _REQUEST)
    triggers = ("<|plamo:begin_tool_request",)
    dropped = (
        _REQUESTS,
        "<|plamo:end_tool_requests:plamo|>",
        "<|plamo:tag|>",
    )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = prefer_outside_reasoning(text, _requests(text, catalog))
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these tools, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call tools, write each call's name and JSON arguments in tags:\n"
            f"{_REQUESTS}{_REQUEST}<|plamo:begin_tool_name:plamo|>tool_name"
            "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|>"
            f'{{"arg": "value"}}{_ARGS_END}<|plamo:end_tool_request:plamo|>'
            "<|plamo:end_tool_requests:plamo|>\n"
            "If no tool is needed, answer normally."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the requests; the parser needs no closer."""
        return ["<|plamo:end_tool_requests:plamo|>"]
