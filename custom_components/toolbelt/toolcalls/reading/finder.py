"""``str.find`` for a scan that moves forward, in linear total time.

Loops that look for the next opener or closer after every block are quadratic
on adversarial input (a megabyte of openers and no closer: every search runs
to the end). Remembering each token's next position keeps them linear.
"""

from __future__ import annotations

__all__ = ["Finder"]


class Finder:
    """``text.find(token, pos)`` that reuses the last answer for each token.

    An answer found from ``p`` holds for any later ``pos`` up to it; "none
    after ``p``" holds for every later ``pos``. Any ``pos`` is correct; only
    growing ones are cheap.
    """

    __slots__ = ("_seen", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._seen: dict[str, tuple[int, int]] = {}

    def find(self, token: str, pos: int = 0, end: int | None = None) -> int:
        """First index of ``token`` at or after ``pos`` (ending by ``end``), or -1."""
        seen = self._seen.get(token)
        if seen is not None and seen[0] <= pos and (seen[1] < 0 or seen[1] >= pos):
            idx = seen[1]
        else:
            idx = self.text.find(token, pos)
            self._seen[token] = (pos, idx)
        if idx >= 0 and end is not None and idx + len(token) > end:
            return -1
        return idx
