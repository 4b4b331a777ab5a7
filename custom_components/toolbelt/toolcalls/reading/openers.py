"""Call openings a parser reads anywhere in prose, with no marker before them.

One definition serves both sides. A parser searches the reply for ``full``
(a Python call list ``[HassTurnOn(``, a call object ``{"name":``). The
streaming detector, from an opener's first character on, holds the text while
it still fullmatches ``partial`` (it may yet become ``full``) and, once
``full`` matches, holds the rest of the reply for the final parse: so nothing
a parser reads as a call is ever spoken, and ordinary brackets (``[1]``,
``["kitchen"]``, ``{b}``, ``[the docs]``) are held only until the next
character or word rules a call out. A dialect lists the openers its parse reads in
``Dialect.inline_openers``; the detector watches those of every dialect.
"""

from __future__ import annotations

from dataclasses import dataclass
import re

__all__ = ["JSON_CALL", "PYTHON_LIST", "InlineOpener"]


@dataclass(frozen=True, slots=True)
class InlineOpener:
    """A marker-less call opening: what parses it, and what may still become it.

    ``partial`` must fullmatch every proper prefix of a ``full`` match (a test
    checks it over random text); matching a little more only holds longer.
    ``first``: the characters a ``full`` match can begin with.
    """

    full: re.Pattern[str]
    partial: re.Pattern[str]
    first: str


def _prefix_of(literal: str, then: str = "") -> str:
    """A pattern for any prefix of ``literal`` (empty too); ``then`` may follow
    the whole of it."""
    pattern = then
    for char in reversed(literal):
        pattern = f"(?:{re.escape(char)}{pattern})?"
    return pattern


_WS = r"[ \t\r\n]*"
_NAME = _prefix_of('name"', r"[ \t]*")
_FUNCTION = _prefix_of('function"', r"[ \t]*")

# A call object, or a list that opens with one (``scan.prose_json_calls``).
JSON_CALL = InlineOpener(
    full=re.compile(rf'(?:\[{_WS})?\{{{_WS}"(?:name|function)"[ \t]*:'),
    partial=re.compile(rf'(?:\[{_WS})?(?:\{{{_WS}(?:"(?:{_NAME}|{_FUNCTION}))?)?'),
    first="[{",
)

# A Python call list (``dialects/pythonic.py``).
PYTHON_LIST = InlineOpener(
    full=re.compile(r"\[\s*([A-Za-z_][\w.]*)\s*\("),
    partial=re.compile(r"\[\s*(?:[A-Za-z_][\w.]*\s*)?"),
    first="[",
)
