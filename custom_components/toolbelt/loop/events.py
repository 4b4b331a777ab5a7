"""What the loop reports while it runs; the HA glue turns these into ChatLog deltas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..toolcalls.model import ToolCall


@dataclass(frozen=True, slots=True)
class HopStart:
    """A new request to the model begins; its text is a new assistant message."""

    index: int


@dataclass(frozen=True, slots=True)
class TextOut:
    """Text a person may hear: it is never markup and never reasoning."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningOut:
    """The model's reasoning, for the debug view only."""

    text: str


@dataclass(frozen=True, slots=True)
class CallsOut:
    """The calls of one reply, in the order the model emitted them.

    ``raw`` (the reply cut after its last call) and ``content`` are the reply as
    later requests repeat it; the HA glue keeps them with the ChatLog record.
    """

    calls: tuple[ToolCall, ...]
    raw: str = ""
    content: str = ""
    dialect: str | None = None  # the format the calls were read in


@dataclass(frozen=True, slots=True)
class ResultOut:
    """One call's outcome (run, refused or failed) and how long it took.

    ``text`` is what the model reads for it, computed once: every later request,
    in this turn and the next, sends exactly this string. ``refused``: a cap, a
    guard or the parser stopped the call before it ran. ``answer``: the tool
    took control, and this is the turn's answer (see takes_control.py).
    """

    call: ToolCall
    data: Any
    failed: bool
    duration: float
    text: str
    refused: bool = False
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class ControlOut:
    """A tool round took control: ``text`` is the turn's answer, no model request
    follows. ``by`` names what took it (``handoff``, ``instant_confirmation``).
    """

    text: str
    by: str


LoopEvent = HopStart | TextOut | ReasoningOut | CallsOut | ResultOut | ControlOut
