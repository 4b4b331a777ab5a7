"""The tool loop: ask the model, read its calls, run them, feed results back.

HA-free: it talks to a ``ModelBackend`` and an ``Executor`` and reports what
happens as ``LoopEvent``s. It only orchestrates; data moves through it once
per hop: request -> backend (deltas, whole calls at the end) -> ``ReplyReader``
(safe text out at once; what the reply means) -> caps and guards -> executor
-> results appended -> next hop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
import contextlib
from dataclasses import dataclass, field, replace
import logging
import time
from typing import Any

from ..backend.base import DEFAULT_REQUEST_TIMEOUT, CompletionRequest, ModelBackend
from ..backend.errors import (
    BackendBadRequestError,
    BackendBusyError,
    BackendContextOverflowError,
    BackendError,
    BackendToolParseError,
)
from ..backend.servers import OPENAI, ServerKind
from ..toolcalls import Catalog, ParseResult, ToolCall
from ..toolcalls.aliases import NO_ALIASES, Aliases
from ..toolcalls.prompting.constraint import Shape, fingerprint
from ..toolcalls.prompting.render import error_text, lean_tools, result_text
from ..toolcalls.reading.calls import new_call_id
from ..toolcalls.registry import opens_reasoning_in_template
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
from .reply_reader import Reply, ReplyReader
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
    # The host's other names for its tools: a call by one reaches the tool.
    aliases: Aliases = NO_ALIASES


@dataclass(slots=True)
class _Prepared:
    """What every hop of one turn shares; ``base`` loses the catalog at the cap."""

    catalog: Catalog
    tools: list[dict[str, Any]]
    sent_tools: list[dict[str, Any]]
    choice: FormatChoice
    messages: History
    guidance: str
    base: History
    key: str


@dataclass(slots=True)
class _TurnState:
    """One turn as it goes: its hops' exchanges, its calls, its mode."""

    prepared: _Prepared
    budget: TurnBudget
    # Results as the dialect's plain text instead of tool messages.
    fallback: bool
    guard: HonestyGuard | None
    exchanges: History = field(default_factory=list)
    done: list[RoundCall] = field(default_factory=list)
    # The tool the honesty guard makes the next request call ("" any), if any.
    forced: str | None = None


@dataclass(slots=True)
class _Retry:
    """What retries of one hop's request mended so far."""

    constraint: HopConstraint | None
    recovered: set[type[BackendError]] = field(default_factory=set)
    # The hop's constraint was dropped after the server refused it.
    dropped: bool = False


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
        """One turn's hops, until an answer (see ``run``): ask, read, run, append."""
        self._answer_format = answer_format
        turn = self._start(messages, tools, guidance, guard)
        # Every hop but the last may run tools; the caps end the turn in time.
        for index in range(self._settings.max_tool_calls + 2):
            wrap_up = turn.budget.exhausted
            yield HopStart(index)
            reply: Reply | None = None
            async with contextlib.aclosing(self._hop(index, turn, wrap_up)) as hop:
                async for event in hop:
                    if isinstance(event, Reply):
                        reply = event
                    else:
                        yield event
            assert reply is not None
            if reply.parse.reasoning:
                yield ReasoningOut(reply.parse.reasoning)
            if wrap_up or not (reply.parse.calls or reply.parse.rejected):
                seen = None if wrap_up else await self._disputed(turn)
                if seen is not None and self._remind(turn, reply, seen):
                    continue
                async with contextlib.aclosing(self._end(turn, reply, seen)) as end:
                    async for event in end:
                        yield event
                return
            async with contextlib.aclosing(self._round(turn, reply)) as round_:
                async for event in round_:
                    yield event
                    if isinstance(event, ControlOut):
                        return
        yield TextOut(self._settings.phrases.gave_up)

    def _start(
        self,
        messages: History,
        tools: list[dict[str, Any]],
        guidance: str,
        guard: HonestyGuard | None,
    ) -> _TurnState:
        settings = self._settings
        prepared = self._prepare(messages, tools, guidance)
        return _TurnState(
            prepared=prepared,
            budget=TurnBudget(settings.max_tool_calls, settings.max_device_commands),
            # The one place the tool role is decided: a text dialect or a server
            # that refused it uses fallback mode; a retry may prove a refusal.
            fallback=prepared.choice.text_mode or not self._state.tool_role,
            guard=guard,
        )

    async def _disputed(self, turn: _TurnState) -> Recognized | None:
        """The device command an answer would leave undone, if the guard sees one."""
        guard = turn.guard
        return None if guard is None else await guard.disputes(turn.done)

    def _remind(self, turn: _TurnState, reply: Reply, seen: Recognized) -> bool:
        """Send the model back once to run the command its answer skipped (the
        answer is never said); False when it was reminded already."""
        guard = turn.guard
        assert guard is not None
        if guard.reminded:
            return False
        guard.reminded = True
        _LOGGER.debug("No device command for %s yet", seen.intent)
        claim = reply.parse.content.strip() or "(no answer)"
        turn.exchanges.append({"role": "assistant", "content": claim})
        turn.exchanges.append({"role": "user", "content": NOTHING_CHANGED_NOTE})
        turn.forced = seen.tool or ""
        return True

    async def _end(
        self, turn: _TurnState, reply: Reply, seen: Recognized | None
    ) -> AsyncGenerator[LoopEvent]:
        """The turn's answer: the reply's unsaid rest, or the loop's own words."""
        if seen is not None:
            settle = self._settle(seen, turn.prepared.catalog, turn.budget)
            async with contextlib.aclosing(settle) as events:
                async for event in events:
                    yield event
        elif not (reply.streamed + reply.rest).strip():
            # Said in place of nothing; "" is a silent answer.
            yield TextOut(await self._empty_answer(reply, reply.parse.calls, turn.done))
        elif reply.rest:
            yield TextOut(reply.rest)

    async def _round(self, turn: _TurnState, reply: Reply) -> AsyncGenerator[LoopEvent]:
        """Run the reply's calls and append the exchange; a ``ControlOut`` ends
        the turn (a round's results may end it themselves)."""
        parse, budget = reply.parse, turn.budget
        # Refused call markup goes back as an error the model can fix.
        rejected = [
            ToolCall(id=new_call_id(), name=item.name or "invalid_call", arguments={})
            for item in parse.rejected
        ]
        if reply.held:
            # Words before a real call: they were no false claim.
            yield TextOut(reply.held)
        cut = reply.text[: parse.end] if parse.end is not None else reply.text
        content = parse.content.strip()
        calls = (*parse.calls, *rejected)
        yield CallsOut(calls, raw=cut, content=content, dialect=parse.dialect)
        outcomes = await self._outcomes(turn, parse, rejected)
        for outcome in outcomes:
            yield outcome
        finished = [
            RoundCall(o, self._executor.is_device_command(o.call)) for o in outcomes
        ]
        turn.done.extend(finished)
        taken = await round_answer(self._takes_control, finished)
        if taken is not None:
            _LOGGER.debug("The %s check took control of the turn", taken[1])
            yield ControlOut(*taken)
            return
        if budget.exhausted:
            # Nothing more may run: the catalog leaves the prompt too.
            turn.prepared.base = self._base_messages(turn.prepared, wrap_up=True)
        results = tuple(outcome.text for outcome in outcomes)
        turn.exchanges.append(
            Exchange(raw=cut, content=content, calls=calls, results=results)
        )

    def opening_request(
        self, messages: History, tools: list[dict[str, Any]], *, guidance: str = ""
    ) -> CompletionRequest:
        """The first request ``run`` sends for these messages and tools.

        Built by the same code as every hop, so a warm-up that sends it (with
        the user's words left out) starts byte for byte as a real turn does.
        """
        turn = self._start(messages, tools, guidance, None)
        constraint = self._constraint(0, turn.prepared)
        return self._request(turn, False, constraint)

    def _prepare(
        self, messages: History, tools: list[dict[str, Any]], guidance: str
    ) -> _Prepared:
        """What every hop of a turn shares: the catalog, the format, the prompt."""
        settings = self._settings
        # The full schemas check arguments; the model reads the lean ones.
        catalog = Catalog.from_openai(tools, settings.aliases)
        choice = choose_format(
            settings.tool_format, settings.model, has_tools=bool(tools)
        )
        prepared = _Prepared(
            catalog=catalog,
            tools=tools,
            sent_tools=lean_tools(tools),
            choice=choice,
            messages=messages,
            guidance=guidance,
            base=[],
            key=fingerprint(catalog) if self._kinds and catalog.names else "",
        )
        prepared.base = self._base_messages(prepared)
        return prepared

    def _request(
        self, turn: _TurnState, wrap_up: bool, constraint: HopConstraint | None
    ) -> CompletionRequest:
        """One hop's request: the prompt so far, the tools, the hop's constraint."""
        settings = self._settings
        prepared = turn.prepared
        choice = prepared.choice
        request = CompletionRequest(
            model=settings.model,
            messages=self._messages(turn),
            tools=prepared.sent_tools
            if choice.send_tools and prepared.tools and not wrap_up
            else None,
            stop=choice.stop_sequences if not _ran_tools(turn.exchanges) else None,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            stream=settings.stream,
            timeout=settings.timeout,
        )
        return _constrained(request, constraint)

    # -- one hop ---------------------------------------------------------------

    async def _hop(
        self, index: int, turn: _TurnState, wrap_up: bool
    ) -> AsyncGenerator[LoopEvent | Reply]:
        """Ask for one reply and read it (safe text out at once), retrying what
        a retry can mend; the ``Reply`` comes last."""
        prepared = turn.prepared
        constraint = None if wrap_up else self._constraint(index, prepared, turn.forced)
        turn.forced = None
        request = self._request(turn, wrap_up, constraint)
        own_format = self._answer_format is not None and not request.constrained
        if own_format:
            request = replace(request, response_format=self._answer_format)
        reader = ReplyReader(
            prepared.choice,
            prepared.catalog,
            constraint,
            warn_once=self._warn_once,
            opens_reasoning=opens_reasoning_in_template(self._settings.model),
            unwrap=not own_format,
            guard=turn.guard,
            done=turn.done,
        )
        retry = _Retry(constraint)
        while reader.reply is None:
            try:
                reading = reader.read(request, self._backend.complete(request))
                async with contextlib.aclosing(reading) as events:
                    async for event in events:
                        yield event
            except BackendError as err:
                request = await self._retried(err, request, turn, retry)
        self._learn(retry, own_format)
        yield reader.reply

    async def _retried(
        self,
        err: BackendError,
        request: CompletionRequest,
        turn: _TurnState,
        retry: _Retry,
    ) -> CompletionRequest:
        """The request to send again after ``err``, as a new value; ``err``
        itself when no retry can mend it."""
        if isinstance(err, BackendToolParseError):
            # The server's own tool parser lost the reply: ask for the raw
            # text (same prompt, cached) and read the call ourselves.
            if request.raw_text:
                raise err
            _LOGGER.info("Reading the model's call ourselves: %s", err)
            return replace(request, raw_text=True)
        if isinstance(err, BackendBusyError):
            await self._wait_out(err, retry)
        elif isinstance(err, BackendContextOverflowError):
            _trim(err, turn, retry)
        elif isinstance(err, BackendBadRequestError):
            if request.constrained and not retry.dropped:
                # A refused constraint is a separate fact from the tool role:
                # first try the same request without it.
                retry.dropped = True
                plain = request.unconstrained()
                if retry.constraint and retry.constraint.only_tool:
                    plain = replace(plain, tools=turn.prepared.sent_tools)
                return plain
            self._fall_back(err, turn, retry)
        else:
            raise err
        return replace(request, messages=self._messages(turn))

    async def _wait_out(self, err: BackendBusyError, retry: _Retry) -> None:
        """A busy server is not a broken one: wait as long as it asks, once,
        if that fits in the request timeout."""
        wait = err.retry_after
        if BackendBusyError in retry.recovered or wait is None:
            raise err
        if wait > self._settings.timeout:
            raise err
        retry.recovered.add(BackendBusyError)
        _LOGGER.info("Server busy; retrying in %.1f s", wait)
        await asyncio.sleep(wait)

    def _fall_back(
        self, err: BackendBadRequestError, turn: _TurnState, retry: _Retry
    ) -> None:
        """Perhaps the server refuses our tool messages: say the same in plain
        text. Only a retry that works proves it (``_learn``)."""
        if (
            turn.fallback
            or not _ran_tools(turn.exchanges)
            or BackendBadRequestError in retry.recovered
        ):
            raise err
        retry.recovered.add(BackendBadRequestError)
        turn.fallback = True

    def _learn(self, retry: _Retry, own_format: bool) -> None:
        """What a retry that worked proved about the server, kept for good."""
        if BackendBadRequestError in retry.recovered:
            _LOGGER.info("Server rejected the tool role; using fallback mode")
            self._state.tool_role = False
        elif retry.dropped and retry.constraint is not None:
            self._constraint_rejected(retry.constraint.kind)
        elif retry.dropped and own_format:
            self._answer_format = None
            self._constraint_rejected("json_schema")

    async def _outcomes(
        self, turn: _TurnState, parse: ParseResult, rejected: list[ToolCall]
    ) -> list[ResultOut]:
        """The round's results in call order: each call run, or refused."""
        budget = turn.budget
        calls = parse.calls
        outcomes = [
            o async for o in self._run_calls(calls, turn.prepared.catalog, budget)
        ]
        for call, item in zip(rejected, parse.rejected, strict=True):
            _LOGGER.debug("Refused call markup: %s", item.reason)
            text = budget.charge_rejected(item.reason)
            outcomes.append(ResultOut(call, text, True, 0.0, text, refused=True))
        last = outcomes[-1]
        if budget.exhausted and last.text != budget.limit_refusal():
            # Said where the model reads results, in the format's own words.
            outcomes[-1] = replace(last, text=last.text + budget.limit_note())
        return outcomes

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
    ) -> AsyncGenerator[LoopEvent]:
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
        self, hop: Reply, calls: Sequence[ToolCall], done: Sequence[RoundCall]
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

    def _base_messages(self, prepared: _Prepared, *, wrap_up: bool = False) -> History:
        """The system prompt gains the tools' guidance and the dialect's prompt.

        At the cap (``wrap_up``) the dialect's prompt, which lists the tools,
        is left out, as native mode stops sending ``tools``.
        """
        choice, messages = prepared.choice, prepared.messages
        extra = [prepared.guidance]
        if choice.text_mode and not wrap_up:
            extra.append(choice.dialect.system_prompt(prepared.catalog))
        first = messages[0] if messages else None
        system = (
            first if isinstance(first, dict) and first["role"] == "system" else None
        )
        parts = [system["content"].rstrip()] if system else []
        parts.extend(part for part in extra if part)
        head = [{"role": "system", "content": "\n\n".join(parts)}] if parts else []
        return head + (messages[1:] if system else list(messages))

    def _messages(self, turn: _TurnState) -> list[dict[str, Any]]:
        """The chat messages of the turn so far, in its current mode."""
        prepared = turn.prepared
        return render_history(
            [*prepared.base, *turn.exchanges],
            prepared.choice.dialect,
            fallback=turn.fallback,
        )


_POLICY_WORDS = frozenset({"auto", "required", "required_first"})


def _constrained(
    request: CompletionRequest, constraint: HopConstraint | None
) -> CompletionRequest:
    """``request`` with one hop's constraint in it."""
    if constraint is None or not (request.tools or constraint.kind != "tool_choice"):
        return request
    tools = request.tools
    if constraint.only_tool and tools:
        tools = [
            tool
            for tool in tools
            if tool.get("function", {}).get("name") == constraint.only_tool
        ]
    return replace(
        request,
        tool_choice=constraint.tool_choice,
        response_format=constraint.response_format,
        grammar=constraint.grammar,
        tools=tools,
    )


def _trim(err: BackendContextOverflowError, turn: _TurnState, retry: _Retry) -> None:
    """Cut the turn's largest result, once, so the request fits the context."""
    if BackendContextOverflowError in retry.recovered:
        raise err
    trimmed = trim_largest_result(turn.exchanges)
    if trimmed is None:
        raise err
    retry.recovered.add(BackendContextOverflowError)
    _LOGGER.warning("Request too long for the model: %s", trimmed)


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
