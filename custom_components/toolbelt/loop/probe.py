"""The agent flow's capability check: one small tool request, and what came back.

It tells the person which mode their model gets (structured native calls, a
text format Toolbelt reads, or no call at all) before they rely on it by voice.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from ..backend.accumulate import ToolCallAccumulator
from ..backend.base import (
    CompletionRequest,
    ModelBackend,
    TextDelta,
    ToolCallDelta,
)
from ..backend.errors import BackendBadRequestError, BackendError
from ..toolcalls import Catalog
from ..toolcalls.constraint import Shape
from .format_choice import FormatChoice, choose_format
from .tool_choice import TEXT_KINDS, HopConstraint, plan

PROBE_PROMPT = "Turn on the kitchen light."
# A chat question: a tool call in reply proves the constraint was honoured.
CONSTRAINT_PROMPT = "Say hello in five words."


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """The mode the model got, in one sentence for the flow's form."""

    mode: str  # "native", "text", "none" or "error"
    summary: str
    dialect: str | None = None


async def async_probe_tool_mode(
    backend: ModelBackend,
    *,
    model: str,
    tool_format: str,
    request_timeout: float,
    tool: dict[str, Any],
) -> ProbeReport:
    """Send one tool request and classify the answer; never raises.

    ``tool``: a turn-on tool as the agent will send it (the HA side picks it).
    """
    catalog = Catalog.from_openai([tool])
    choice = choose_format(tool_format, model, has_tools=True)
    request = _request(
        "You control a smart home. Use the tools to act on devices.",
        PROBE_PROMPT,
        model=model,
        choice=choice,
        tool=tool,
        max_tokens=256,
        timeout=request_timeout,
    )
    request.stop = choice.stop_sequences
    try:
        text, structured = await _reply(backend, request)
    except (BackendError, TimeoutError) as err:
        return ProbeReport("error", f"The check failed: {err}.")
    result = choice.interpret(text, structured, catalog, _quiet)
    if structured and result.calls:
        return ProbeReport(
            "native", "Native tool calls: the server returned a structured call."
        )
    if result.calls:
        return ProbeReport(
            "text",
            f"Text tool calls: the model wrote a {result.dialect} call and Toolbelt"
            " read it.",
            result.dialect,
        )
    reply = " ".join("".join(text).split())[:120] or "(empty)"
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
    *,
    model: str,
    kinds: tuple[str, ...],
    named_tool_choice: bool,
    request_timeout: float,
    tool: dict[str, Any],
) -> ConstraintReport:
    """Force one call to ``tool`` with each kind; never raises.

    Honoured: the call came back although the question asked for none.
    Ignored: the server took the field and the model chatted anyway.
    Refused: the server answered 400 (or failed).
    """
    catalog = Catalog.from_openai([tool])
    (name,) = catalog.names
    honoured: list[str] = []
    lines: list[str] = []
    for kind in kinds:
        constraint = plan(
            (Shape.ONE_CALL, name),
            text_mode=kind in TEXT_KINDS,
            kinds=(kind,),
            named_tool_choice=named_tool_choice,
            catalog=catalog,
            key="probe",
        )
        if constraint is None:
            continue
        verdict = await _try_constraint(
            backend, model, tool, constraint, request_timeout
        )
        if verdict == "honoured":
            honoured.append(kind)
        lines.append(f"{kind}: {verdict}")
    return ConstraintReport(tuple(honoured), "; ".join(lines) or NONE_TRIED)


async def _try_constraint(
    backend: ModelBackend,
    model: str,
    tool: dict[str, Any],
    constraint: HopConstraint,
    request_timeout: float,
) -> str:
    text_mode = constraint.kind in TEXT_KINDS
    choice = choose_format("hermes" if text_mode else "auto", model, has_tools=True)
    catalog = Catalog.from_openai([tool])
    request = _request(
        "You are a friendly assistant.",
        CONSTRAINT_PROMPT,
        model=model,
        choice=choice,
        tool=tool,
        max_tokens=128,
        timeout=request_timeout,
    )
    request.tool_choice = constraint.tool_choice
    request.response_format = constraint.response_format
    request.grammar = constraint.grammar
    try:
        text, structured = await _reply(backend, request)
    except BackendBadRequestError:
        return "refused"
    except (BackendError, TimeoutError) as err:
        return f"failed ({err.__class__.__name__})"
    result = choice.interpret(text, structured, catalog, _quiet)
    if any(call.name in catalog for call in result.calls):
        return "honoured"
    return "ignored"


def _request(
    system: str,
    question: str,
    *,
    model: str,
    choice: FormatChoice,
    tool: dict[str, Any],
    max_tokens: int,
    timeout: float,
) -> CompletionRequest:
    """One unstreamed question; in text mode the dialect's prompt lists the tool."""
    if choice.text_mode:
        system += "\n\n" + choice.dialect.system_prompt(Catalog.from_openai([tool]))
    return CompletionRequest(
        model=model,
        messages=[
            {"role": "system", "content": system},
            {"role": "user", "content": question},
        ],
        tools=[tool] if choice.send_tools else None,
        max_tokens=max_tokens,
        stream=False,
        timeout=timeout,
    )


async def _reply(
    backend: ModelBackend, request: CompletionRequest
) -> tuple[str, list[dict[str, Any]]]:
    """One whole reply: its text and its structured calls (raises BackendError)."""
    accumulator = ToolCallAccumulator()
    text: list[str] = []
    async with asyncio.timeout(request.timeout):
        async with contextlib.aclosing(backend.complete(request)) as deltas:
            async for delta in deltas:
                if isinstance(delta, TextDelta):
                    text.append(delta.text)
                elif isinstance(delta, ToolCallDelta):
                    accumulator.add(delta)
    return "".join(text), accumulator.calls()


def _quiet(_message: str) -> None:
    """The probe has no one to warn."""
