"""A forgiving reader for Python-style calls that ``ast`` rejects.

Small models write ``HassTurnOn(name='Anna's lamp')`` (an unescaped quote),
put raw newlines or NUL bytes inside strings, or zero-pad numbers
(``month=07``). None of that is valid Python, but the intent is plain. This
reader only runs after the strict ``ast`` path failed, and still accepts only
literals: a quote closes a string only where an argument can end (before
``)`` or ``, name=``), and a string that never closes is truncated, not
guessed.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from .jsonrepair import LooseJSONError, loads_loose
from .pycall import PyCallError, parse_python_calls

__all__ = [
    "UnreadableCall",
    "lenient_python_calls",
    "python_end",
    "salvage_python_calls",
]

_NAME = re.compile(r"\s*([A-Za-z_][\w.]*)\s*\(")
_KEYWORD = re.compile(r"\s*([A-Za-z_]\w*)\s*=(?!=)")
# What may follow a closing quote: the end of the call, or the next argument.
_ARG_END = re.compile(r"\s*(?:\)|,\s*(?:[A-Za-z_]\w*\s*=(?!=)|['\"\[{\d-]|\)))")
# Brackets, complete string literals, or a lone quote (an unterminated string).
# Strict: a string ends on its line, as in Python; lenient: it may run across
# lines (small models put raw newlines inside strings).
_PY_TOKEN = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[()\[\]{}'"]""")
_PY_TOKEN_MULTILINE = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[()\[\]{}'"]""", re.S
)
_OTHER_STOP = re.compile(r"""['"()\[\]{},]""")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)", re.S)
_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "\\": "\\",
    "'": "'",
    '"': '"',
}


def _unescape(text: str) -> str:
    def repl(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xu" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _SIMPLE_ESCAPES.get(code, "\\" + code)

    return _ESCAPE.sub(repl, text) if "\\" in text else text


def _string(src: str, pos: int) -> tuple[str, int]:
    """A quoted value at ``src[pos]``; its closing quote is one an argument can end at."""
    quote = src[pos]
    scan = pos + 1
    while True:
        close = src.find(quote, scan)
        while close > 0 and _escaped(src, close):
            close = src.find(quote, close + 1)
        if close < 0:
            raise PyCallError("a string is never closed")
        if _ARG_END.match(src, close + 1):
            return _unescape(src[pos + 1 : close]), close + 1
        scan = close + 1


def _escaped(src: str, pos: int) -> bool:
    slashes = 0
    while pos - slashes - 1 >= 0 and src[pos - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1


def _other(src: str, pos: int) -> tuple[Any, int]:
    """A non-string value: up to the top-level ``,`` or ``)``."""
    depth = 0
    scan = pos
    while True:
        # Only quotes, brackets and commas matter here: jump to the next one.
        stop = _OTHER_STOP.search(src, scan)
        if stop is None:
            raise PyCallError("the call is never closed")
        scan = stop.start()
        ch = src[scan]
        if ch in "'\"":
            close = src.find(ch, scan + 1)
            while close > 0 and _escaped(src, close):
                close = src.find(ch, close + 1)
            if close < 0:
                raise PyCallError("a string is never closed")
            scan = close + 1
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif ch == "," and depth == 0:
            break
        scan += 1
    raw = src[pos:scan].strip()
    if not raw:
        raise PyCallError("an argument has no value")
    try:
        return parse_python_calls(f"f(x={raw})")[0][1]["x"], scan
    except PyCallError:
        pass
    try:
        return loads_loose(raw), scan
    except LooseJSONError as err:
        raise PyCallError(f"cannot read {raw[:30]!r}: {err}") from err


def _call(src: str, pos: int) -> tuple[tuple[str, dict[str, Any], list[Any]], int]:
    head = _NAME.match(src, pos)
    if head is None:
        raise PyCallError("not a call")
    name = head.group(1)
    if name.endswith(".call"):
        name = name[: -len(".call")]
    pos = head.end()
    kwargs: dict[str, Any] = {}
    positional: list[Any] = []
    while True:
        while pos < len(src) and src[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(src):
            raise PyCallError("the call is never closed")
        if src[pos] == ")":
            return (name, kwargs, positional), pos + 1
        key_match = _KEYWORD.match(src, pos)
        key = None
        if key_match is not None:
            key, pos = key_match.group(1), key_match.end()
            while pos < len(src) and src[pos] in " \t":
                pos += 1
        if pos < len(src) and src[pos] in "'\"":
            value, pos = _string(src, pos)
        else:
            value, pos = _other(src, pos)
        if key is None:
            positional.append(value)
        else:
            kwargs[key] = value


def lenient_python_calls(source: str) -> list[tuple[str, dict[str, Any], list[Any]]]:
    """Like ``pycall.parse_python_calls`` for ``f(...)`` or ``[f(...), g(...)]``
    with the slips small models make. Raises ``PyCallError``.
    """
    src = source.strip()
    if len(src) > 100_000:
        raise PyCallError("oversized")
    if src.startswith("[") and src.endswith("]"):
        src = src[1:-1]
    calls = []
    pos = 0
    while True:
        while pos < len(src) and src[pos] in " \t\r\n,;":
            pos += 1
        if pos >= len(src):
            break
        call, pos = _call(src, pos)
        calls.append(call)
    if not calls:
        raise PyCallError("no call")
    return calls


class UnreadableCall(NamedTuple):
    """A call in a list that could not be read, and why."""

    name: str
    error: PyCallError


def salvage_python_calls(
    source: str,
) -> list[tuple[str, dict[str, Any], list[Any]] | UnreadableCall]:
    """Each call of a ``[f(...), g(...)]`` list read on its own.

    For a list the other readers refuse whole: a call that cannot be read
    becomes an ``UnreadableCall`` and the scan goes on after its closing ``)``,
    so one slip (``name=porch light``) does not lose the good calls. Raises
    ``PyCallError`` when the list's shape itself cannot be followed.
    """
    src = source.strip()
    if len(src) > 100_000:
        raise PyCallError("oversized")
    if src.startswith("[") and src.endswith("]"):
        src = src[1:-1]
    calls: list[tuple[str, dict[str, Any], list[Any]] | UnreadableCall] = []
    pos = 0
    while True:
        while pos < len(src) and src[pos] in " \t\r\n,;":
            pos += 1
        if pos >= len(src):
            break
        head = _NAME.match(src, pos)
        if head is None:
            raise PyCallError("not a call")
        end = python_end(src, head.end() - 1, len(src), multiline=True)
        if end < 0:
            raise PyCallError("the call is never closed")
        try:
            strict = parse_python_calls(src[pos:end])
        except PyCallError:
            try:
                call, _ = _call(src[pos:end], 0)
            except PyCallError as err:
                calls.append(UnreadableCall(head.group(1), err))
            else:
                calls.append(call)
        else:
            calls.extend(strict)
        pos = end
    return calls


def python_end(
    text: str, start: int, limit: int = 65_536, *, multiline: bool = False
) -> int:
    """Index just past the bracket that closes ``text[start]``; -1 if never closed.

    Quoted strings (with escapes) are skipped, so brackets inside them do not
    count; a string that never closes (by the end of its line, unless
    ``multiline``, or of the text) means "never closed". A call list longer
    than ``limit`` characters counts as never closed. The one bracket scanner
    of the pythonic dialect and of the salvage reader here.
    """
    tokens = _PY_TOKEN_MULTILINE if multiline else _PY_TOKEN
    depth = 0
    for token in tokens.finditer(text, start, start + limit):
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
