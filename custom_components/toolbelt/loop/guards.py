"""Per-turn caps, the repeat guard and argument validation.

Every refusal is a result the model can read and act on, so a turn never ends
in an exception and the model can still answer the person.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from typing import Any

from ..toolcalls.model import ToolCall
from ..toolcalls.prompting.render import error_text
from ..toolcalls.reading.schema import ArgumentError, validate_arguments


def call_key(call: ToolCall) -> str:
    """Same tool and same arguments give the same key, whatever the key order."""
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


@dataclass(slots=True)
class Refusal:
    """Why a call was not run, in words the model can act on."""

    text: str


@dataclass(slots=True)
class TurnBudget:
    """What this turn may still do; one budget per user request."""

    max_calls: int
    max_device_commands: int
    calls: int = 0
    device_commands: int = 0
    results: dict[str, str] = field(default_factory=dict)

    @property
    def exhausted(self) -> bool:
        """No further call may run this turn."""
        return self.calls >= self.max_calls

    def admit(
        self, call: ToolCall, schema: dict[str, Any] | None, *, is_device: bool
    ) -> tuple[ToolCall, Refusal | None]:
        """Decide whether ``call`` runs; returns it with validated arguments."""
        if self.calls >= self.max_calls:
            return call, Refusal(_limit_text(self.max_calls))
        self.calls += 1
        key = call_key(call)
        if key in self.results:
            return call, Refusal(
                "NOTE: this exact call (same tool, same arguments) already ran in"
                " this turn, so it was not run again. Its result was: "
                + self.results[key]
            )
        if schema is not None:
            try:
                arguments = validate_arguments(schema, call.arguments)
            except ArgumentError as err:
                return call, Refusal(error_text(err))
            call = ToolCall(id=call.id, name=call.name, arguments=arguments)
        if is_device:
            if self.device_commands >= self.max_device_commands:
                return call, Refusal(
                    "ERROR: LimitReached: this turn already sent"
                    f" {self.max_device_commands} device commands, the most allowed."
                    " This command was not run. Tell the user which devices were"
                    " not changed."
                )
            self.device_commands += 1
        return call, None

    def charge_rejected(self, reason: str) -> str:
        """Count a call the parser refused; the error text the model gets back."""
        if self.calls >= self.max_calls:
            return _limit_text(self.max_calls)
        self.calls += 1
        return (
            f"ERROR: InvalidToolCall: {reason}. This call was not run. Call one of"
            " the listed tools by its exact name, with complete JSON arguments."
        )

    def limit_refusal(self) -> str:
        """What a call past the total cap gets back."""
        return _limit_text(self.max_calls)

    def limit_note(self) -> str:
        """Appended to the result that used up the last call of the turn."""
        return (
            f"\nNOTE: that was tool call {self.max_calls} of {self.max_calls}, the"
            " most allowed this turn. No more tools can be called: answer the user"
            " now with what you know."
        )

    def remember(self, call: ToolCall, result_text: str) -> None:
        """Record a result so an identical call later in the turn can reuse it."""
        self.results[call_key(call)] = result_text


def _limit_text(max_calls: int) -> str:
    return (
        f"ERROR: LimitReached: this turn already made {max_calls} tool"
        " calls, the most allowed. This call was not run. Answer the user"
        " now with what you know."
    )
