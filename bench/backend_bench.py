"""Print the backend's own latency: server chunk written -> delta in our hands.

Runs the scripted OpenAI server and OpenAICompatBackend in one process, so both sides
share time.monotonic(). Figures: per-chunk delivery latency (socket + SDK SSE parsing
+ our delta mapping) and our CPU time per chunk.

    .venv/bin/python -m bench.backend_bench
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import timeit

import openai
from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk

from custom_components.toolbelt.backend.base import CompletionRequest, TextDelta
from custom_components.toolbelt.backend.openai_compat import (
    OpenAICompatBackend,
    _ChunkReader,
)
from custom_components.toolbelt.backend.servers import get_server_kind
from tests.openai_server import OpenAIServer

ROUNDS = 30
CHUNKS = 40


async def main() -> None:
    async with OpenAIServer() as server:
        client = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="x", max_retries=0
        )
        backend = OpenAICompatBackend(
            client, kind=get_server_kind("llamacpp"), label="bench"
        )
        request = CompletionRequest(
            model="m", messages=[{"role": "user", "content": "hi"}], timeout=10
        )
        latencies: list[float] = []
        first: list[float] = []
        cpu_per_chunk: list[float] = []
        for _ in range(ROUNDS):
            # A gap between chunks, like a model generating tokens.
            server.reply_text("w " * CHUNKS, chunk_delay=0.002)
            received: list[float] = []
            cpu0 = time.process_time()
            async for delta in backend.complete(request):
                if isinstance(delta, TextDelta):
                    received.append(time.monotonic())
            cpu = time.process_time() - cpu0
            sent = [
                t
                for c, t in zip(
                    server.last_request.chunks,
                    server.last_request.chunk_times,
                    strict=True,
                )
                if c["choices"] and c["choices"][0]["delta"].get("content")
            ]
            pairs = [r - s for s, r in zip(sent, received, strict=True)]
            latencies += pairs
            first.append(pairs[0])
            cpu_per_chunk.append(cpu / len(received))
        await client.close()

    def ms(values: list[float]) -> str:
        q = statistics.quantiles(values, n=20)
        return (
            f"median {statistics.median(values) * 1e3:.3f} ms, p95 {q[18] * 1e3:.3f} ms"
        )

    print(f"chunk written -> TextDelta yielded: {ms(latencies)}")
    print(f"first text chunk -> first TextDelta: {ms(first)}")
    print(
        "process CPU per chunk (server + client in one process): "
        f"median {statistics.median(cpu_per_chunk) * 1e6:.0f} µs"
    )
    chunk_json = json.dumps(
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "delta": {"content": "hello"},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
        }
    )
    chunk = construct_type(type_=ChatCompletionChunk, value=json.loads(chunk_json))
    reader = _ChunkReader(("reasoning_content", "reasoning"))
    n = 5000
    ours = timeit.timeit(lambda: reader.read(chunk), number=n) / n
    sdk = (
        timeit.timeit(
            lambda: construct_type(
                type_=ChatCompletionChunk, value=json.loads(chunk_json)
            ),
            number=n,
        )
        / n
    )
    print(f"our chunk -> deltas mapping: {ours * 1e6:.1f} µs per chunk")
    print(f"openai SDK chunk parse (json + construct): {sdk * 1e6:.1f} µs per chunk")


if __name__ == "__main__":
    asyncio.run(main())
