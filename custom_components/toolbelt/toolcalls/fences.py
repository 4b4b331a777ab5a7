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
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\n`]*)\n", re.M)


@lru_cache(maxsize=16)
def _closer(ticks: str) -> re.Pattern[str]:
    return re.compile(rf"^[ \t]*{re.escape(ticks)}[ \t]*$", re.M)


def find_fences(text: str) -> list[Fence]:
    """Fenced code blocks; an unclosed fence runs to the end of the text."""
    fences: list[Fence] = []
    if "```" not in text and "~~~" not in text:
        return fences
    pos = 0
    memo: dict[str, re.Match[str] | int] = {}
    while len(fences) < MAX_FENCES:
        match = _FENCE.search(text, pos)
        if not match:
            break
        ticks = match.group(1)
        body_start = match.end()
        # Memo per fence style: a closer found (or not) from an earlier
        # offset answers later searches too, keeping this linear.
        known = memo.get(ticks)
        if known is None or (known != -1 and known.start() < body_start):
            known = _closer(ticks).search(text, body_start) or -1
            memo[ticks] = known
        close = None if known == -1 else known
        if close is None:
            # Also accept a closer glued to the end of the last body line.
            glued = text.find(ticks, body_start)
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
                return fences
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
    return fences
