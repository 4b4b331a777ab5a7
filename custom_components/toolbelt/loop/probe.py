"""The agent check: the agent's own first hop, and what came back.

It tells the person which mode their model gets (structured native calls, a
text format Toolbelt reads, or no call at all) and which decoding constraints
the server honours, before they rely on it by voice. Each probe is one hop of
the agent's own tool loop, with the agent's settings (tool-call format,
temperature, token limit, streaming): the request is the one a turn sends, so
a constraint is tried in the mode the agent will send it (natively, a grammar
goes with the tools) and kept only if that exact request was honoured, and a
model that talks before its call gets the room a turn gives it. No tool runs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
import contextlib
from dataclasses import dataclass, replace
from typing import Any

from ..backend.base import CompletionRequest, Delta, Finish, ModelBackend
from ..backend.errors import BackendBadRequestError, BackendError
from ..toolcalls import Catalog, ToolCall
from .events import CallsOut, HopStart, ResultOut, TextOut
from .executor import ToolOutcome
from .tool_choice import AUTO
from .tool_loop import LoopSettings, ToolLoop

PROBE_SYSTEM = "You control a smart home. Use the tools to act on devices."
PROBE_PROMPT = "Turn on the kitchen light."
# A chat question: a tool call in reply proves the constraint was honoured.
CONSTRAINT_SYSTEM = "You are a friendly assistant."
CONSTRAINT_PROMPT = "Say hello in five words."


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """The mode the model got, in one sentence for the flow's form."""

    mode: str  # "native", "text", "cut_off", "none" or "error"
    summary: str
    dialect: str | None = None


async def async_probe_tool_mode(
    backend: ModelBackend, settings: LoopSettings, tool: dict[str, Any]
) -> ProbeReport:
    """Ask the agent's way for one call and classify the answer; never raises.

    ``tool``: a turn-on tool as the agent will send it (the HA side picks it).
    """
    free = replace(settings, tool_choice=AUTO, strict_calls=False, constraints=())
    try:
        hop = await _first_hop(backend, free, PROBE_SYSTEM, PROBE_PROMPT, tool)
    except (BackendError, TimeoutError, _Refused) as err:
        return ProbeReport("error", f"The check failed: {err}.")
    if hop.calls and hop.native:
        return ProbeReport(
            "native", "Native tool calls: the server returned a structured call."
        )
    if hop.calls:
        return ProbeReport(
            "text",
            f"Text tool calls: the model wrote a {hop.dialect} call and Toolbelt"
            " read it.",
            hop.dialect,
        )
    if hop.cut_off:
        return ProbeReport("cut_off", _cut_off(settings))
    reply = " ".join(hop.spoken.split())[:120] or "(empty)"
    return ProbeReport(
        "none",
        "No tool call: the model answered in plain text"
        f" ({reply}). Try another tool-call format or model.",
    )


NONE_TRIED = "none tried"


@dataclass(frozen=True, slots=True)
class ConstraintReport:
    """Which constraint kinds the server honoured, and one line per kind tried."""

    honoured: tuple[str, ...]
    summary: str

    def merge(self, other: ConstraintReport) -> ConstraintReport:
        """Both probes' findings, in the order they were tried."""
        lines = [s for s in (self.summary, other.summary) if s != NONE_TRIED]
        return ConstraintReport(
            self.honoured + other.honoured, "; ".join(lines) or NONE_TRIED
        )


async def async_probe_constraints(
    backend: ModelBackend,
    settings: LoopSettings,
    *,
    kinds: tuple[str, ...],
    tool: dict[str, Any],
) -> ConstraintReport:
    """Force one call to ``tool`` with each kind, as a turn would; never raises.

    Honoured: the call came back although the question asked for none.
    Ignored: the server took the request and the model chatted anyway.
    Refused: the server answered 400 to that request. A kind this mode cannot
    send (``tool_choice`` in a text format) is not tried.
    """
    (name,) = Catalog.from_openai([tool]).names
    honoured: list[str] = []
    lines: list[str] = []
    for kind in kinds:
        forced = replace(
            settings, tool_choice=name, strict_calls=False, constraints=(kind,)
        )
        try:
            hop = await _first_hop(
                backend, forced, CONSTRAINT_SYSTEM, CONSTRAINT_PROMPT, tool
            )
        except _Refused:
            verdict = "refused"
        except (BackendError, TimeoutError) as err:
            verdict = f"failed ({err.__class__.__name__})"
        else:
            if not hop.constrained:
                continue
            if hop.calls:
                verdict = "honoured"
                honoured.append(kind)
            elif hop.cut_off:
                verdict = f"cut off at {settings.max_tokens} tokens"
            else:
                verdict = "ignored"
        lines.append(f"{kind}: {verdict}")
    return ConstraintReport(tuple(honoured), "; ".join(lines) or NONE_TRIED)


def _cut_off(settings: LoopSettings) -> str:
    return (
        "Cut off: the reply reached the agent's token limit (Maximum tokens in an"
        f" answer: {settings.max_tokens}) before a complete tool call. Raise it"
        " and run the check again."
    )


@dataclass(frozen=True, slots=True)
class _Hop:
    """What the first hop of a probe turn came back with."""

    spoken: str
    calls: tuple[ToolCall, ...]  # accepted: the loop would run them
    dialect: str | None
    native: bool
    cut_off: bool
    constrained: bool


class _Refused(Exception):
    """The server answered 400 to a constrained request."""

    def __str__(self) -> str:
        return str(self.__cause__)


class _Watched:
    """The agent's backend, watched: structured calls, the finish, a refusal.

    A 400 to a constrained request ends the probe (the loop would retry
    without the constraint: that request is not the one being checked).
    """

    def __init__(self, backend: ModelBackend) -> None:
        self._backend = backend
        self.native = False
        self.finish: str | None = None
        self.constrained = False

    async def complete(self, request: CompletionRequest) -> AsyncGenerator[Delta]:
        # What the last request (a retry, say) came back with.
        self.native, self.finish = False, None
        self.constrained |= request.constrained
        try:
            async with contextlib.aclosing(self._backend.complete(request)) as deltas:
                async for delta in deltas:
                    if isinstance(delta, Finish):
                        self.native = bool(delta.tool_calls)
                        self.finish = delta.reason
                    yield delta
        except BackendBadRequestError as err:
            if request.constrained:
                raise _Refused from err
            raise

    async def list_models(self) -> list[str]:
        return await self._backend.list_models()


class _DryRun:
    """An executor that runs nothing: the check only looks at the call."""

    def is_read_only(self, call: ToolCall) -> bool:
        return True

    def is_device_command(self, call: ToolCall) -> bool:
        return False

    def validates_arguments(self, call: ToolCall) -> bool:
        return False

    async def run(self, call: ToolCall) -> ToolOutcome:
        return ToolOutcome({"checked": True})


async def _first_hop(
    backend: ModelBackend,
    settings: LoopSettings,
    system: str,
    question: str,
    tool: dict[str, Any],
) -> _Hop:
    """Run the agent's loop for one hop (raises BackendError or _Refused)."""
    watched = _Watched(backend)
    loop = ToolLoop(watched, _DryRun(), settings)
    messages: list[Any] = [
        {"role": "system", "content": system},
        {"role": "user", "content": question},
    ]
    spoken: list[str] = []
    calls: list[ToolCall] = []
    dialect: str | None = None
    async with contextlib.aclosing(loop.run(messages, [tool])) as events:
        async for event in events:
            if isinstance(event, HopStart) and event.index:
                break  # the second request is never sent
            if isinstance(event, TextOut):
                spoken.append(event.text)
            elif isinstance(event, CallsOut):
                dialect = event.dialect
            elif isinstance(event, ResultOut) and not event.refused:
                calls.append(event.call)
    return _Hop(
        spoken="".join(spoken),
        calls=tuple(calls),
        dialect=dialect,
        native=watched.native,
        cut_off=watched.finish == "length",
        constrained=watched.constrained,
    )
