"""The agent flow's capability check: one small tool request, and what came back.

It tells the person which mode their model gets (structured native calls, a
text format Toolbelt reads, or no call at all) before they rely on it by voice.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from ..backend.accumulate import ToolCallAccumulator
from ..backend.base import (
    CompletionRequest,
    ModelBackend,
    TextDelta,
    ToolCallDelta,
)
from ..backend.errors import BackendError
from ..toolcalls import Catalog
from .format_choice import choose_format

PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "HassTurnOn",
        "description": "Turns on a device or entity",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "area": {"type": "string"}},
        },
    },
}
PROBE_PROMPT = "Turn on the kitchen light."


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """The mode the model got, in one sentence for the flow's form."""

    mode: str  # "native", "text", "none" or "error"
    summary: str
    dialect: str | None = None


async def async_probe_tool_mode(
    backend: ModelBackend, *, model: str, tool_format: str, request_timeout: float
) -> ProbeReport:
    """Send one tool request and classify the answer; never raises."""
    catalog = Catalog.from_openai([PROBE_TOOL])
    choice = choose_format(tool_format, model, has_tools=True)
    system = "You control a smart home. Use the tools to act on devices."
    if choice.text_mode:
        system += "\n\n" + choice.dialect.system_prompt(catalog)
    request = CompletionRequest(
        model=model,
        messages=[
            {"role": "system", "content": system},
            {"role": "user", "content": PROBE_PROMPT},
        ],
        tools=[PROBE_TOOL] if choice.send_tools else None,
        stop=choice.stop_sequences,
        max_tokens=256,
        stream=False,
        timeout=request_timeout,
    )
    accumulator = ToolCallAccumulator()
    text: list[str] = []
    try:
        async with asyncio.timeout(request_timeout):
            async with contextlib.aclosing(backend.complete(request)) as deltas:
                async for delta in deltas:
                    if isinstance(delta, TextDelta):
                        text.append(delta.text)
                    elif isinstance(delta, ToolCallDelta):
                        accumulator.add(delta)
    except (BackendError, TimeoutError) as err:
        return ProbeReport("error", f"The check failed: {err}.")
    structured = accumulator.calls()
    result = choice.interpret("".join(text), structured, catalog, lambda _msg: None)
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
