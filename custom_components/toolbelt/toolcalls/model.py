"""Plain data that every dialect returns, so the loop never sees wire formats."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .text.surrogates import mend_all

# More calls than any real reply has (a model stuck in a loop, a hostile server).
# Every format, native calls too, reads this many and refuses the rest of the
# reply with one reason the model reads.
MAX_CALLS = 64
TOO_MANY_CALLS = f"more than {MAX_CALLS} calls in one reply"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for, with its name resolved against the catalog."""

    id: str
    name: str
    arguments: dict[str, Any]

    def __post_init__(self) -> None:
        # JSON escapes can decode to lone surrogates, which no request, log or
        # database can encode: mend them before the call runs or is sent back.
        mended = mend_all(self.arguments)
        if mended is not self.arguments:
            object.__setattr__(self, "arguments", mended)


@dataclass(frozen=True, slots=True)
class RejectedCall:
    """A call-shaped span we refused to dispatch (unknown name, truncated, unparsable).

    Kept so the loop can tell the model what went wrong instead of staying silent.
    """

    name: str
    raw: str
    reason: str


def too_many_calls(raw: str) -> RejectedCall:
    """The one refusal of everything past the first ``MAX_CALLS`` calls;
    ``raw`` shows where the rest starts (or how many there were)."""
    return RejectedCall(name="", raw=raw, reason=TOO_MANY_CALLS)


@dataclass(slots=True)
class ParseResult:
    """What one model reply means: calls to run and text a person may see or hear."""

    calls: list[ToolCall] = field(default_factory=list)
    content: str = ""
    reasoning: str = ""
    dialect: str | None = None
    text_parsed: bool = True
    # Offset in the raw reply just after the last call's markup; the loop cuts the
    # assistant message there so invented observations never reach the next request.
    end: int | None = None
    rejected: list[RejectedCall] = field(default_factory=list)
