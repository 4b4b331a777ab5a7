"""Fenced code blocks (```lang ... ```): where they are and what they say they hold."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import re

__all__ = ["Fence", "find_fences"]


@dataclass(frozen=True, slots=True)
class Fence:
    """One fenced code block: where it is, its info string and its body."""

    start: int
    end: int
    lang: str
    body_start: int
    body_end: int


# A reply with more fences than this is garbage; later ones are not read.
MAX_FENCES = 256
# "[ \t]*+(?=[`~])": most lines fail on their first character, before the
# alternation (2x faster on a megabyte of short lines). The run and the info
# string are possessive: a line of 64,000 tildes with no newline after it fails
# once, not once per tilde given back (13 s).
_FENCE = re.compile(r"^[ \t]*+(?=[`~])(`{3,}+|~{3,}+)[ \t]*+([^\n`]*+)\n", re.M)


# Fence runs allowed a search for a closer line that is not there (a read to
# the end); after that many, one pass notes where each run's last line is.
_MAX_FAILED_SEARCHES = 1
# Any line that is only a fence run: a closer for an opener of that exact run.
# "[ \t]*+(?=[`~])": most lines fail on their first character, before the
# alternation (2x faster on a megabyte of short lines).
_CLOSER_LINE = re.compile(r"^[ \t]*+(?=[`~])(`{3,}|~{3,})[ \t]*$", re.M)


@lru_cache(maxsize=16)
def _closer(ticks: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*{re.escape(ticks)}[ \t]*$", re.M)


@lru_cache(maxsize=16)
def _glued(ticks: str) -> re.Pattern[str]:
    """A run glued to a body line; a word right after it (```` ```json ````)
    opens another fence, it does not close this one."""
    return re.compile(rf"{re.escape(ticks)}(?!\w)")


class _Closers:
    """Next closer line of each fence run, for a scan that only moves forward.

    A search that finds its line moves the scan past it, so those searches
    cover the text once in all. A search that finds nothing reads to the end,
    and many open fences of different runs would each do that (quadratic);
    so after the first such miss, one pass records each run's last closer
    line, and a run with none ahead is answered without a search.
    """

    __slots__ = ("_failed", "_last", "_memo", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._memo: dict[str, re.Match[str] | None] = {}
        self._failed = 0
        self._last: dict[str, int] | None = None

    def next(self, ticks: str, pos: int) -> re.Match[str] | None:
        """The first line at or after ``pos`` that is exactly ``ticks``."""
        if ticks in self._memo:
            known = self._memo[ticks]
            if known is None or known.start() >= pos:
                return known
        if self._last is None and self._failed >= _MAX_FAILED_SEARCHES:
            self._last = {
                line.group(1): line.start()
                for line in _CLOSER_LINE.finditer(self._text, pos)
            }
        if self._last is not None and self._last.get(ticks, -1) < pos:
            found = None
        else:
            found = _closer(ticks).search(self._text, pos)
            self._failed += found is None
        self._memo[ticks] = found
        return found


def find_fences(text: str) -> list[Fence]:
    """Fenced code blocks; an unclosed fence runs to the end of the text."""
    if "```" not in text and "~~~" not in text:
        return []
    # Cached: a dialect chain looks for fences in one reply once per member.
    return list(_find_fences(text))


@lru_cache(maxsize=8)
def _find_fences(text: str) -> tuple[Fence, ...]:
    fences: list[Fence] = []
    pos = 0
    closers = _Closers(text)
    while len(fences) < MAX_FENCES:
        match = _FENCE.search(text, pos)
        if not match:
            break
        ticks = match.group(1)
        body_start = match.end()
        close = closers.next(ticks, body_start)
        if close is None:
            # Also accept a closer glued to the end of the last body line.
            glued_match = _glued(ticks).search(text, body_start)
            glued = glued_match.start() if glued_match else -1
            if glued < 0:
                fences.append(
                    Fence(
                        match.start(),
                        len(text),
                        match.group(2).strip(),
                        body_start,
                        len(text),
                    )
                )
                break
            fences.append(
                Fence(
                    match.start(),
                    glued + len(ticks),
                    match.group(2).strip(),
                    body_start,
                    glued,
                )
            )
            pos = glued + len(ticks)
            continue
        fences.append(
            Fence(
                match.start(),
                close.end(),
                match.group(2).strip(),
                body_start,
                close.start(),
            )
        )
        pos = close.end()
    return tuple(fences)
