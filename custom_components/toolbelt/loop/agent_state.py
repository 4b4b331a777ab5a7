"""What one agent learned about its server: kept across turns, decided in the loop.

A server may refuse the tool role or a decoding constraint. Only the loop can
prove either (a retry without it worked), so only the loop changes this state;
an AI task's evaluation learns likewise whether the server returns token
log-probabilities. The HA side keeps one per agent for as long as the entry is
loaded, so a reload starts clean but turns do not rediscover the same refusal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import logging

_LOGGER = logging.getLogger(__name__)


@dataclass(slots=True)
class AgentState:
    """One agent's learned facts; ``tool_role`` starts at the server kind's default."""

    name: str = ""
    tool_role: bool = True
    refused: set[str] = field(default_factory=set)
    warned: set[str] = field(default_factory=set)
    # Token log-probabilities: None until an evaluation asked; False once a
    # reply came without them (later evaluations fail at once), True once seen.
    logprobs: bool | None = None

    def warn_once(self, message: str) -> None:
        """Log a warning the first time only, so a log is not one line per turn."""
        if message in self.warned:
            return
        self.warned.add(message)
        _LOGGER.warning("%s: %s", self.name, message)

    def as_dict(self) -> dict[str, object]:
        """For diagnostics: plain, sorted values."""
        return {
            "tool_role": self.tool_role,
            "refused": sorted(self.refused),
            "warned": sorted(self.warned),
            "logprobs": self.logprobs,
        }
