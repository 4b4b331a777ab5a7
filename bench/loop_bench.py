"""Speed of the tool loop itself, apart from the model.

Prints two figures (targets from issue 4):

1. CPU time per hop that Toolbelt itself spends on a two-hop device command
   (stream reading, streaming detector, dialect parse, caps and guards, message
   building, ChatLog deltas), with the model replaced by a replay of recorded
   deltas so no model or network time is counted. Target: under 2 ms per hop.
2. Latency from the moment the test server writes the first non-tool text
   chunk to the moment the first content delta reaches HA's ChatLog, over real
   HTTP and SSE through the openai SDK. Target: within the same chunk, i.e.
   before the server's next chunk (chunks are 20 ms apart here).

Run: .venv/bin/python -m bench.loop_bench
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import json
from pathlib import Path
import statistics
import tempfile
import time
from typing import Any

from homeassistant.components.conversation.chat_log import ChatLog
from homeassistant.core import HomeAssistant
import openai

from custom_components.toolbelt.backend.base import (
    CompletionRequest,
    Delta,
    Finish,
    TextDelta,
)
from custom_components.toolbelt.backend.openai_compat import OpenAICompatBackend
from custom_components.toolbelt.backend.servers import get_server_kind
from custom_components.toolbelt.ha.entity import chat_log_deltas
from custom_components.toolbelt.ha.intent_tools import (
    device_guidance,
    is_device_command_name,
    is_read_only_name,
)
from custom_components.toolbelt.loop import LoopSettings, ToolLoop, ToolOutcome
from custom_components.toolbelt.toolcalls import ToolCall
from tests.openai_server import OpenAIServer

TOOLS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "tests/fixtures/corpus/tools.json").read_text()
)
HERMES = (
    "Sure.\n<tool_call>\n"
    '{"name": "HassTurnOn", "arguments": {"name": "kitchen light"}}\n</tool_call>'
)
ANSWER = "The kitchen light is on now, and it will stay on until you turn it off."
ROUNDS = 300
GUIDANCE = device_guidance(t["function"]["name"] for t in TOOLS)


class Executor:
    """Does nothing, instantly: device time is not Toolbelt's time."""

    def is_read_only(self, call: ToolCall) -> bool:
        return is_read_only_name(call.name)

    def is_device_command(self, call: ToolCall) -> bool:
        return is_device_command_name(call.name)

    def validates_arguments(self, call: ToolCall) -> bool:
        return False

    async def run(self, call: ToolCall) -> ToolOutcome:
        return ToolOutcome({"success": True})


class ReplayBackend:
    """Answers each request with recorded deltas: the model costs nothing."""

    def __init__(self, *, native: bool) -> None:
        self.native = native
        self.hop = 0

    async def complete(self, request: CompletionRequest) -> AsyncIterator[Delta]:
        self.hop += 1
        if self.hop % 2 == 1:
            if self.native:
                # The backend ends a reply with its calls whole.
                call = {"name": "HassTurnOn", "arguments": '{"name": "kitchen light"}'}
                yield Finish(
                    "tool_calls", tool_calls=({"id": "call_1", "function": call},)
                )
                return
            for i in range(0, len(HERMES), 4):
                yield TextDelta(HERMES[i : i + 4])
        else:
            for word in ANSWER.split(" "):
                yield TextDelta(word + " ")
        yield Finish("stop")

    async def list_models(self) -> list[str]:
        return ["replay"]


async def cpu_per_hop(hass: HomeAssistant, *, native: bool) -> list[float]:
    """CPU milliseconds per hop, one sample per two-hop turn."""
    samples = []
    messages = [
        {"role": "system", "content": "You control a house."},
        {"role": "user", "content": "turn on the kitchen light"},
    ]
    for n in range(ROUNDS):
        loop = ToolLoop(
            ReplayBackend(native=native),
            Executor(),
            LoopSettings(model="qwen2.5-7b-instruct"),
        )
        chat_log = ChatLog(hass, f"bench-{native}-{n}")
        start = time.process_time()
        async for _ in chat_log.async_add_delta_content_stream(
            "agent", chat_log_deltas(loop.run(messages, TOOLS, guidance=GUIDANCE))
        ):
            pass
        samples.append((time.process_time() - start) * 1000 / 2)
    return samples[10:]  # skip warm-up


async def first_delta_latency(hass: HomeAssistant) -> list[float]:
    """Server write of the first text chunk -> first content delta in the ChatLog."""
    latencies = []
    async with OpenAIServer() as server:
        client = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="sk-bench", max_retries=0
        )
        backend = OpenAICompatBackend(
            client, kind=get_server_kind("llamacpp"), label="bench"
        )
        for n in range(20):
            words = ANSWER.split(" ")
            chunks = [w + " " for w in words[:-1]] + [words[-1]]
            server.reply_text(ANSWER, chunks=chunks, chunk_delay=0.02)
            seen: list[float] = []

            def listener(_log: ChatLog, delta: dict, seen: list[float] = seen) -> None:
                if delta.get("content") and not seen:
                    seen.append(time.monotonic())

            chat_log = ChatLog(hass, f"latency-{n}", delta_listener=listener)
            loop = ToolLoop(backend, Executor(), LoopSettings(model="m"))
            messages = [{"role": "user", "content": "hello"}]
            async for _ in chat_log.async_add_delta_content_stream(
                "agent", chat_log_deltas(loop.run(messages, TOOLS, guidance=GUIDANCE))
            ):
                pass
            request = server.requests[-1]
            first_text = next(
                t
                for t, chunk in zip(request.chunk_times, request.chunks, strict=False)
                if "content" in json.dumps(chunk) and _has_text(chunk)
            )
            latencies.append((seen[0] - first_text) * 1000)
        await client.close()
    return latencies[2:]


def _has_text(chunk: Any) -> bool:
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    return bool(choices and (choices[0].get("delta") or {}).get("content"))


def _report(label: str, samples: list[float], unit: str = "ms") -> None:
    samples = sorted(samples)
    p95 = samples[int(len(samples) * 0.95) - 1]
    print(
        f"{label}: median {statistics.median(samples):.3f} {unit},"
        f" p95 {p95:.3f} {unit} (n={len(samples)})"
    )


async def main() -> None:
    hass = HomeAssistant(tempfile.mkdtemp())
    _report(
        "CPU per hop, text (hermes) two-hop device command",
        await cpu_per_hop(hass, native=False),
    )
    _report(
        "CPU per hop, native two-hop device command",
        await cpu_per_hop(hass, native=True),
    )
    _report(
        "first text chunk written -> first ChatLog delta (chunks 20 ms apart)",
        await first_delta_latency(hass),
    )


if __name__ == "__main__":
    asyncio.run(main())
