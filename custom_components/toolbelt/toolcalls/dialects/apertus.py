"""Swiss AI Apertus: ``<|tools_prefix|>[{"fn": {args}}]<|tools_suffix|>``.

Each array element maps one function name to its arguments. The suffix is
often missing, and the array may stop right after a complete element; what is
complete is kept, a cut-off element is rejected. Reasoning is
``<|inner_prefix|>…<|inner_suffix|>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..model import RejectedCall, ToolCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    find_json_end,
    loads_loose,
)
from ..reading.markup import (
    prefer_outside_reasoning,
    too_many,
)
from ..reading.scan import skip_ws, tag_blocks
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["ApertusDialect"]

register_reasoning_delimiters("<|inner_prefix|>", "<|inner_suffix|>", lone_closer=True)


def _element_calls(
    catalog: Catalog, value: object, raw: str
) -> list[ToolCall | RejectedCall]:
    """``{"fn": {args}}`` (one or more names) -> calls."""
    if not isinstance(value, dict) or not value:
        return [RejectedCall(name="", raw=raw, reason="not a {name: arguments} object")]
    return [make_call(catalog, name, args, raw=raw) for name, args in value.items()]


def _array_calls(
    text: str, pos: int, stop: int, catalog: Catalog
) -> list[ToolCall | RejectedCall]:
    """Read ``[{..}, {..}]`` element by element up to ``stop``."""
    calls: list[ToolCall | RejectedCall] = []
    pos = skip_ws(text, pos + 1)
    while pos < stop and text[pos] == "{":
        end = find_json_end(text, pos)
        if end < 0 or end > stop:
            chunk = text[pos:stop].rstrip()
            try:
                calls += _element_calls(catalog, loads_loose(chunk), chunk)
            except LooseJSONError:
                calls.append(
                    RejectedCall(name="", raw=chunk, reason="call is truncated")
                )
            return calls
        chunk = text[pos:end]
        try:
            calls += _element_calls(catalog, loads_loose(chunk), chunk)
        except (TruncatedJSONError, LooseJSONError) as err:
            calls.append(RejectedCall(name="", raw=chunk, reason=f"not JSON: {err}"))
        pos = skip_ws(text, end)
        if pos < stop and text[pos] == ",":
            pos = skip_ws(text, pos + 1)
    return calls


class ApertusDialect(Dialect):
    """Apertus ``<|tools_prefix|>`` function-name-as-key calls."""

    name = "apertus"
    markers = ("<|tools_prefix|>",)
    triggers = ("<|tools_prefix|>",)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, described as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call functions, write <|tools_prefix|> followed by a JSON list that "
            "maps each function name to its arguments: "
            '<|tools_prefix|>[{"function_name": {"arg": "value"}}]<|tools_suffix|>\n'
            "If no function is needed, answer normally."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["<|tools_suffix|>"]

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        for start, body_start, body_end, end in tag_blocks(
            text, "<|tools_prefix|>", "<|tools_suffix|>"
        ):
            if too_many(found, text, start):
                break
            pos = skip_ws(text, body_start)
            if pos < body_end and text[pos] == "[":
                calls = _array_calls(text, pos, body_end, catalog)
            elif pos < body_end and text[pos] == "{":
                chunk = text[pos:body_end].strip()
                try:
                    calls = _element_calls(catalog, loads_loose(chunk), chunk)
                except LooseJSONError:
                    calls = [
                        RejectedCall(name="", raw=chunk, reason="call is truncated")
                    ]
            else:
                calls = []
            if calls:
                found += [Found(start, end, c) for c in calls]
            elif not text[body_start:body_end].strip():
                found.append(Found(start, end, None))
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)
