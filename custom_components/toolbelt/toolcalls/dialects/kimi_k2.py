"""Moonshot Kimi K2: ``<|tool_call_begin|>functions.fn:0<|tool_call_argument_begin|>{..}``.

Calls sit in ``<|tool_calls_section_begin|>…<|tool_calls_section_end|>`` and
end with ``<|tool_call_end|>``, but K2-Thinking also writes them inside its
reasoning and sometimes without section or end tokens. The call id
(``functions.fn:0``) is kept verbatim: Kimi's template sends it back. A bare
counter id (``0``) names no tool; the tool is then inferred from the argument
keys when exactly one catalog tool fits.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, override

from ..model import RejectedCall, ToolCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    loads_loose,
)
from ..reading.markup import (
    Finder,
    prefer_outside_reasoning,
    too_many,
)
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["KimiK2Dialect"]

_BEGIN = "<|tool_call_begin|>"
_ARGS = "<|tool_call_argument_begin|>"
_END = "<|tool_call_end|>"
_SECTION = re.compile(r"<\|tool_calls?_section_(?:begin|end)\|>")
_STOPS = (
    _END,
    _BEGIN,
    "<|tool_calls_section_end|>",
    "<|tool_call_section_end|>",
    "</think>",
)


def _name_from_id(call_id: str) -> str:
    name = call_id
    if name.startswith("functions."):
        name = name[len("functions.") :]
    head, sep, tail = name.rpartition(":")
    if sep and tail.isdigit():
        name = head
    return name


def _infer_tool(catalog: Catalog, args: Any) -> str | None:
    """The one catalog tool whose parameters cover all of ``args``' keys."""
    if not isinstance(args, dict) or not args:
        return None
    fits = []
    for tool in catalog:
        props = tool.parameters.get("properties") if tool.parameters else None
        if isinstance(props, dict) and set(args) <= set(props):
            fits.append(tool.name)
    return fits[0] if len(fits) == 1 else None


class KimiK2Dialect(Dialect):
    """Kimi K2 tool-call section tokens, ids kept verbatim."""

    name = "kimi_k2"
    markers = ("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>", _BEGIN)
    # Every call opens with it (section tokens only count around a call).
    triggers = (_BEGIN,)
    cleans = (_ARGS,)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, described as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call functions, write: <|tool_calls_section_begin|><|tool_call_begin|>"
            "functions.NAME:0<|tool_call_argument_begin|>"
            '{"arg": "value"}<|tool_call_end|><|tool_calls_section_end|>\n'
            "If no function is needed, answer normally."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["<|tool_calls_section_end|>"]

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        finder = Finder(text)
        pos = finder.find(_BEGIN)
        while pos >= 0:
            if too_many(found, text, pos):
                break
            head_start = pos + len(_BEGIN)
            arg_tok = finder.find(_ARGS, head_start)
            stop, stop_end = len(text), len(text)
            for token in _STOPS:
                idx = finder.find(token, head_start)
                if 0 <= idx < stop:
                    stop = idx
                    stop_end = idx + len(token) if token == _END else idx
            if arg_tok < 0 or arg_tok > stop:
                found.append(Found(pos, stop_end, None))
            else:
                call_id = text[head_start:arg_tok].strip()
                body = text[arg_tok + len(_ARGS) : stop]
                found.append(
                    Found(
                        pos,
                        stop_end,
                        self._call(catalog, call_id, body, text[pos:stop_end]),
                    )
                )
            pos = finder.find(_BEGIN, max(stop, pos + 1))
        if any(f.call is not None for f in found):
            found += [Found(m.start(), m.end(), None) for m in _SECTION.finditer(text)]
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _call(
        self, catalog: Catalog, call_id: str, body: str, raw: str
    ) -> ToolCall | RejectedCall:
        name = _name_from_id(call_id)
        try:
            args = loads_loose(body.strip()) if body.strip() else {}
        except TruncatedJSONError:
            return RejectedCall(name=name, raw=raw, reason="arguments are truncated")
        except LooseJSONError as err:
            return RejectedCall(
                name=name, raw=raw, reason=f"arguments are not JSON: {err}"
            )
        if name.isdigit() or not name:
            inferred = _infer_tool(catalog, args)
            if inferred is None:
                return RejectedCall(
                    name=call_id, raw=raw, reason="the call names no tool"
                )
            name = inferred
        return make_call(catalog, name, args, raw=raw, call_id=call_id or None)

    @override
    def sanitize(self, text: str) -> str:
        return text.replace(_ARGS, "")
