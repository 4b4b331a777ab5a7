"""Numbers as models write them: one linear pattern, and integers Python can hold.

The pattern used to be ``\\d+\\.?\\d*``: with the dot optional, a run of digits
splits between the two ``\\d`` in every possible way, so a ``fullmatch`` on
20 kB of digits followed by a letter backtracked for seconds. Here the fraction
is one optional group and every run is possessive: a digit run is read once
and never given back, since no shorter reading can ever match.

Python refuses to turn a string of more than ``sys.get_int_max_str_digits()``
digits (4300 by default) into an ``int``. No tool argument is that long, so such
a literal is refused with a reason (``NumberTooLongError``) rather than guessed
at; the process-wide limit is left alone.
"""

from __future__ import annotations

import re
import sys

__all__ = ["NUMBER", "NumberTooLongError", "int_fits", "read_number"]

NUMBER = re.compile(r"[-+]?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d++)?")
_INTEGER = re.compile(r"[-+]?\d++")


class NumberTooLongError(ValueError):
    """An integer literal with more digits than Python converts."""


def read_number(word: str) -> int | float | None:
    """The ``int`` or ``float`` that ``word`` spells, or None when it is no number.

    Raises ``NumberTooLongError`` for an integer beyond the int-string limit.
    """
    if not NUMBER.fullmatch(word):
        return None
    if not _INTEGER.fullmatch(word):
        return float(word)
    limit = sys.get_int_max_str_digits()
    digits = len(word.lstrip("+-"))
    if limit and digits > limit:
        raise NumberTooLongError(f"a number has {digits} digits (at most {limit})")
    return int(word)


def int_fits(value: int) -> bool:
    """True when ``str(value)`` works (``ast`` builds hex literals of any size)."""
    limit = sys.get_int_max_str_digits()
    return not limit or value.bit_length() * 0.30103 < limit - 1
