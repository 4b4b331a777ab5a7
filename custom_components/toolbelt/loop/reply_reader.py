"""One hop's reply, read in one place.

A ``ReplyReader`` is made for each hop of a turn and owns everything about
reading that hop's reply:

- which dialect reads it: the agent's format (``FormatChoice``), or hermes
  where the hop's constraint framed the reply in hermes (a JSON schema, or the
  hermes frame standing in for another format), or another dialect whose call
  the model leaked (``_parse``); a chain's member choice stays in the chain;
- what may be spoken while it streams: the dialect's stream detector (nothing
  of a JSON-schema reply), the honesty guard's hold, and nothing a failed
  attempt at the same reply already said;
- what the whole reply means: the backend's whole native calls first, then the
  text (``_parse``; parsing is total in ``guard_parse``);
- what of its final visible text is still unsaid (``_finish``, ``_reconcile_tail``): the
  detector's held tail, where the final content continues what was streamed,
  and the rest of a final answer (``Reply.rest``).

Retries of the same hop (a busy server, a refused constraint, a reply asked
for again raw) go through the same reader: each attempt is one ``read``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence
import contextlib
from dataclasses import dataclass
import logging
from typing import Any

from ..backend.base import CompletionRequest, Delta, Finish, ReasoningDelta, TextDelta
from ..toolcalls import (
    Catalog,
    ParseResult,
    clean,
    dialect_names,
    from_openai_tool_calls,
    get_dialect,
    split_reasoning,
)
from ..toolcalls.dialects.base import Dialect
from ..toolcalls.prompting.constraint import unwrap_answer
from ..toolcalls.registry import detector_for
from ..toolcalls.text.streaming import StreamDetector
from .events import ReasoningOut, TextOut
from .format_choice import FormatChoice
from .honesty import HonestyGuard
from .takes_control import RoundCall
from .tool_choice import HopConstraint

_LOGGER = logging.getLogger(__name__)

_HERMES = get_dialect("hermes")


@dataclass(slots=True)
class Reply:
    """What one model reply turned out to be."""

    text: str
    parse: ParseResult
    # What was spoken of it while it streamed ("" when the guard held it).
    streamed: str
    # Text the stream detector let out but the honesty guard held back.
    held: str = ""
    # What of its final visible text is still to be said, if it is the answer.
    rest: str = ""


@dataclass(slots=True)
class _Attempt:
    """One attempt at the reply: what streamed so far."""

    dialect: Dialect
    name: str
    # A JSON-schema reply is JSON until its end: a detector that holds all.
    detector: StreamDetector | _HoldAll | None
    # The model's template opens a reasoning block: the reply starts in it.
    opened: bool
    # What earlier attempts at this reply said.
    said: str
    raw: list[str]
    streamed: list[str]
    structured: tuple[dict[str, Any], ...] = ()
    holding: bool | None = None
    waiting: str = ""  # safe words not out yet: the guard has not decided


class ReplyReader:
    """Reads one hop's reply: what is spoken as it streams and what it means."""

    def __init__(
        self,
        choice: FormatChoice,
        catalog: Catalog,
        constraint: HopConstraint | None,
        *,
        warn_once: Callable[[str], None],
        opens_reasoning: bool = False,
        unwrap: bool = True,
        guard: HonestyGuard | None = None,
        done: Sequence[RoundCall] = (),
    ) -> None:
        """``constraint``: the hop's, whose frame may pick the reading dialect.
        ``opens_reasoning``: the model's template opens the reasoning block, so
        nothing shows until its closer (unless the server splits reasoning
        off). ``unwrap``: a JSON-schema reply is the constraint's wrapper, not
        the agent's own answer format. ``guard``: asked at the reply's first
        safe words whether they wait for the reply's end (``done``: the turn's
        calls so far); the stream is never paused for it, and its answer is
        awaited only after the reply ended, outside the server's timeout.
        """
        self._choice = choice
        self._catalog = catalog
        self._constraint = constraint
        self._warn_once = warn_once
        self._opens_reasoning = opens_reasoning
        self._unwrap = unwrap
        self._guard = guard
        self._done = done
        self._said = ""
        self.reply: Reply | None = None

    def reading_dialect(self, request: CompletionRequest) -> tuple[str, Dialect]:
        """Which format reads a reply to ``request`` (before any leak is seen).

        A grammar in the dialect's own frame keeps the dialect; a JSON schema,
        or the hermes frame standing in for another format, makes hermes calls.
        """
        choice, constraint = self._choice, self._constraint
        if constraint is None or not (request.grammar or request.response_format):
            return choice.name, choice.dialect
        if request.grammar and constraint.frame == choice.dialect.name:
            return choice.name, choice.dialect
        return _HERMES.name, _HERMES

    async def read(
        self, request: CompletionRequest, deltas: AsyncGenerator[Delta]
    ) -> AsyncGenerator[TextOut | ReasoningOut]:
        """Stream one attempt at the reply: safe text out at once; at its end,
        ``self.reply``. ``deltas``: the backend's reply to ``request``, closed
        here whenever reading stops (a turn that stops early closes the HTTP
        stream at once)."""
        name, dialect = self.reading_dialect(request)
        attempt = _Attempt(
            dialect=dialect,
            name=name,
            detector=_HoldAll() if request.response_format else None,
            opened=self._opens_reasoning,
            said=self._said,
            raw=[],
            streamed=[],
        )
        async with contextlib.aclosing(deltas):
            async for delta in deltas:
                for event in self._take(attempt, delta):
                    yield self._spoken(event)
        if last := await self._finish(attempt):
            yield self._spoken(last)

    def _spoken(self, event: TextOut | ReasoningOut) -> TextOut | ReasoningOut:
        if isinstance(event, TextOut):
            self._said += event.text
        return event

    def _take(self, attempt: _Attempt, delta: Delta) -> list[TextOut | ReasoningOut]:
        """One delta of the reply: what of it may be said now."""
        if isinstance(delta, TextDelta):
            return self._text(attempt, delta.text)
        if isinstance(delta, ReasoningDelta):
            attempt.opened = False  # the server parses reasoning itself
            return [ReasoningOut(delta.text)]
        if isinstance(delta, Finish):
            attempt.structured = delta.tool_calls
            if delta.reason == "length":
                _LOGGER.debug("Reply cut by max_tokens")
        return []

    def _text(self, attempt: _Attempt, text: str) -> list[TextOut | ReasoningOut]:
        attempt.raw.append(text)
        if attempt.detector is None:
            attempt.detector = detector_for(
                attempt.dialect,
                catalog=self._catalog,
                start_in_reasoning=attempt.opened,
            )
        safe = attempt.detector.feed(text)
        if not safe:
            return []
        attempt.streamed.append(safe)
        attempt.waiting += safe
        if attempt.holding is None:
            attempt.holding = (
                False if self._guard is None else self._guard.holds_now(self._done)
            )
        if attempt.holding is not False:
            return []
        new = _unsaid(attempt.said, attempt.streamed, attempt.waiting)
        attempt.waiting = ""
        return [TextOut(new)] if new else []

    async def _finish(self, attempt: _Attempt) -> TextOut | None:
        """The reply has ended: what it means (``self.reply``), and what of its
        streamed text is still said now."""
        text = "".join(attempt.raw)
        held_all = isinstance(attempt.detector, _HoldAll)
        if held_all and self._unwrap and (answer := unwrap_answer(text)):
            text = answer
        parse = self._parse(attempt, text)
        if attempt.opened and parse.calls and not attempt.structured:
            _reasoning_until_call(text, parse)
        self._reconcile_tail(attempt, parse)
        if attempt.holding is None and attempt.waiting:
            # Waiting no longer holds up the server. Words before a call are
            # said before it runs anyway: no verdict needed.
            attempt.holding = (
                not parse.calls
                and self._guard is not None
                and await self._guard.holds(self._done)
            )
        new = ""
        if not attempt.holding and attempt.waiting:
            new = _unsaid(attempt.said, attempt.streamed, attempt.waiting)
        out = "".join(attempt.streamed)
        streamed, held = ("", out) if attempt.holding else (out, "")
        rest = _unsent(parse.content, streamed)
        self.reply = Reply(text, parse, streamed, held=held, rest=rest)
        return TextOut(new) if new else None

    def _parse(self, attempt: _Attempt, text: str) -> ParseResult:
        """What the reply means: the whole native calls first, then the text
        in the reading dialect, then a call another dialect's markers show."""
        catalog = self._catalog
        if attempt.structured:
            result = from_openai_tool_calls(list(attempt.structured), catalog)
            text_view = attempt.dialect.parse(text, catalog)
            result.content = text_view.content
            result.reasoning = result.reasoning or text_view.reasoning
            return result
        result = attempt.dialect.parse(text, catalog)
        if result.calls or not catalog.names:
            return result
        leaked = _leaked_dialect(text, exclude=attempt.name)
        if leaked is None:
            return result
        other = get_dialect(leaked).parse(text, catalog)
        if other.calls:
            self._warn_once(
                f"The model answered in the {leaked} tool-call format although the"
                f" agent is set to {attempt.name}; Toolbelt read it anyway"
            )
            return other
        return result

    @staticmethod
    def _reconcile_tail(attempt: _Attempt, parse: ParseResult) -> None:
        """Only held-back text that the dialect also calls content may still show."""
        detector = attempt.detector
        tail = "" if parse.calls or detector is None else detector.finish()
        if tail and parse.content.startswith("".join(attempt.streamed) + tail):
            attempt.streamed.append(tail)
            attempt.waiting += tail


def _reasoning_until_call(text: str, parse: ParseResult) -> None:
    """A reply that began inside template-opened reasoning and called a tool
    before any closer: the words before the call were reasoning (engines end
    the block where the call starts), so they leave ``parse.content``."""
    if parse.dialect not in dialect_names():
        return
    markers = get_dialect(parse.dialect).markers
    cut = min((i for m in markers if (i := text.find(m)) >= 0), default=-1)
    if cut <= 0 or split_reasoning(text[:cut])[1]:
        return  # no call markup, or a block of its own that the parse split off
    thought = clean(text[:cut])[0]
    if not thought or not parse.content.startswith(thought):
        return
    parse.content = parse.content[len(thought) :].strip()
    parse.reasoning = "\n".join(p for p in (thought, parse.reasoning) if p)


def _leaked_dialect(text: str, *, exclude: str) -> str | None:
    """The first dialect (other than ours) whose markers appear in the text."""
    for name in dialect_names():
        if name == exclude:
            continue
        dialect = get_dialect(name)
        if any(marker in text for marker in dialect.markers):
            return name
    return None


class _HoldAll:
    """A stream detector that holds everything back (JSON is no speech)."""

    def feed(self, text: str) -> str:
        return ""

    def finish(self) -> str:
        return ""


def _unsaid(said: str, streamed: list[str], piece: str) -> str:
    """The part of ``piece`` (the last of ``streamed``) not in ``said`` yet.

    A retried reply that repeats what a failed attempt streamed stays silent
    until it goes past it; one that says something else speaks (streamed text
    cannot be taken back).
    """
    if not said:
        return piece
    before = len("".join(streamed)) - len(piece)
    text = "".join(streamed)
    if not said.startswith(text[: len(said)]):
        return piece
    return text[max(before, len(said)) :]


def _unsent(content: str, streamed: str) -> str:
    """The part of the final answer that has not been streamed yet.

    Streamed text cannot be taken back, so when the clean answer no longer
    starts with it we add nothing rather than repeat or contradict it.
    """
    if not streamed:
        return content.strip()
    if content.startswith(streamed):
        return content[len(streamed) :].rstrip()
    stripped = content.lstrip()
    if stripped.startswith(streamed.lstrip()):
        return stripped[len(streamed.lstrip()) :].rstrip()
    return ""
