"""Moonshot Kimi K2 and K3: K2's call tokens, K3's XTML channels.

K2: ``<|tool_call_begin|>functions.fn:0<|tool_call_argument_begin|>{..}``.

Calls sit in ``<|tool_calls_section_begin|>…<|tool_calls_section_end|>`` and
end with ``<|tool_call_end|>``, but K2-Thinking also writes them inside its
reasoning and sometimes without section or end tokens. The call id
(``functions.fn:0``) is kept verbatim: Kimi's template sends it back. A bare
counter id (``0``) names no tool; the tool is then inferred from the argument
keys when exactly one catalog tool fits.

K3 writes every part of a reply as an XTML channel,
``<|open|>NAME<|sep|>…<|close|>NAME<|sep|>``: the answer in ``response``,
reasoning in ``think`` (its opener often in the prompt), calls in ``tools``::

    <|open|>tools<|sep|><|open|>call tool="fn" index="1"<|sep|>
    <|open|>argument key="k" type="string"<|sep|>raw text<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|>

A ``string`` argument is raw text, any other type JSON; attribute values
escape ``&`` and ``"`` as ``&amp;`` and ``&quot;``. Engines tolerate spaces
inside a marker (``<|open|> tools <|sep|>``), and so does the parse.
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
from ..text.sanitize import register_reasoning_delimiters
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

# Kimi K3 XTML. A call's attributes run to ``<|sep|>``, or to the end of a
# reply cut off inside them.
_X_CALL = re.compile(
    r"<\|open\|>\s*call(?=\s|<\|sep\|>)((?:(?!<\|sep\|>)[^\n])*)(<\|sep\|>|\Z)"
)
_X_CALL_END = re.compile(r"<\|close\|>\s*call\s*<\|sep\|>")
_X_ARG = re.compile(r"<\|open\|>\s*argument\s((?:(?!<\|sep\|>)[^\n])*)<\|sep\|>")
_X_ARG_END = re.compile(r"<\|close\|>\s*argument\s*<\|sep\|>")
_X_TOOLS = re.compile(r"<\|(?:open|close)\|>\s*tools\s*<\|sep\|>")
_X_ATTR = re.compile(r'(\w+)="([^"]*)"')
register_reasoning_delimiters(
    "<|open|>think<|sep|>", "<|close|>think<|sep|>", lone_closer=True
)
# Kimi-VL Thinking: its own pair (the "Thinking" name starts the stream inside
# it, so its closer ends the block alone too).
register_reasoning_delimiters("◁think▷", "◁/think▷", lone_closer=True)


def _name_from_id(call_id: str) -> str:
    name = call_id
    if name.startswith("functions."):
        name = name[len("functions.") :]
    head, sep, tail = name.rpartition(":")
    if sep and tail.isdigit():
        name = head
    return name


def _attrs(text: str) -> dict[str, str]:
    return {
        key: value.replace("&quot;", '"').replace("&amp;", "&")
        for key, value in _X_ATTR.findall(text)
    }


def _xtml_arguments(body: str) -> dict[str, Any] | None:
    """The ``argument`` channels of one call; None when one is cut off."""
    args: dict[str, Any] = {}
    opens = list(_X_ARG.finditer(body))
    for index, arg in enumerate(opens):
        limit = opens[index + 1].start() if index + 1 < len(opens) else len(body)
        close = _X_ARG_END.search(body, arg.end(), limit)
        if close is None:
            return None
        attrs = _attrs(arg.group(1))
        value: Any = body[arg.end() : close.start()]
        if attrs.get("type", "string") != "string":
            try:
                value = loads_loose(value.strip())
            except TruncatedJSONError:
                return None
            except LooseJSONError:
                pass  # kept as text, as the engines do; the schema decides
        args[attrs.get("key", "")] = value
    return args


def _xtml_calls(text: str, catalog: Catalog) -> list[Found]:
    """Kimi K3 ``call`` channels; the ``tools`` markers around them are cut."""
    found: list[Found] = []
    opens = list(_X_CALL.finditer(text))
    for index, call in enumerate(opens):
        if too_many(found, text, call.start()):
            break
        limit = opens[index + 1].start() if index + 1 < len(opens) else len(text)
        close = _X_CALL_END.search(text, call.end(), limit) if call.group(2) else None
        end = close.end() if close else limit
        raw = text[call.start() : end]
        name = _attrs(call.group(1)).get("tool", "")
        args = _xtml_arguments(text[call.end() : close.start()]) if close else None
        if args is None:
            result: ToolCall | RejectedCall = RejectedCall(
                name, raw, "call is truncated"
            )
        elif not name:
            result = RejectedCall(name, raw, "the call names no tool")
        else:
            result = make_call(catalog, name, args, raw=raw, coerce=True)
        found.append(Found(call.start(), end, result))
    found += [Found(m.start(), m.end(), None) for m in _X_TOOLS.finditer(text)]
    return found


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
    markers = (
        "<|tool_calls_section_begin|>",
        "<|tool_call_section_begin|>",
        _BEGIN,
        "<|open|>tools<|sep|>",
        "<|open|>call",
    )
    # Every call opens with one (section tokens only count around a call).
    triggers = (_BEGIN, "<|open|>")
    # K3's answer channel and end of turn: neither content nor call.
    dropped = (
        "<|open|>response<|sep|>",
        "<|close|>response<|sep|>",
        "<|close|>message<|sep|>",
    )
    cleans = (_ARGS, *dropped)

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
        if "<|open|>" in text:
            found += _xtml_calls(text, catalog)
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
        return super().sanitize(text.replace(_ARGS, ""))
