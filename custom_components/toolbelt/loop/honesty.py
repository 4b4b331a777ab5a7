"""The honesty guard: a device command is never answered "done" when nothing ran.

A model may answer "The kitchen light is on now." without calling a tool.
When the host's own recognizer reads the user's words as a device command
(HA's built-in agent understands "turn on the kitchen light") and the turn
is about to end with no device command that worked, the claim does not
stand: the model is asked once more, told that nothing was changed (and, where
the server honours it, made to call); if it still calls nothing, the user
hears that nothing was changed, or, where the agent allows it, the recognized
command runs and the host's own sentence is said.

Recognition is awaited only when it matters: before the first spoken words
of a reply while no device command has worked (a reply that may be a false
claim is held until its end), and when the turn would end without one. It
starts with the turn, beside the first model request, when the host says it
is cheap (its sentences are loaded); otherwise only when it is first needed,
so a turn whose model calls a device at once never pays for it. Questions and
chat are never commands: the host's recognizer says which intent it read, the
executor whether it changes a device.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
import contextlib
from dataclasses import dataclass
import logging
from typing import Protocol

from ..toolcalls.model import ToolCall
from .takes_control import RoundCall

_LOGGER = logging.getLogger(__name__)

# What the model reads when its answer claimed, or may have claimed, a change.
NOTHING_CHANGED_NOTE = (
    "Nothing has been changed: you called no tool, so no device did anything."
    " The user asked for a device command. Call the tool for it now; never say"
    " a device changed unless a tool result confirms it."
)


@dataclass(frozen=True, slots=True)
class Recognized:
    """The user's words as the host's recognizer read them: a device command.

    ``tool``: the agent's tool for the command (the next request may be made
    to call it). ``call``: the command as a call of that tool, when the agent
    lets the host run it itself. ``unchanged``: the sentence the user hears
    when nothing ran, in the conversation's language.
    """

    intent: str
    unchanged: str
    tool: str | None = None
    call: ToolCall | None = None


class CommandRecognizer(Protocol):
    """The host's recognizer, bound to one turn's words.

    ``warm``: recognizing costs milliseconds now (the host has loaded its
    sentences), so it may start with the turn.
    """

    warm: bool

    async def recognize(self) -> Recognized | None:
        """The words as a device command; None for a question, chat or no match."""


def acted(done: Sequence[RoundCall]) -> bool:
    """Whether a device command of the turn worked."""
    return any(call.device_command and call.succeeded for call in done)


def tried(done: Sequence[RoundCall]) -> bool:
    """Whether the turn called a device command, worked or not: its answer
    (a failure's reason too) is the model's to give."""
    return any(call.device_command for call in done)


class HonestyGuard:
    """One turn's guard: recognition started once, its verdict kept."""

    def __init__(self, recognizer: CommandRecognizer) -> None:
        """Start recognizing now if that is cheap, else when first needed."""
        self._recognizer = recognizer
        self._task: asyncio.Future[Recognized | None] | None = None
        self.reminded = False
        if recognizer.warm:
            self._start()

    def _start(self) -> asyncio.Future[Recognized | None]:
        if self._task is None:
            self._task = asyncio.ensure_future(self._recognize(self._recognizer))
        return self._task

    @staticmethod
    async def _recognize(recognizer: CommandRecognizer) -> Recognized | None:
        try:
            return await recognizer.recognize()
        except Exception:
            # Never fail a turn over it: without a verdict the model's answer stands.
            _LOGGER.exception("Recognizing the user's words failed")
            return None

    async def command(self) -> Recognized | None:
        """The recognized device command, waiting for recognition if needed."""
        return await asyncio.shield(self._start())

    async def holds(self, done: Sequence[RoundCall]) -> bool:
        """Whether a reply's spoken words wait for its end: the words were a
        device command and no device command of the turn was tried yet."""
        return await self.disputes(done) is not None

    def holds_now(self, done: Sequence[RoundCall]) -> bool | None:
        """``holds`` if it is known without waiting (recognition is started if
        it was not); None while recognition runs."""
        if tried(done):
            return False
        task = self._start()
        return task.result() is not None if task.done() else None

    async def disputes(self, done: Sequence[RoundCall]) -> Recognized | None:
        """The command the turn's answer would leave undone, or None."""
        return None if tried(done) else await self.command()

    async def close(self) -> None:
        """Stop recognizing if the turn ended first."""
        if self._task is None:
            return
        if not self._task.done():
            self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
