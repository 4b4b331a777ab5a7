"""Pythonic calls: ``[f(a=1, b='x'), g()]`` (Llama 3.2/4, LFM2).

Llama 4 may wrap the list in ``<|python_start|>…<|python_end|>`` and LFM2 in
``<|tool_call_start|>…<|tool_call_end|>``. Without markers a list only counts
at the start of the reply, or later when every name in it is a catalog tool; a
bare ``name(args)`` counts only when it is the whole reply and names a
catalog tool, so prose like "The GetLiveContext() tool returns…" stays prose.
Values are read with ``ast`` (literals only); nothing is evaluated.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from custom_components.toolbelt.toolcalls.calls import (
    Found,
    build_result,
    make_call,
    reply_start,
)
from custom_components.toolbelt.toolcalls.dialects._markup import (
    Finder,
    positional_kwargs,
    prefer_outside_reasoning,
    too_many,
)
from custom_components.toolbelt.toolcalls.dialects.base import Dialect
from custom_components.toolbelt.toolcalls.model import RejectedCall, ToolCall
from custom_components.toolbelt.toolcalls.prompting import compact_catalog
from custom_components.toolbelt.toolcalls.pycall import PyCallError, parse_python_calls

if TYPE_CHECKING:
    from custom_components.toolbelt.toolcalls.catalog import Catalog
    from custom_components.toolbelt.toolcalls.model import ParseResult

__all__ = ["PythonicDialect", "python_calls", "python_end"]

_BLOCKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("<|python_start|>", ("<|python_end|>", "<|eom|>", "<|eot|>")),
    ("<|tool_call_start|>", ("<|tool_call_end|>",)),
)
_LIST_START = re.compile(r"\[\s*[A-Za-z_][\w.]*\s*\(")
_FENCE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_MAX_MIDTEXT_TRIES = 20
# Brackets, complete string literals, or a lone quote (an unterminated string).
_PY_TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[()\[\]{}'"]""")


def python_end(text: str, start: int) -> int:
    """Index just past the bracket that closes ``text[start]``; -1 if never closed.

    Quoted strings (with escapes) are skipped, so brackets inside them do not
    count; a string that runs past its line or the text means "never closed".
    """
    depth = 0
    for token in _PY_TOKEN.finditer(text, start):
        kind = token.group(0)
        if kind in "([{":
            depth += 1
        elif kind in ")]}":
            depth -= 1
            if depth == 0:
                return token.end()
            if depth < 0:
                return -1
        elif len(kind) == 1:  # a quote that never closes
            return -1
    return -1


def python_calls(
    catalog: Catalog, source: str, *, raw: str, coerce: bool = False
) -> list[ToolCall | RejectedCall]:
    """Calls from Python call syntax; raises ``PyCallError`` if it is not that."""
    result: list[ToolCall | RejectedCall] = []
    for name, kwargs, positional in parse_python_calls(source):
        args = positional_kwargs(catalog, name, kwargs, positional)
        if args is None:
            result.append(
                RejectedCall(
                    name=name, raw=raw, reason="positional arguments do not fit"
                )
            )
            continue
        result.append(make_call(catalog, name, args, raw=raw, coerce=coerce))
    return result


def _truncated(raw: str) -> RejectedCall:
    return RejectedCall(name="", raw=raw, reason="the call list is truncated")


def _code_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _FENCE.finditer(text)] if "`" in text else []


class PythonicDialect(Dialect):
    """``[fn(a=1), g()]`` lists, with or without Llama 4 / LFM2 markers."""

    name = "pythonic"
    markers = ("<|python_start|>", "<|tool_call_start|>")
    start_markers = ("[",)
    triggers = ("(",)

    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = self._marked(text, catalog)
        if not found:
            found = self._unmarked(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _marked(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        finder = Finder(text)
        for opener, closers in _BLOCKS:
            pos = finder.find(opener)
            while pos >= 0:
                if too_many(found, text, pos):
                    break
                body_start = pos + len(opener)
                end, close_len = len(text), 0
                nxt = finder.find(opener, body_start)
                if nxt >= 0:
                    end = nxt  # an unclosed block ends where the next one starts
                for closer in closers:
                    idx = finder.find(closer, body_start)
                    if idx >= 0 and idx < end:
                        end, close_len = idx, len(closer)
                raw = text[pos : end + close_len]
                body = text[body_start:end].strip()
                calls: list[ToolCall | RejectedCall] = []
                if body:
                    try:
                        calls = python_calls(catalog, body, raw=raw)
                    except PyCallError:
                        calls = [_truncated(raw)] if close_len == 0 else []
                if calls:
                    found.extend(Found(pos, end + close_len, c) for c in calls)
                else:
                    found.append(Found(pos, end + close_len, None))
                pos = finder.find(opener, max(end + close_len, body_start))
        return found if any(f.call is not None for f in found) else []

    def _unmarked(self, text: str, catalog: Catalog) -> list[Found]:
        start = reply_start(text)
        if start < len(text) and text[start] == "[":
            end = python_end(text, start)
            if end < 0:
                if _LIST_START.match(text, start):
                    return [Found(start, len(text), _truncated(text[start:]))]
                return []
            try:
                calls = python_calls(catalog, text[start:end], raw=text[start:end])
            except PyCallError:
                calls = []
            if calls:
                return [Found(start, end, c) for c in calls]
        found = self._midtext(text, catalog)
        if found:
            return found
        return self._whole_reply_call(text, catalog, start)

    def _midtext(self, text: str, catalog: Catalog) -> list[Found]:
        """Lists later in the reply: every name must be a catalog tool."""
        if "[" not in text:
            return []
        code = _code_spans(text)
        found: list[Found] = []
        pos = 0
        for _ in range(_MAX_MIDTEXT_TRIES):
            match = _LIST_START.search(text, pos)
            if match is None:
                break
            start = match.start()
            if any(s <= start < e for s, e in code):
                pos = match.end()
                continue
            end = python_end(text, start)
            if end < 0:
                break
            pos = end
            try:
                parsed = parse_python_calls(text[start:end])
            except PyCallError:
                continue
            if not parsed or any(catalog.resolve(n) is None for n, _, _ in parsed):
                continue
            calls = python_calls(catalog, text[start:end], raw=text[start:end])
            found.extend(Found(start, end, c) for c in calls)
        return found

    def _whole_reply_call(self, text: str, catalog: Catalog, start: int) -> list[Found]:
        """``name(args)`` with no brackets: only as the entire reply."""
        body = text[start:].rstrip()
        if (
            not body
            or not (body[0].isalpha() or body[0] == "_")
            or not body.endswith(")")
        ):
            return []
        try:
            parsed = parse_python_calls(body)
        except PyCallError:
            return []
        if not parsed or any(catalog.resolve(n) is None for n, _, _ in parsed):
            return []
        calls = python_calls(catalog, body, raw=body)
        return [Found(start, start + len(body), c) for c in calls]

    def sanitize(self, text: str) -> str:
        for opener, closers in _BLOCKS:
            for token in (opener, *closers):
                text = text.replace(token, "")
        return text

    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions:\n"
            f"{compact_catalog(catalog)}\n\n"
            "To call functions, reply with only a Python list of calls and nothing "
            "else, for example: [func_a(param='value'), func_b(n=3)]\n"
            "Use keyword arguments with literal values. If no function is needed, "
            "answer normally in plain text."
        )

    def format_result(self, call: ToolCall, result: Any) -> str:
        body = super().format_result(call, result)
        return body.replace(f"Result of {call.name}:", f"{call.name}() returned:", 1)
