"""Join streamed tool-call fragments into whole calls.

Servers split a call across chunks: the first fragment has the id and name, the
arguments string arrives in arbitrary pieces. Some servers repeat the name in every
fragment or omit ids; both are tolerated here so the loop sees one shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .base import ToolCallDelta


@dataclass(slots=True)
class _Partial:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """Collect ToolCallDelta fragments; `calls()` gives (id, name, arguments) by index."""

    __slots__ = ("_calls",)

    def __init__(self) -> None:
        self._calls: dict[int, _Partial] = {}

    def add(self, delta: ToolCallDelta) -> None:
        """Merge one fragment into the call at its index."""
        call = self._calls.get(delta.index)
        if call is None:
            call = self._calls[delta.index] = _Partial()
        if delta.id and call.id is None:
            call.id = delta.id
        if delta.name and delta.name != call.name:
            # A repeated full name is ignored; a name sent in pieces is joined.
            call.name += delta.name
        if delta.arguments:
            call.arguments.append(delta.arguments)

    def calls(self) -> list[tuple[str | None, str, str]]:
        """The calls so far in index order: (id or None, name, raw arguments text)."""
        return [
            (c.id, c.name, "".join(c.arguments)) for _, c in sorted(self._calls.items())
        ]

    def __len__(self) -> int:
        return len(self._calls)
