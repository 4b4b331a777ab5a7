"""Whether a tool round ends the turn: the loop asks after every round.

Some rounds need no second model request: a tool already has the answer (a
hand-off returns another agent's reply), or the round only switched devices
and each one said it worked (an instant confirmation). After a round's results
are recorded, the loop asks each check in turn; the first that returns text
ends the turn, and that text is spoken and kept as the assistant's answer.

A check sees every call of the round with its outcome, whether it ran (a cap,
the repeat guard or the parser may have refused it), and whether it changed a
device. See docs/takes_control.md for how to add one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
import logging
from typing import Protocol

from .events import ResultOut

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RoundCall:
    """One call of a finished round, as a takes-control check sees it."""

    outcome: ResultOut
    device_command: bool

    @property
    def succeeded(self) -> bool:
        """It ran and the tool said it worked."""
        return not (self.outcome.refused or self.outcome.failed)


class TakesControl(Protocol):
    """A check the loop asks after each round; ``name`` shows in logs and events."""

    name: str

    async def answer(self, calls: Sequence[RoundCall]) -> str | None:
        """The turn's answer when this round ends the turn, else None."""


class ToolAnswer:
    """A tool that returned an answer (``ToolOutcome.answer``) ends the turn.

    The loop always asks this one first: the result itself says it took control.
    Only in a round where every call worked: an answer spoken over a failed or
    refused sibling would hide that failure, so then the model reads all the
    results and answers.
    """

    name = "tool"

    async def answer(self, calls: Sequence[RoundCall]) -> str | None:
        """The first call's answer, when every call of the round ran and worked."""
        if not all(call.succeeded for call in calls):
            return None
        for call in calls:
            if call.outcome.answer is not None:
                return call.outcome.answer
        return None


class InstantConfirmation:
    """A round of device commands that all worked is confirmed without the model.

    ``confirm`` words the confirmation from the results (HA's own response, in
    the conversation's language); it may return None to let the model answer.
    Any failure, refusal or read in the round leaves the answer to the model.
    """

    name = "instant_confirmation"

    def __init__(
        self, confirm: Callable[[Sequence[ResultOut]], Awaitable[str | None]]
    ) -> None:
        """Bind the wording."""
        self._confirm = confirm

    async def answer(self, calls: Sequence[RoundCall]) -> str | None:
        """A confirmation when every call was a device command that worked."""
        if not calls or not all(c.device_command and c.succeeded for c in calls):
            return None
        return await self._confirm([call.outcome for call in calls])


async def confirm_silence(
    calls: Sequence[RoundCall],
    confirm: Callable[[Sequence[ResultOut]], Awaitable[str | None]] | None,
) -> str | None:
    """HA's confirmation when the model says nothing after device commands.

    Every device command of the turn must have worked (a refused or failed
    one leaves it to the loop's "no answer" sentence); reads beside them do
    not count. A wording that raises is logged and gives None.
    """
    commands = [call for call in calls if call.device_command]
    if confirm is None or not commands or not all(c.succeeded for c in commands):
        return None
    try:
        text = await confirm([call.outcome for call in commands])
    except Exception:
        _LOGGER.exception("Confirming the device commands of a silent answer failed")
        return None
    return text.strip() if text and text.strip() else None


async def round_answer(
    checks: Sequence[TakesControl], calls: Sequence[RoundCall]
) -> tuple[str, str] | None:
    """(answer, the check's name) from the first check that ends the turn.

    A check that raises is logged and ends the asking with None: the round's
    calls have already run (a light may be on), so the model reads the results
    and answers as usual rather than the turn failing.
    """
    for check in checks:
        try:
            text = await check.answer(calls)
        except Exception:
            _LOGGER.exception("The %s takes-control check failed", check.name)
            return None
        if text is not None and text.strip():
            return text.strip(), check.name
    return None
