"""Join streamed tool-call fragments into whole calls, inside the backend.

Servers split a call across chunks: the first fragment has the id and name, the
arguments string arrives in arbitrary pieces. Some servers repeat the name in every
fragment or omit ids; both are tolerated here. The backend feeds every fragment
(streamed or not) in and ends its reply with the whole calls on ``Finish``, in
the OpenAI ``tool_calls`` shape, which the native parse reads as it is: nothing
above the backend sees a fragment, and no other step reshapes the calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import ToolCallDelta


@dataclass(slots=True)
class _Partial:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """Collect ToolCallDelta fragments; ``calls()`` gives whole calls by index."""

    __slots__ = ("_calls", "chars")

    def __init__(self) -> None:
        self._calls: dict[int, _Partial] = {}
        self.chars = 0  # names and arguments so far (the reply size limit counts them)

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
        self.chars += len(delta.name or "") + len(delta.arguments or "")

    def calls(self) -> list[dict[str, Any]]:
        """The calls so far in index order, as OpenAI ``tool_calls`` entries.

        ``id`` is None where the server sent none; ``arguments`` is the raw text.
        """
        return [
            {
                "id": c.id,
                "function": {"name": c.name, "arguments": "".join(c.arguments)},
            }
            for _, c in sorted(self._calls.items())
        ]

    def __len__(self) -> int:
        return len(self._calls)
