"""The executor protocol: how the loop runs a tool without knowing who owns it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..toolcalls.model import ToolCall


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A tool's answer; ``failed`` when the tool itself says the call failed.

    ``answer``: the tool takes control and this text is the turn's answer (a
    hand-off returns the other agent's reply); the loop then asks no model.
    """

    data: Any
    failed: bool = False
    answer: str | None = None


class Executor(Protocol):
    """Runs calls that already passed the loop's caps, guards and validation."""

    def is_read_only(self, call: ToolCall) -> bool:
        """True when the call only reads, so it may run alongside others."""

    def is_device_command(self, call: ToolCall) -> bool:
        """True when the call changes a device's state (counts toward the cap)."""

    def validates_arguments(self, call: ToolCall) -> bool:
        """True when running the call checks its own arguments, so the loop does not.

        Our own tools must check them anyway (other HA agents call them with no
        loop in between); a call is never validated twice.
        """

    async def run(self, call: ToolCall) -> ToolOutcome:
        """Run the call; raise on failure with a message the model can read."""
