"""Fenced code blocks (```lang ... ```): where they are and what they say they hold."""

from __future__ import annotations

from dataclasses import dataclass
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


_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\n`]*)\n", re.M)


def find_fences(text: str) -> list[Fence]:
    """Fenced code blocks; an unclosed fence runs to the end of the text."""
    fences: list[Fence] = []
    if "```" not in text and "~~~" not in text:
        return fences
    pos = 0
    while True:
        match = _FENCE.search(text, pos)
        if not match:
            return fences
        ticks = match.group(1)
        body_start = match.end()
        close = re.compile(rf"^[ \t]*{re.escape(ticks)}[ \t]*$", re.M).search(
            text, body_start
        )
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
