"""Loose JSON: read what small models write, refuse what generation cut short.

The ladder is strict ``json`` first (fast, C), then our own tolerant parser for
the slips models make (single quotes, trailing commas, unquoted keys, bareword
values, Python literals, one missing or extra closing brace, missing commas
between items), then ``json5`` for the rest, in small doses (it is pure Python
and slow). A value that stops in the middle (an open string, a dangling ``:``)
is truncated, never repaired: dispatching a guess would be worse than reporting
the failure. A value nested deeper than ``MAX_DEPTH`` or holding an integer
Python cannot convert is refused with that reason by every rung, strict
``json`` included.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import json
import re
from typing import Any

import json5

from .memo import memoized
from .numbers import NumberTooLongError, read_number
from .reply import JSON5_LIMIT, close_reply, current_reply, open_reply

__all__ = [
    "TOO_DEEP",
    "LooseJSONError",
    "TruncatedJSONError",
    "bracket_end",
    "decode_arguments",
    "find_json_end",
    "json5_budget",
    "loads_loose",
    "scan_json",
    "skip_stray_closer",
    "strict_json_at",
    "try_loads_loose",
]


class LooseJSONError(ValueError):
    """The text is not JSON, even with the repairs we allow."""


class TruncatedJSONError(LooseJSONError):
    """The text stops in the middle of a value; it must not be dispatched."""


class _RefusedError(LooseJSONError):
    """Readable, but not what a call may carry; no later rung is tried."""


# Tool-call JSON is shallow; deeper nesting is garbage (or an attack).
MAX_DEPTH = 64
# Each level takes an opener and a closer: a value this short cannot nest too deep.
_SHALLOW_CHARS = 2 * MAX_DEPTH
_WS_RE = re.compile(r"[ \t\r\n]*")
_SPACES_RE = re.compile(r" *")
_BLANKS_RE = re.compile(r"[ \t]*")
_BARE_RE = re.compile(r"[^,:\]}\n\r\t ]*")


def _run_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where the run of ``pattern`` (a starred class: it always matches) at ``pos`` ends."""
    match = pattern.match(text, pos)
    return match.end() if match else pos


_DQ_STOP = re.compile(r'["\\]')
_SQ_STOP = re.compile(r"['\\]")
_STRUCT = re.compile(r"[{}\[\]\"']")
_VALUE_START = frozenset("{[,:")
_JSON5_ONLY = re.compile(r"//|/\*|0[xX][0-9a-fA-F]|Infinity|NaN|\\\n")
_WS = " \t\r\n"
_CLOSER = {"{": "}", "[": "]"}
_LITERALS = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}
_ESCAPES = {
    '"': '"',
    "'": "'",
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


class _Lenient:
    """A forgiving recursive-descent reader; one instance per text."""

    __slots__ = ("closers_added", "depth", "pos", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.closers_added = 0
        self.depth = 0

    def ws(self) -> None:
        self.pos = _run_end(_WS_RE, self.text, self.pos)

    def value(self) -> Any:
        self.ws()
        if self.pos >= len(self.text):
            raise TruncatedJSONError("text ends where a value should start")
        ch = self.text[self.pos]
        if ch == "{":
            return self.container("{")
        if ch == "[":
            return self.container("[")
        if ch in "\"'":
            return self.string()
        return self.bare()

    def container(self, opener: str) -> Any:
        closer = _CLOSER[opener]
        self.pos += 1
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _RefusedError(f"nested deeper than {MAX_DEPTH} levels")
        result: Any = {} if opener == "{" else []
        expect_item = True
        while True:
            self.ws()
            if self.pos >= len(self.text):
                # One missing closer is a slip; only allowed right after a
                # complete item, never after an opener, comma or colon.
                if expect_item:
                    raise TruncatedJSONError("text ends where an item should be")
                self.closers_added += 1
                self.depth -= 1
                return result
            ch = self.text[self.pos]
            if ch == closer:
                self.pos += 1
                self.depth -= 1
                return result
            if ch in "]}":
                # Wrong closer: treat as our closer missing (counts as repair).
                self.closers_added += 1
                self.depth -= 1
                return result
            if ch == ",":
                self.pos += 1
                expect_item = True
                continue
            # A missing comma between items is tolerated.
            if opener == "{":
                key = self.key()
                self.ws()
                if self.pos >= len(self.text):
                    raise TruncatedJSONError("text ends after a key")
                if self.text[self.pos] not in ":=":
                    raise LooseJSONError(f"expected ':' after key {key!r}")
                self.pos += 1
                self.ws()
                if self.pos >= len(self.text):
                    raise TruncatedJSONError("text ends after ':'")
                result[key] = self.value()
            else:
                result.append(self.value())
            expect_item = False

    def key(self) -> str:
        ch = self.text[self.pos]
        if ch in "\"'":
            return self.string()
        start = self.pos
        text, n = self.text, len(self.text)
        while self.pos < n and (text[self.pos].isalnum() or text[self.pos] in "_-$."):
            self.pos += 1
        if self.pos == start:
            raise LooseJSONError(f"unexpected {ch!r} where a key should be")
        return text[start : self.pos]

    def string(self) -> str:
        text = self.text
        quote = text[self.pos]
        stop = _DQ_STOP if quote == '"' else _SQ_STOP
        pos = self.pos + 1
        parts: list[str] = []
        while True:
            match = stop.search(text, pos)
            if match is None:
                raise TruncatedJSONError("string is never closed")
            idx = match.start()
            parts.append(text[pos:idx])
            if text[idx] == quote:
                self.pos = idx + 1
                return "".join(parts)
            # A backslash escape.
            if idx + 1 >= len(text):
                raise TruncatedJSONError("string is never closed")
            esc = text[idx + 1]
            if esc == "u" and idx + 6 <= len(text):
                try:
                    parts.append(chr(int(text[idx + 2 : idx + 6], 16)))
                except ValueError:
                    parts.append(text[idx : idx + 6])
                pos = idx + 6
            else:
                parts.append(_ESCAPES.get(esc, "\\" + esc))
                pos = idx + 2

    def bare(self) -> Any:
        text, n = self.text, len(self.text)
        start = self.pos
        pos = _run_end(_BARE_RE, text, start)
        word = text[start:pos]
        if not word:
            raise LooseJSONError(f"unexpected {text[start]!r}")
        # A bareword running into the end of the text may be cut short,
        # unless it is the whole (top-level) value.
        if pos >= n and self.depth:
            raise TruncatedJSONError("text ends inside a value")
        self.pos = pos
        if word in _LITERALS:
            return _LITERALS[word]
        try:
            number = read_number(word)
        except NumberTooLongError as err:
            raise _RefusedError(str(err)) from None
        if number is not None:
            return number
        if not self.depth:
            raise LooseJSONError(f"bare word {word!r} is not a JSON value")
        if word[0] in "{[" or any(c in word for c in "\"'"):
            raise LooseJSONError(f"cannot read {word!r}")
        # Bareword values: allow words separated by spaces up to a delimiter.
        while pos < n and text[pos] == " ":
            nxt = _run_end(_SPACES_RE, text, pos)
            if nxt >= n or text[nxt] in ",:]}\n":
                break
            end = _run_end(_BARE_RE, text, nxt)
            if end >= n and self.depth:
                raise TruncatedJSONError("text ends inside a value")
            pos = end
        self.pos = pos
        return text[start:pos]


def _lenient(text: str) -> Any:
    reader = _Lenient(text)
    value = reader.value()
    reader.ws()
    rest = text[reader.pos :].strip()
    extra = 0
    if rest:
        if set(rest) <= set("]}") and len(rest) == 1:
            extra = 1
        else:
            raise LooseJSONError(f"unexpected text after the value: {rest[:20]!r}")
    if reader.closers_added + extra > 1:
        raise LooseJSONError("more than one brace or bracket is unbalanced")
    return value


def loads_loose(text: str) -> Any:
    """Parse ``text`` as JSON, repairing the slips models make.

    Raises ``TruncatedJSONError`` when the text was cut off mid-value and
    ``LooseJSONError`` when it cannot be read at all.
    """
    try:
        value = _strict_loads(text) if type(text) is str else json.loads(text)
    except (ValueError, TypeError, RecursionError):
        pass
    else:
        if len(text) <= _SHALLOW_CHARS or not isinstance(value, (dict, list)):
            return value
        return _shallow(value, text)
    stripped = text.strip()
    if not stripped:
        raise LooseJSONError("empty text")
    try:
        return _lenient(stripped)
    except (TruncatedJSONError, _RefusedError):
        raise
    except (LooseJSONError, RecursionError):
        pass
    # json5 only adds comments, hex numbers, Infinity/NaN and line
    # continuations over the steps above.
    if not _JSON5_ONLY.search(stripped):
        raise LooseJSONError("not JSON, even with repairs")
    _spend_json5(len(stripped))
    try:
        value = json5.loads(stripped)
    except Exception as err:
        raise LooseJSONError(f"not JSON: {err}") from None
    return _shallow(value, stripped)


def _shallow(value: Any, text: str, start: int = 0, end: int | None = None) -> Any:
    """``value`` (read from ``text[start:end]``), unless it nests deeper than
    ``MAX_DEPTH`` (checked without recursion)."""
    if not isinstance(value, (dict, list)):
        return value
    if (len(text) if end is None else end) - start <= _SHALLOW_CHARS or (
        text.count("[", start, end) + text.count("{", start, end) <= MAX_DEPTH
    ):
        return value
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= MAX_DEPTH:
                    raise _RefusedError(f"nested deeper than {MAX_DEPTH} levels")
                stack.append((child, depth + 1))
    return value


def _spend_json5(size: int) -> None:
    """Charge ``size`` characters of json5 work; refuse what is over the limits."""
    if size > JSON5_LIMIT:
        raise LooseJSONError(f"not JSON, even with repairs ({size} characters)")
    reply = current_reply()
    if reply is None:
        return
    if size > reply.json5_left:
        raise LooseJSONError("not JSON, even with repairs (json5 budget spent)")
    reply.json5_left -= size


@contextmanager
def json5_budget(chars: int = JSON5_LIMIT) -> Iterator[None]:
    """One json5 budget of ``chars`` for every ``loads_loose`` in the block
    (the open reply's, when one is open: nothing changes then)."""
    token = open_reply(chars)
    try:
        yield
    finally:
        close_reply(token)


def try_loads_loose(text: str, default: Any = None) -> Any:
    """``loads_loose`` that returns ``default`` instead of raising."""
    try:
        return loads_loose(text)
    except LooseJSONError:
        return default


# The standard library's C scanner. ``json.loads`` wraps it in three Python
# calls and two regex matches per read; a reply may hold several values.
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _strict_loads(text: str) -> Any:
    """``json.loads(text)`` for a ``str``: the value of the whole text (JSON's
    blanks around it allowed), else ``ValueError``."""
    start = _run_end(_WS_RE, text, 0) if text and text[0] in " \t\n\r" else 0
    try:
        value, end = _SCAN(text, start)
    except StopIteration:
        raise ValueError("Expecting value") from None
    if end != len(text) and _run_end(_WS_RE, text, end) != len(text):
        raise ValueError("Extra data")
    return value


@memoized
def strict_json_at(text: str, start: int) -> tuple[Any, int] | None:
    """``(value, end)`` of the strictly valid JSON value at ``text[start]``, else None.

    One C-level read: the common case (a model that writes valid JSON) needs
    neither the bracket scan nor the repairs. None also for a value the
    ladder refuses (nested deeper than ``MAX_DEPTH``): the ladder says why.
    Read once per reply however many dialects of a chain ask (``memo``).
    """
    try:
        value, end = _SCAN(text, start)
    except (StopIteration, ValueError, RecursionError):
        return None
    if end - start <= _SHALLOW_CHARS or not isinstance(value, (dict, list)):
        return value, end
    try:
        return _shallow(value, text, start, end), end
    except LooseJSONError:
        return None


def find_json_end(text: str, start: int, limit: int | None = None) -> int:
    """Index just past the balanced object/array opening at ``text[start]``.

    Strings (double-quoted, and single-quoted where a value or key may begin)
    and escapes are respected, so braces or a ``</tool_call>`` inside a string
    do not end the value. Returns -1 when the value is never closed before
    ``limit`` (default: end of text) or nests deeper than ``MAX_DEPTH``.
    Jumps between interesting characters with C-level searches, so long
    strings and prose cost almost nothing.
    """
    end = len(text) if limit is None else min(limit, len(text))
    if start < end and text[start] in "{[":
        strict = strict_json_at(text, start)
        if strict is not None and strict[1] <= end:
            return strict[1]
    return max(bracket_end(text, start, end), -1)


# What ``bracket_end`` answers for brackets nested deeper than ``MAX_DEPTH``.
TOO_DEEP = -2


def bracket_end(text: str, start: int, end: int) -> int:
    """``find_json_end`` for a value ``strict_json_at`` could not read before
    ``end`` (``end`` at most ``len(text)``): the bracket scan alone, and
    ``TOO_DEEP`` (not -1) when the brackets nest deeper than ``MAX_DEPTH``
    before they close: every rung would refuse that value."""
    return _find_end(text, start, end)


@memoized  # a value that is not strict JSON is scanned once per reply, not per member
def _find_end(text: str, start: int, end: int) -> int:
    depth = 0
    pos = start
    while True:
        match = _STRUCT.search(text, pos, end)
        if match is None:
            return -1
        idx = match.start()
        ch = text[idx]
        if ch == '"' or ch == "'":
            if ch == "'" and _prev_significant(text, idx, start) not in _VALUE_START:
                pos = idx + 1
                continue
            stop = _DQ_STOP if ch == '"' else _SQ_STOP
            close = idx + 1
            while True:
                found = stop.search(text, close, end)
                if found is None:
                    return -1
                if text[found.start()] == "\\":
                    close = found.start() + 2
                    continue
                break
            pos = found.start() + 1
            continue
        if ch in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                return TOO_DEEP
        else:
            depth -= 1
            if depth == 0:
                return idx + 1
        pos = idx + 1


def _prev_significant(text: str, idx: int, floor: int) -> str:
    """The last non-whitespace character before ``idx`` (not before ``floor``)."""
    pos = idx - 1
    while pos >= floor and text[pos] in _WS:
        pos -= 1
    return text[pos] if pos >= floor else ""


def scan_json(text: str, start: int) -> tuple[Any, int]:
    """Read the object/array that opens at ``text[start]``.

    Returns ``(value, end)`` with ``end`` just past its closing character.
    When the value is never closed, the rest of the text is tried with the
    one-missing-closer repair and ``end`` is ``len(text)``. Raises
    ``LooseJSONError`` (``TruncatedJSONError`` when cut off mid-value).
    """
    if start >= len(text) or text[start] not in "{[":
        raise LooseJSONError("no object or array here")
    end = find_json_end(text, start)
    if end < 0:
        return loads_loose(text[start:].rstrip()), len(text)
    return loads_loose(text[start:end]), end


def skip_stray_closer(text: str, end: int) -> int:
    """Step over one stray ``}``/``]`` (and spaces) that follows a value."""
    pos = end
    if pos < len(text) and text[pos] in " \t":
        pos = _BLANKS_RE.match(text, pos).end()  # type: ignore[union-attr]
    if pos < len(text) and text[pos] in "}]":
        return pos + 1
    return end


def decode_arguments(value: Any) -> dict[str, Any]:
    """Arguments as a dict: objects pass, a JSON string is decoded exactly once.

    Raises ``LooseJSONError`` when the arguments are not an object.
    """
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        if not value.strip():
            return {}
        decoded = loads_loose(value)
        if isinstance(decoded, dict):
            return decoded
        raise LooseJSONError("arguments are not a JSON object")
    raise LooseJSONError(f"arguments are a {type(value).__name__}, not an object")
