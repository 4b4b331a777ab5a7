"""Pythonic calls: ``[f(a=1, b='x'), g()]`` (Llama 3.2/4, LFM2).

Llama 4 may wrap the list in ``<|python_start|>…<|python_end|>`` and LFM2 in
``<|tool_call_start|>…<|tool_call_end|>`` (MiniCPM puts calls one per line in
a ```` ```python ```` fence between those tokens; openPangu v2 a JSON call
list, read here too). Without markers a list only counts
at the start of the reply, or later when every name in it is a catalog tool; a
bare ``name(args)`` counts only when it is the whole reply and names a
catalog tool, so prose like "The GetLiveContext() tool returns…" stays prose.
Values are read as literals only (``reading/pycall.py``); nothing is evaluated.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, override

from ..model import RejectedCall, ToolCall
from ..prompting.render import compact_catalog
from ..reading.calls import (
    Found,
    build_result,
    make_call,
    reply_start,
)
from ..reading.markup import (
    Finder,
    positional_kwargs,
    prefer_outside_reasoning,
    too_many,
)
from ..reading.openers import PYTHON_LIST
from ..reading.pycall import PyCallError, parse_python_calls
from ..reading.pylenient import (
    UnreadableCall,
    lenient_python_calls,
    python_end,
    salvage_python_calls,
)
from ..reading.scan import json_calls_at, skip_ws
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["PythonicDialect", "marked_python_blocks", "python_calls", "python_end"]

_BLOCKS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("<|python_start|>", ("<|python_end|>", "<|eom|>", "<|eot|>")),
    ("<|tool_call_start|>", ("<|tool_call_end|>",)),
)
_BLOCK_TOKENS = tuple(t for opener, closers in _BLOCKS for t in (opener, *closers))
_ANY_BLOCK_TOKEN = re.compile("|".join(map(re.escape, _BLOCK_TOKENS)))
_LIST_START = PYTHON_LIST.full
_FENCE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.S)
_MAX_MIDTEXT_TRIES = 20


# Argument types that are always JSON-safe (the usual call: text and numbers).
_SCALARS = frozenset((str, int, bool, type(None)))
_KEYS = frozenset((str,))


def _plain_arguments(kwargs: dict[str, Any], positional: list[Any]) -> bool:
    """Whether every argument is a scalar ``_json_safe`` accepts, checked
    without a Python-level loop; False only means "look closer"."""
    return (
        _SCALARS.issuperset(map(type, kwargs.values()))
        and _KEYS.issuperset(map(type, kwargs))
        and _SCALARS.issuperset(map(type, positional))
    )


def _json_safe(value: Any) -> bool:
    """Only values JSON can carry: no bytes, complex numbers or infinities."""
    pending = [value]
    while pending:
        item = pending.pop()
        if item is None or isinstance(item, (str, int)):  # bool is an int
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, list):
            if not _SCALARS.issuperset(map(type, item)):
                pending += item  # something in it to look at
        elif isinstance(item, dict):
            if not _KEYS.issuperset(map(type, item)) and not all(
                isinstance(key, str) for key in item
            ):
                return False
            if not _SCALARS.issuperset(map(type, item.values())):
                pending += item.values()
        else:
            return False
    return True


def python_calls(
    catalog: Catalog, source: str, *, raw: str, coerce: bool = False
) -> list[ToolCall | RejectedCall]:
    """Calls from Python call syntax; raises ``PyCallError`` if it is not that.

    Strict (``parse_python_calls``) first; the forgiving reader only when that
    fails; then each call of the list on its own, when at least one of them is
    a readable call to a catalog tool: the unreadable ones are refused with
    their reason and the good ones kept (one slip does not lose the whole list).
    """
    result: list[ToolCall | RejectedCall] = []
    try:
        parsed = parse_python_calls(source)
    except PyCallError:
        try:
            parsed = lenient_python_calls(source)
        except PyCallError as err:
            items = _salvaged(catalog, source)
            if items is None:
                raise err from None
            parsed = []
            for item in items:
                if isinstance(item, UnreadableCall):
                    reason = f"cannot read the call: {item.error}"
                    result.append(RejectedCall(name=item.name, raw=raw, reason=reason))
                else:
                    parsed.append(item)
    result.extend(_read_calls(catalog, parsed, raw=raw, coerce=coerce))
    return result


def _read_calls(
    catalog: Catalog,
    parsed: list[tuple[str, dict[str, Any], list[Any]]],
    *,
    raw: str,
    coerce: bool = False,
) -> list[ToolCall | RejectedCall]:
    """Calls (or refusals) from ``(name, kwargs, positional)`` already read."""
    result: list[ToolCall | RejectedCall] = []
    for name, kwargs, positional in parsed:
        if not _plain_arguments(kwargs, positional) and not _json_safe(
            [kwargs, positional]
        ):
            reason = "argument values must be plain literals (text, numbers, lists)"
            result.append(RejectedCall(name=name, raw=raw, reason=reason))
            continue
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


def _salvaged(
    catalog: Catalog, source: str
) -> list[tuple[str, dict[str, Any], list[Any]] | UnreadableCall] | None:
    """The list call by call, if that keeps a call to a catalog tool; else None."""
    try:
        items = salvage_python_calls(source)
    except PyCallError:
        return None
    good = any(
        not isinstance(item, UnreadableCall) and catalog.resolve(item[0]) is not None
        for item in items
    )
    return items if good else None


def _truncated(raw: str) -> RejectedCall:
    return RejectedCall(name="", raw=raw, reason="the call list is truncated")


def _unreadable(
    catalog: Catalog, raw: str, err: PyCallError
) -> list[ToolCall | RejectedCall]:
    """A leading list that opens with a catalog tool but cannot be read is refused
    with the reason (a number too long, nesting too deep); anything else is prose.
    """
    head = _LIST_START.match(raw)
    name = catalog.resolve(head.group(1)) if head else None
    if name is None:
        return []
    return [RejectedCall(name, raw, f"cannot read the call list: {err}")]


def _code_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _FENCE.finditer(text)] if "`" in text else []


_BODY_FENCE = re.compile(r"\A```[A-Za-z]*[ \t]*\n?(.*?)\n?[ \t]*(?:```)?\Z", re.S)


def _unfenced(body: str) -> str:
    """The code inside a block body written as a fence (MiniCPM: ```python)."""
    if body.startswith("```"):
        match = _BODY_FENCE.match(body)
        if match is not None:
            return match.group(1).strip()
    return body


def _json_body(text: str, start: int, end: int) -> int:
    """Where a block body written as a JSON call object or list starts, or -1."""
    pos = skip_ws(text, start, end)
    first = skip_ws(text, pos + 1, end) if text.startswith("[", pos, end) else pos
    return pos if text.startswith("{", first, end) else -1


def _block_calls(
    catalog: Catalog, text: str, json_span: tuple[int, int], body: str, raw: str
) -> list[ToolCall | RejectedCall] | None:
    """A block's calls: a JSON call list where ``json_span`` starts at one
    (openPangu v2 writes one between LFM2's tokens; the block owns it, so the
    prose reader leaves it alone), else Python calls. None when unreadable."""
    start, end = json_span
    if start >= 0:
        result = json_calls_at(text, start, catalog, limit=end)
        return None if result is None else result[0]
    try:
        return python_calls(catalog, body, raw=raw)
    except PyCallError:
        return None


def marked_python_blocks(
    text: str, catalog: Catalog, blocks: tuple[tuple[str, tuple[str, ...]], ...]
) -> list[Found]:
    """Python calls inside marker blocks (``opener`` … one of its closers).

    The body is a call list, calls one per line, or those in a code fence. An
    empty list is "no calls"; a body that cannot be read is refused (as
    truncated when the block never closes). [] when no block holds a call.
    """
    found: list[Found] = []
    recognized = False
    finder = Finder(text)
    for opener, closers in blocks:
        if opener not in text:
            continue  # the usual reply: no marker, no search remembered
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
            body = _unfenced(text[body_start:end].strip())
            json_at = _json_body(text, body_start, end)
            if body.replace(" ", "") == "[]":
                found.append(Found(pos, end + close_len, None))  # "no calls"
                recognized = True
            elif json_at >= 0 or "(" in body:
                calls = _block_calls(catalog, text, (json_at, end), body, raw)
                if calls is None:
                    reason = (
                        "not a valid call list" if close_len else "call is truncated"
                    )
                    calls = [RejectedCall("", raw, reason)]
                found.extend([Found(pos, end + close_len, c) for c in calls])
                recognized = recognized or bool(calls)
            pos = finder.find(opener, max(end + close_len, body_start))
    return found if recognized else []


class PythonicDialect(Dialect):
    """``[fn(a=1), g()]`` lists, with or without Llama 4 / LFM2 markers."""

    name = "pythonic"
    markers = ("<|python_start|>", "<|tool_call_start|>")
    start_markers = ("[",)
    inline_openers = (PYTHON_LIST,)
    triggers = ("(", "<|python_start|>", "<|tool_call_start|>")
    cleans = tuple(t for opener, closers in _BLOCKS for t in (opener, *closers))

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["<|tool_call_end|>", "<|python_end|>"]

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = marked_python_blocks(text, catalog, _BLOCKS)
        if not found:
            found = self._unmarked(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _unmarked(self, text: str, catalog: Catalog) -> list[Found]:
        start = reply_start(text)
        if start < len(text) and text[start] == "[":
            end = python_end(text, start)
            if end < 0 and _LIST_START.match(text, start):
                # An unescaped quote ("name='Anna's lamp'") confuses the bracket
                # scan; the last "]" of the reply may still close the list.
                last = text.rfind("]", start) + 1
                try:
                    calls = python_calls(
                        catalog, text[start:last], raw=text[start:last]
                    )
                except PyCallError:
                    return [Found(start, len(text), _truncated(text[start:]))]
                return [Found(start, last, c) for c in calls]
            if end < 0:
                return []
            raw = text[start:end]
            try:
                calls = python_calls(catalog, raw, raw=raw)
            except PyCallError as err:
                calls = _unreadable(catalog, raw, err)
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
        code: list[tuple[int, int]] | None = None  # computed on the first candidate
        found: list[Found] = []
        pos = 0
        for _ in range(_MAX_MIDTEXT_TRIES):
            match = _LIST_START.search(text, pos)
            if match is None:
                break
            start = match.start()
            if code is None:
                code = _code_spans(text)
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
            calls = _read_calls(catalog, parsed, raw=text[start:end])
            found.extend([Found(start, end, c) for c in calls])
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
        calls = _read_calls(catalog, parsed, raw=body)
        return [Found(start, start + len(body), c) for c in calls]

    @override
    def sanitize(self, text: str) -> str:
        if "<|" not in text or _ANY_BLOCK_TOKEN.search(text) is None:
            return text  # the usual: no block token to remove
        for token in _BLOCK_TOKENS:
            text = text.replace(token, "")
        return text

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions:\n"
            f"{compact_catalog(catalog)}\n\n"
            "To call functions, reply with only a Python list of calls and nothing "
            "else, for example: [func_a(param='value'), func_b(n=3)]\n"
            "Use keyword arguments with literal values. If no function is needed, "
            "answer normally in plain text."
        )

    @override
    def format_result(self, call: ToolCall, result: Any) -> str:
        body = super().format_result(call, result)
        return body.replace(f"Result of {call.name}:", f"{call.name}() returned:", 1)
