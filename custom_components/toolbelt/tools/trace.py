"""What our tools did in recent turns, for diagnostics.

Each call records tool, action, backend, latency and error. Turns are kept in a
small ring buffer (oldest dropped first) together with their numbered references.
Everything leaving this module goes through redaction: configured secrets are cut
out of any text, secret-looking argument keys are masked, and what people tell
the personal tools (memory facts and queries, profile keys and values, persona
notes, history and web searches, a hand-off note) is reduced to its length.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..ha.handoff import HANDOFF_TOOL, Handoff
from ..ha.redaction import REDACTED, is_secret_key
from .definitions import ALL_TOOLS
from .references import References

# Diagnostics get posted in public bug reports: the arguments of the tools that
# declare them personal hold what people say about themselves, so only a few
# plain ones keep their value (an allow-list, so an argument under an alias name
# is hidden too).
PERSONAL_TOOLS = frozenset(
    {tool.name for tool in ALL_TOOLS if tool.personal}
    | ({HANDOFF_TOOL} if Handoff.personal else set())
)
PLAIN_ARGS = frozenset(
    {"action", "kind", "limit", "n", "memory_id", "turn_id", "note_id", "id", "agent"}
)
MAX_TURNS = 20
MAX_ARG_CHARS = 200


@dataclass(slots=True)
class CallTrace:
    """One tool call."""

    tool: str
    action: str | None
    backend: str | None
    started: str
    latency_ms: float
    ok: bool
    error: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class TurnRecord:
    """The tool calls and references of one conversation turn."""

    turn_id: str
    started: str
    calls: list[CallTrace] = field(default_factory=list)
    references: References = field(default_factory=References)


class TraceLog:
    """Ring buffer of recent turns, keyed by turn id (the HA context id)."""

    def __init__(
        self,
        secrets: Callable[[], Iterable[str]] = tuple,
        max_turns: int = MAX_TURNS,
    ) -> None:
        """secrets() returns the configured keys/tokens to scrub from output."""
        self._turns: OrderedDict[str, TurnRecord] = OrderedDict()
        self._secrets = secrets
        self._max_turns = max_turns

    def turn(self, turn_id: str) -> TurnRecord:
        """The record for turn_id, created (and the oldest dropped) if new."""
        if (record := self._turns.get(turn_id)) is not None:
            return record
        record = TurnRecord(turn_id=turn_id, started=now_iso())
        self._turns[turn_id] = record
        while len(self._turns) > self._max_turns:
            self._turns.popitem(last=False)
        return record

    def get(self, turn_id: str) -> TurnRecord | None:
        """The record for turn_id if it is still in the buffer."""
        return self._turns.get(turn_id)

    def recent(self) -> list[dict[str, Any]]:
        """Redacted plain data of the recent turns, oldest first."""
        secrets = [s for s in self._secrets() if s and len(s) >= 4]
        return [
            {
                "turn_id": record.turn_id,
                "started": record.started,
                "calls": [_redact_call(call, secrets) for call in record.calls],
                "references": record.references.as_dicts(),
            }
            for record in self._turns.values()
        ]


def _redact_call(call: CallTrace, secrets: list[str]) -> dict[str, Any]:
    return {
        "tool": call.tool,
        "action": call.action,
        "backend": call.backend,
        "started": call.started,
        "latency_ms": round(call.latency_ms, 1),
        "ok": call.ok,
        "error": scrub(call.error, secrets) if call.error else None,
        "arguments": {
            key: _argument(call.tool, key, value, secrets)
            for key, value in call.arguments.items()
        },
    }


def _argument(tool: str, key: str, value: Any, secrets: list[str]) -> str:
    """Secrets masked; what people told a personal tool is reduced to its length."""
    if is_secret_key(key):
        return REDACTED
    if (
        tool in PERSONAL_TOOLS
        and key not in PLAIN_ARGS
        and not isinstance(value, int | float | None)
    ):
        return f"<{len(str(value))} characters>"
    return scrub(_short(value), secrets)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of a secret in text."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= MAX_ARG_CHARS else text[: MAX_ARG_CHARS - 1] + "…"


def now_iso() -> str:
    """The current UTC time as the trace writes it (milliseconds, ISO 8601)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
