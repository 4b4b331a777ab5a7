"""The tool loop: ask the model, read its calls, run them, feed results back.

HA-free: it talks to a ``ModelBackend`` and an ``Executor`` and reports what
happens as ``LoopEvent``s. Data moves through it once per hop:
backend deltas -> streaming detector (safe text out at once) -> dialect parse ->
caps and guards -> executor -> results appended -> next hop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
import contextlib
from dataclasses import dataclass, replace
import logging
import time
from typing import Any

from ..backend.accumulate import ToolCallAccumulator
from ..backend.base import (
    DEFAULT_REQUEST_TIMEOUT,
    CompletionRequest,
    Finish,
    ModelBackend,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from ..backend.errors import (
    BackendBadRequestError,
    BackendBusyError,
    BackendContextOverflowError,
    BackendError,
    BackendToolParseError,
)
from ..backend.servers import OPENAI, ServerKind
from ..toolcalls import Catalog, ParseResult, ToolCall, get_dialect
from ..toolcalls.calls import new_call_id
from ..toolcalls.constraint import Shape, fingerprint, unwrap_answer
from ..toolcalls.dialects.base import Dialect
from ..toolcalls.prompting import error_text, lean_tools, result_text
from ..toolcalls.registry import detector_for, opens_reasoning_in_template
from ..toolcalls.streaming import StreamDetector
from .agent_state import AgentState
from .events import (
    CallsOut,
    ControlOut,
    HopStart,
    LoopEvent,
    ReasoningOut,
    ResultOut,
    TextOut,
)
from .executor import Executor
from .format_choice import FormatChoice, choose_format
from .guards import TurnBudget
from .honesty import (
    NOTHING_CHANGED_NOTE,
    CommandRecognizer,
    HonestyGuard,
    Recognized,
    acted,
)
from .phrasebook import ENGLISH, Phrasebook
from .takes_control import (
    RoundCall,
    TakesControl,
    ToolAnswer,
    confirm_silence,
    round_answer,
)
from .tool_choice import AUTO, HopConstraint, hop_shape, plan
from .transcript import (
    Exchange,
    History,
    render_history,
    trim_largest_result,
)

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LoopSettings:
    """One agent's knobs, read from its subentry."""

    model: str
    tool_format: str = "auto"
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_tool_calls: int = 20
    max_device_commands: int = 3
    stream: bool = True
    # Tool choice policy (tool_choice.py), "strict calls", and the constraint
    # kinds the agent check saw honoured (minus ``AgentState.refused`` per turn).
    tool_choice: str = AUTO
    strict_calls: bool = False
    constraints: tuple[str, ...] = ()
    # The server kind's traits (backend/servers.py) the loop honours; OpenAI's
    # API is the reference shape.
    server: ServerKind = OPENAI
    # Whether an answer may be empty: the model wrote nothing, no tool ran,
    # and the host keeps that as a silent response (HA 2026.11+ does).
    silent_answers: bool = False
    # What the loop says itself, in the conversation's language.
    phrases: Phrasebook = ENGLISH


@dataclass(slots=True)
class _Prepared:
    """What every hop of one turn shares; ``base`` loses the catalog at the cap."""

    catalog: Catalog
    tools: list[dict[str, Any]]
    sent_tools: list[dict[str, Any]]
    choice: FormatChoice
    base: History
    key: str


@dataclass(slots=True)
class _Hop:
    """What one model reply turned out to be."""

    text: str
    parse: ParseResult
    streamed: str
    # Text the stream detector let out but the honesty guard held back.
    held: str = ""


class ToolLoop:
    """Runs one user turn to its final answer."""

    def __init__(
        self,
        backend: ModelBackend,
        executor: Executor,
        settings: LoopSettings,
        *,
        state: AgentState | None = None,
        takes_control: Sequence[TakesControl] = (),
        confirm: Callable[[Sequence[ResultOut]], Awaitable[str | None]] | None = None,
        recognizer: CommandRecognizer | None = None,
    ) -> None:
        """Bind the loop to a server, a tool runner and an agent's settings.

        ``state``: what the agent learned about its server in earlier turns;
        the loop updates it when a retry proves a refusal. ``takes_control``:
        checks asked after each tool round, after the results' own answers
        (``ToolAnswer``); the first answer ends the turn. ``confirm``: words
        the host's own confirmation of device commands, said when the model
        answers them with nothing. ``recognizer``: the host's reading of the
        user's words as a device command, for the honesty guard (honesty.py).
        """
        self._backend = backend
        self._executor = executor
        self._settings = settings
        self._state = state if state is not None else AgentState()
        self._kinds = tuple(
            k for k in settings.constraints if k not in self._state.refused
        )
        self._warn_once = self._state.warn_once
        self._takes_control: tuple[TakesControl, ...] = (ToolAnswer(), *takes_control)
        self._answer_format: dict[str, Any] | None = None
        self._confirm = confirm
        self._recognizer = recognizer

    async def run(
        self,
        messages: History,
        tools: list[dict[str, Any]],
        *,
        guidance: str = "",
        answer_format: dict[str, Any] | None = None,
    ) -> AsyncGenerator[LoopEvent]:
        """Yield events until the model gives an answer (or the caps end the turn).

        ``messages`` are OpenAI chat messages with the system prompt first, and
        earlier turns' ``Exchange``s; ``tools`` is the OpenAI ``tools`` list of
        everything the agent may call. ``guidance``: rules for these tools
        that the executor's owner adds to the system prompt (HA's device
        rules). ``answer_format``: a ``response_format`` every request carries
        (an AI Task's structure); dropped for good if the server refuses it.
        """
        guard = (
            HonestyGuard(self._recognizer)
            if self._recognizer is not None and tools
            else None
        )
        try:
            async with contextlib.aclosing(
                self._turn(messages, tools, guidance, answer_format, guard)
            ) as events:
                async for event in events:
                    yield event
        finally:
            if guard is not None:
                await guard.close()

    async def _turn(
        self,
        messages: History,
        tools: list[dict[str, Any]],
        guidance: str,
        answer_format: dict[str, Any] | None,
        guard: HonestyGuard | None,
    ) -> AsyncGenerator[LoopEvent]:
        """One turn's hops, until an answer (see ``run``)."""
        settings = self._settings
        self._answer_format = answer_format
        prepared = self._prepare(messages, tools, guidance)
        catalog, choice = prepared.catalog, prepared.choice
        budget = TurnBudget(settings.max_tool_calls, settings.max_device_commands)
        # The one place the tool role is decided: a text dialect or a server
        # that refused it uses fallback mode; a retry below may prove a refusal.
        fallback = choice.text_mode or not self._state.tool_role
        exchanges: History = []
        done: list[RoundCall] = []
        # The tool the honesty guard makes the next request call, if any.
        forced: str | None = None

        # Every hop but the last may run tools; the caps end the turn in time.
        for index in range(settings.max_tool_calls + 2):
            wrap_up = budget.exhausted
            constraint = None if wrap_up else self._constraint(index, prepared, forced)
            forced = None
            request = self._request(prepared, exchanges, fallback, wrap_up, constraint)
            own_format = self._answer_format is not None and not request.constrained
            if own_format:
                request.response_format = self._answer_format
            yield HopStart(index)
            hop: _Hop | None = None
            recovered: set[type[BackendError]] = set()
            dropped = False
            said = ""  # streamed by an attempt that failed, never said twice
            while hop is None:
                try:
                    reader = _reader(choice, request, constraint)
                    unwrap = not own_format
                    async for event in self._ask(
                        request,
                        catalog,
                        reader,
                        unwrap,
                        guard,
                        done,
                        said=said,
                    ):
                        if isinstance(event, _Hop):
                            hop = event
                        else:
                            if isinstance(event, TextOut):
                                said += event.text
                            yield event
                except BackendToolParseError as err:
                    # The server's own tool parser lost the reply: ask for the
                    # raw text (same prompt, cached) and read the call ourselves.
                    if request.raw_text:
                        raise
                    _LOGGER.info("Reading the model's call ourselves: %s", err)
                    request.raw_text = True
                    continue
                except BackendBusyError as err:
                    # A busy server is not a broken one: wait as long as it asks,
                    # once, if that fits in the request timeout.
                    wait = err.retry_after
                    if BackendBusyError in recovered or wait is None:
                        raise
                    if wait > settings.timeout:
                        raise
                    recovered.add(BackendBusyError)
                    _LOGGER.info("Server busy; retrying in %.1f s", wait)
                    await asyncio.sleep(wait)
                except BackendContextOverflowError:
                    if BackendContextOverflowError in recovered:
                        raise
                    trimmed = trim_largest_result(exchanges)
                    if trimmed is None:
                        raise
                    recovered.add(BackendContextOverflowError)
                    _LOGGER.warning("Request too long for the model: %s", trimmed)
                except BackendBadRequestError:
                    if request.constrained and not dropped:
                        # A refused constraint is a separate fact from the tool
                        # role: first try the same request without it.
                        dropped = True
                        request.unconstrained()
                        if constraint and constraint.only_tool:
                            request.tools = prepared.sent_tools
                        continue
                    if (
                        fallback
                        or not _ran_tools(exchanges)
                        or BackendBadRequestError in recovered
                    ):
                        raise
                    # Perhaps the server refuses our tool messages: say the same
                    # in plain text. Only a retry that works proves it.
                    recovered.add(BackendBadRequestError)
                    fallback = True
                request.messages = self._messages(
                    prepared.base, exchanges, choice.dialect, fallback
                )
            if BackendBadRequestError in recovered:
                _LOGGER.info("Server rejected the tool role; using fallback mode")
                self._state.tool_role = False
            elif dropped and constraint is not None:
                # Only a retry that worked without it proves the refusal.
                self._constraint_rejected(constraint.kind)
            elif dropped and own_format:
                self._answer_format = None
                self._constraint_rejected("json_schema")
            assert hop is not None

            calls = hop.parse.calls
            # Refused call markup goes back as an error the model can fix.
            rejected = [
                ToolCall(
                    id=new_call_id(), name=item.name or "invalid_call", arguments={}
                )
                for item in hop.parse.rejected
            ]
            if hop.parse.reasoning:
                yield ReasoningOut(hop.parse.reasoning)
            if not (calls or rejected) or wrap_up:
                if (
                    guard is not None
                    and not wrap_up
                    and (seen := await guard.disputes(done)) is not None
                ):
                    if not guard.reminded:
                        # The answer would leave the command undone: never said.
                        guard.reminded = True
                        _LOGGER.debug("No device command for %s yet", seen.intent)
                        claim = hop.parse.content.strip() or "(no answer)"
                        exchanges.append({"role": "assistant", "content": claim})
                        exchanges.append(
                            {"role": "user", "content": NOTHING_CHANGED_NOTE}
                        )
                        forced = seen.tool or ""
                        continue
                    async for event in self._settle(seen, catalog, budget):
                        yield event
                    return
                rest = _unsent(hop.parse.content, hop.streamed)
                if not (hop.streamed + rest).strip():
                    # Said in place of nothing; "" is a silent answer.
                    yield TextOut(await self._empty_answer(hop, calls, done))
                elif rest:
                    yield TextOut(rest)
                return

            if hop.held:
                # Words before a real call: they were no false claim.
                yield TextOut(hop.held)
            cut = hop.text[: hop.parse.end] if hop.parse.end is not None else hop.text
            content = hop.parse.content.strip()
            yield CallsOut(
                (*calls, *rejected),
                raw=cut,
                content=content,
                dialect=hop.parse.dialect,
            )
            outcomes = [o async for o in self._run_calls(calls, catalog, budget)]
            for call, item in zip(rejected, hop.parse.rejected, strict=True):
                _LOGGER.debug("Refused call markup: %s", item.reason)
                text = budget.charge_rejected(item.reason)
                outcomes.append(ResultOut(call, text, True, 0.0, text, refused=True))
            last = outcomes[-1]
            if budget.exhausted and last.text != budget.limit_refusal():
                # Said where the model reads results, in the format's own words.
                outcomes[-1] = replace(last, text=last.text + budget.limit_note())
            results = [outcome.text for outcome in outcomes]
            for outcome in outcomes:
                yield outcome
            # Seed 003: the round's results may end the turn themselves.
            finished = [
                RoundCall(o, self._executor.is_device_command(o.call)) for o in outcomes
            ]
            done.extend(finished)
            taken = await round_answer(self._takes_control, finished)
            if taken is not None:
                _LOGGER.debug("The %s check took control of the turn", taken[1])
                yield ControlOut(*taken)
                return
            if budget.exhausted:
                # Nothing more may run: the catalog leaves the prompt too.
                prepared.base = self._base_messages(
                    messages, catalog, choice, guidance, wrap_up=True
                )
            exchanges.append(
                Exchange(
                    raw=cut,
                    content=content,
                    calls=(*calls, *rejected),
                    results=tuple(results),
                )
            )

        yield TextOut(self._settings.phrases.gave_up)

    def opening_request(
        self, messages: History, tools: list[dict[str, Any]], *, guidance: str = ""
    ) -> CompletionRequest:
        """The first request ``run`` sends for these messages and tools.

        Built by the same code as every hop, so a warm-up that sends it (with
        the user's words left out) starts byte for byte as a real turn does.
        """
        prepared = self._prepare(messages, tools, guidance)
        fallback = prepared.choice.text_mode or not self._state.tool_role
        constraint = self._constraint(0, prepared)
        return self._request(prepared, [], fallback, False, constraint)

    def _prepare(
        self, messages: History, tools: list[dict[str, Any]], guidance: str
    ) -> _Prepared:
        """What every hop of a turn shares: the catalog, the format, the prompt."""
        settings = self._settings
        # The full schemas check arguments; the model reads the lean ones.
        catalog = Catalog.from_openai(tools)
        choice = choose_format(
            settings.tool_format, settings.model, has_tools=bool(tools)
        )
        return _Prepared(
            catalog=catalog,
            tools=tools,
            sent_tools=lean_tools(tools),
            choice=choice,
            base=self._base_messages(messages, catalog, choice, guidance),
            key=fingerprint(catalog) if self._kinds and catalog.names else "",
        )

    def _request(
        self,
        prepared: _Prepared,
        exchanges: History,
        fallback: bool,
        wrap_up: bool,
        constraint: HopConstraint | None,
    ) -> CompletionRequest:
        """One hop's request: the prompt so far, the tools, the hop's constraint."""
        settings = self._settings
        choice = prepared.choice
        request = CompletionRequest(
            model=settings.model,
            messages=self._messages(prepared.base, exchanges, choice.dialect, fallback),
            tools=prepared.sent_tools
            if choice.send_tools and prepared.tools and not wrap_up
            else None,
            stop=choice.stop_sequences if not _ran_tools(exchanges) else None,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            stream=settings.stream,
            timeout=settings.timeout,
        )
        _constrain(request, constraint)
        return request

    # -- one hop ---------------------------------------------------------------

    async def _ask(
        self,
        request: CompletionRequest,
        catalog: Catalog,
        choice: FormatChoice,
        unwrap: bool = True,
        guard: HonestyGuard | None = None,
        done: Sequence[RoundCall] = (),
        *,
        said: str = "",
    ) -> AsyncIterator[LoopEvent | _Hop]:
        """Stream one reply: safe text out at once, then what the reply means.

        ``guard``: asked at the reply's first safe words whether they wait for
        the reply's end (``done``: the turn's calls so far). The stream is
        never paused for it: words wait while it is undecided, and its answer
        is awaited only after the reply ended, outside the server's timeout.

        A model whose template opens the reasoning block starts inside it, so
        nothing shows until its closer, unless the server already split the
        reasoning off (it came as reasoning deltas before any text). A
        JSON-schema reply is JSON until its end: nothing in it can stream.
        ``said``: what a failed attempt at this reply already streamed; the
        same words are not streamed again.
        """
        opened = opens_reasoning_in_template(self._settings.model)
        detector: StreamDetector | _HoldAll | None = (
            _HoldAll() if request.response_format else None
        )
        accumulator = ToolCallAccumulator()
        raw: list[str] = []
        streamed: list[str] = []
        holding: bool | None = None
        waiting = ""  # safe words not out yet: the guard has not decided

        def decided() -> bool | None:
            return False if guard is None else guard.holds_now(done)

        # aclosing: a turn that stops early must close the HTTP stream at once.
        async with contextlib.aclosing(self._backend.complete(request)) as deltas:
            async for delta in deltas:
                if isinstance(delta, TextDelta):
                    raw.append(delta.text)
                    if detector is None:
                        detector = detector_for(
                            choice.dialect, catalog=catalog, start_in_reasoning=opened
                        )
                    if safe := detector.feed(delta.text):
                        streamed.append(safe)
                        waiting += safe
                        if holding is None:
                            holding = decided()
                        if holding is False:
                            if new := _unsaid(said, streamed, waiting):
                                yield TextOut(new)
                            waiting = ""
                elif isinstance(delta, ReasoningDelta):
                    opened = False  # the server parses reasoning itself
                    yield ReasoningOut(delta.text)
                elif isinstance(delta, ToolCallDelta):
                    accumulator.add(delta)
                elif isinstance(delta, Finish) and delta.reason == "length":
                    _LOGGER.debug("Reply cut by max_tokens")
        text = "".join(raw)
        held = isinstance(detector, _HoldAll)
        if held and unwrap and (answer := unwrap_answer(text)):
            text = answer
        parse = choice.interpret(text, accumulator.calls(), catalog, self._warn_once)
        # Only held-back text that the dialect also calls content may still show.
        tail = "" if parse.calls or detector is None else detector.finish()
        if tail and parse.content.startswith("".join(streamed) + tail):
            streamed.append(tail)
            waiting += tail
        if holding is None and waiting:
            # The reply has ended: waiting no longer holds up the server. Words
            # before a call are said before it runs anyway: no verdict needed.
            holding = not parse.calls and guard is not None and await guard.holds(done)
        if not holding and waiting and (new := _unsaid(said, streamed, waiting)):
            yield TextOut(new)
        out = "".join(streamed)
        if holding:
            yield _Hop(text=text, parse=parse, streamed="", held=out)
        else:
            yield _Hop(text=text, parse=parse, streamed=out)

    # -- constraints ---------------------------------------------------------------

    def _constraint(
        self, index: int, prepared: _Prepared, forced: str | None = None
    ) -> HopConstraint | None:
        """This hop's constraint; ``forced``: a call the honesty guard asks for
        (that tool, or any tool when "")."""
        settings = self._settings
        catalog, choice = prepared.catalog, prepared.choice
        if not self._kinds or not catalog.names:
            return None
        shape: tuple[Shape, str | None] | None
        if forced is not None:
            shape = (Shape.ONE_CALL, forced) if forced else (Shape.ANY_CALL, None)
        else:
            shape = hop_shape(
                settings.tool_choice, settings.strict_calls, index, catalog
            )
        if shape is None:
            if index == 0 and settings.tool_choice not in _POLICY_WORDS:
                self._warn_once(
                    f"The tool choice {settings.tool_choice!r} names no tool this"
                    " agent has; the model chooses freely"
                )
            return None
        return plan(
            shape,
            text_mode=choice.text_mode,
            kinds=self._kinds,
            named_tool_choice=settings.server.named_tool_choice,
            catalog=catalog,
            key=prepared.key,
            dialect=choice.dialect.name,
            opened_reasoning=opens_reasoning_in_template(settings.model),
        )

    def _constraint_rejected(self, kind: str) -> None:
        self._kinds = tuple(k for k in self._kinds if k != kind)
        self._state.refused.add(kind)
        self._warn_once(
            f"The server refused the {kind} constraint; Toolbelt sends requests"
            " without it from now on"
        )

    # -- running calls -----------------------------------------------------------

    async def _run_calls(
        self, calls: list[ToolCall], catalog: Catalog, budget: TurnBudget
    ) -> AsyncIterator[ResultOut]:
        """Admit calls in order, run reads together and writes in order.

        Results come back in call order whatever finished first.
        """
        executor = self._executor
        slots: list[asyncio.Future[ResultOut]] = []
        refused: set[int] = set()
        ordered: list[tuple[ToolCall, asyncio.Future[ResultOut]]] = []
        loop = asyncio.get_running_loop()
        for call in calls:
            is_device = executor.is_device_command(call)
            schema = (
                None
                if executor.validates_arguments(call)
                else catalog.schema(call.name)
            )
            admitted, refusal = budget.admit(call, schema, is_device=is_device)
            slot: asyncio.Future[ResultOut] = loop.create_future()
            slots.append(slot)
            if refusal is not None:
                refused.add(len(slots) - 1)
                slot.set_result(
                    ResultOut(call, refusal.text, True, 0.0, refusal.text, refused=True)
                )
            elif executor.is_read_only(admitted):
                task = asyncio.ensure_future(self._run_one(admitted))
                task.add_done_callback(_copy_into(slot))
            else:
                ordered.append((admitted, slot))

        async def run_in_order() -> None:
            for call, slot in ordered:
                slot.set_result(await self._run_one(call))

        writer = asyncio.ensure_future(run_in_order())
        try:
            for position, slot in enumerate(slots):
                outcome = await slot
                if position not in refused:
                    budget.remember(outcome.call, outcome.text)
                yield outcome
        finally:
            if not writer.done():
                writer.cancel()

    async def _run_one(self, call: ToolCall) -> ResultOut:
        """Run one call; any exception becomes an ``ERROR:`` result."""
        started = time.monotonic()
        try:
            outcome = await self._executor.run(call)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            _LOGGER.debug("Tool %s failed: %s", call.name, err)
            text = error_text(err)
            return ResultOut(call, text, True, time.monotonic() - started, text)
        # The one place a result becomes text; nothing re-serialises it later.
        text = result_text(outcome.data)
        return ResultOut(
            call,
            outcome.data,
            outcome.failed,
            time.monotonic() - started,
            text,
            answer=outcome.answer,
        )

    # -- the end of a turn ----------------------------------------------------------

    async def _settle(
        self, seen: Recognized, catalog: Catalog, budget: TurnBudget
    ) -> AsyncIterator[LoopEvent]:
        """The end of a turn whose device command the model would not run,
        even when reminded: the host runs it, where the agent allows it, and
        its own sentence is said; otherwise the user hears nothing changed.
        """
        if seen.call is None:
            yield TextOut(seen.unchanged)
            return
        _LOGGER.debug("Running the recognized %s for the model", seen.intent)
        yield CallsOut((seen.call,))
        outcomes = [o async for o in self._run_calls([seen.call], catalog, budget)]
        for outcome in outcomes:
            yield outcome
        commands = [RoundCall(outcome, True) for outcome in outcomes]
        said = await confirm_silence(commands, self._confirm)
        if said is None:
            said = "Done." if acted(commands) else seen.unchanged
        yield ControlOut(said, "recognized_command")

    async def _empty_answer(
        self, hop: _Hop, calls: Sequence[ToolCall], done: Sequence[RoundCall]
    ) -> str:
        """What is said when the model's last reply says nothing.

        After device commands that all worked: the host's own confirmation.
        When nothing ran and the model wrote nothing at all: silence, where
        the host keeps a silent answer. Otherwise a short sentence, since the
        host speaks the last assistant message.
        """
        phrases = self._settings.phrases
        if calls:
            return phrases.gave_up
        if done:
            return await confirm_silence(done, self._confirm) or phrases.no_answer
        if self._settings.silent_answers and not hop.text.strip():
            return ""
        return phrases.no_answer

    def _base_messages(
        self,
        messages: History,
        catalog: Catalog,
        choice: FormatChoice,
        guidance: str,
        *,
        wrap_up: bool = False,
    ) -> History:
        """The system prompt gains the tools' guidance and the dialect's prompt.

        At the cap (``wrap_up``) the dialect's prompt, which lists the tools,
        is left out, as native mode stops sending ``tools``.
        """
        extra = [guidance]
        if choice.text_mode and not wrap_up:
            extra.append(choice.dialect.system_prompt(catalog))
        first = messages[0] if messages else None
        system = (
            first if isinstance(first, dict) and first["role"] == "system" else None
        )
        parts = [system["content"].rstrip()] if system else []
        parts.extend(part for part in extra if part)
        head = [{"role": "system", "content": "\n\n".join(parts)}] if parts else []
        return head + (messages[1:] if system else list(messages))

    def _messages(
        self,
        base: History,
        exchanges: History,
        dialect: Dialect,
        fallback: bool,
    ) -> list[dict[str, Any]]:
        return render_history([*base, *exchanges], dialect, fallback=fallback)


_POLICY_WORDS = frozenset({"auto", "required", "required_first"})
_HERMES = get_dialect("hermes")


def _constrain(request: CompletionRequest, constraint: HopConstraint | None) -> None:
    """Put one hop's constraint into its request."""
    if constraint is None or not (request.tools or constraint.kind != "tool_choice"):
        return
    request.tool_choice = constraint.tool_choice
    request.response_format = constraint.response_format
    request.grammar = constraint.grammar
    if constraint.only_tool and request.tools:
        request.tools = [
            tool
            for tool in request.tools
            if tool.get("function", {}).get("name") == constraint.only_tool
        ]


def _reader(
    choice: FormatChoice, request: CompletionRequest, constraint: HopConstraint | None
) -> FormatChoice:
    """Read a constrained reply in the format the constraint imposed.

    A grammar in the dialect's own frame keeps the dialect; a JSON schema, or
    the hermes frame standing in for another format, makes hermes calls.
    """
    if constraint is None or not (request.grammar or request.response_format):
        return choice
    if request.grammar and constraint.frame == choice.dialect.name:
        return choice
    return replace(choice, name=_HERMES.name, dialect=_HERMES)


class _HoldAll:
    """A stream detector that holds everything back (JSON is no speech)."""

    def feed(self, text: str) -> str:
        return ""

    def finish(self) -> str:
        return ""


def _ran_tools(exchanges: History) -> bool:
    """Whether the turn ran tools (beside the honesty guard's reminder)."""
    return any(isinstance(item, Exchange) for item in exchanges)


def _copy_into(slot: asyncio.Future[ResultOut]) -> Callable[[asyncio.Task], None]:
    def copy(task: asyncio.Task) -> None:
        if slot.done():
            return
        if task.cancelled():
            slot.cancel()
        elif (err := task.exception()) is not None:
            slot.set_exception(err)
        else:
            slot.set_result(task.result())

    return copy


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
