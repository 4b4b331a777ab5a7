"""A hostile model server: what it costs Home Assistant's memory and event loop.

Three scenarios, each in a fresh process so its peak memory is its own:

- ``line``: a chat-completions stream that never sends a newline (64 KiB
  pieces of one ``data:`` line, up to ``SEND_MB``), read by the backend with a
  10 s request timeout. Printed: the process's peak memory growth, the time
  until the reply ended, and how it ended.
- ``models``: a ``/v1/models`` answer of ``MODELS_MB`` MB (valid JSON), listed
  by the backend. Printed: peak memory growth and how it ended.
- ``calls``: one turn in a real Home Assistant whose first reply holds
  ``CALLS`` native tool calls. Printed: the longest event-loop stall during the
  turn (a 5 ms ticker), the turn's wall time, the tool results the model read
  and the size of the next request.

Run from the repository root: .venv/bin/python -m bench.hostile_bench
(SEND_MB=2048 MODELS_MB=50 CALLS=10000 by default; one scenario:
``python -m bench.hostile_bench line``).
"""

from __future__ import annotations

# HA 2026.11 must be imported before httpx (tests/ha_bridge explains why).
import tests.ha_bridge.plugin  # noqa: F401  # isort: skip

import asyncio
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace

from aiohttp import web
from homeassistant import loader
from homeassistant.components import conversation
from homeassistant.core import Context
from homeassistant.helpers import frame
import openai
from pytest_homeassistant_custom_component.common import async_test_home_assistant

from bench.instant_bench import _agents
from bench.prompt_bench import _demo_home
from custom_components.toolbelt.backend.base import CompletionRequest
from custom_components.toolbelt.backend.errors import BackendError
from custom_components.toolbelt.backend.openai_compat import OpenAICompatBackend
from custom_components.toolbelt.backend.servers import get_server_kind
from tests.openai_server import OpenAIServer, Pause

SEND_MB = int(os.environ.get("SEND_MB", "2048"))
MODELS_MB = int(os.environ.get("MODELS_MB", "50"))
CALLS = int(os.environ.get("CALLS", "10000"))
PARALLEL = int(os.environ.get("PARALLEL", "200"))
PIECE = 64 * 1024


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _endless_line(request: web.Request) -> web.StreamResponse:
    """A stream whose one line never ends (until SEND_MB or the client leaves)."""
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    await resp.write(b'data: {"choices": [{"index": 0, "delta": {"content": "')
    piece = b"a" * PIECE
    with contextlib.suppress(ConnectionError):
        for _ in range(SEND_MB * 1024 * 1024 // PIECE):
            await resp.write(piece)
    return resp


async def _serve_line() -> str:
    """The endless-line server alone (its own process: it streams at full speed)."""
    app = web.Application()
    app.router.add_post("/v1/chat/completions", _endless_line)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()
    return ""


async def _spawn(scenario: str) -> tuple[asyncio.subprocess.Process, int]:
    """A server scenario in its own process (it serves at full speed); its port."""
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.hostile_bench",
        scenario,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert server.stdout is not None
    return server, int(await server.stdout.readline())


async def _line() -> str:
    server, port = await _spawn("serve-line")
    client = openai.AsyncOpenAI(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0
    )
    backend = OpenAICompatBackend(
        client, kind=get_server_kind("llamacpp"), label="bench"
    )
    _ = client.chat.completions  # the SDK imports its resources on first use
    request = CompletionRequest(
        model="m", messages=[{"role": "user", "content": "hi"}], timeout=10.0
    )
    before = _peak_mb()
    started = time.perf_counter()
    try:
        async for _ in backend.complete(request):
            pass
        outcome = "ended without error"
    except BackendError as err:
        outcome = f"{type(err).__name__}: {err}"[:120]
    elapsed = time.perf_counter() - started
    grown = _peak_mb() - before
    await client.close()
    server.kill()
    await server.wait()
    return f"line: +{grown:.0f} MB peak in {elapsed:.1f} s; {outcome}"


async def _models() -> str:
    body = io.BytesIO()  # written piece by piece: no peak before the measure
    body.write(b'{"object": "list", "data": [')
    count = 0
    while body.tell() < MODELS_MB * 1024 * 1024:
        body.write(
            b'%s{"id": "model-%07d", "object": "model", "owned_by": "x"}'
            % (b", " if count else b"", count)
        )
        count += 1
    body.write(b"]}")
    body = body.getvalue()
    async with OpenAIServer() as server:
        server.models_body = body
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="x")
        backend = OpenAICompatBackend(
            client, kind=get_server_kind("other"), label="bench"
        )
        _ = client.models  # the SDK imports its resources on first use
        before = _peak_mb()
        started = time.perf_counter()
        try:
            outcome = f"{len(await backend.list_models())} ids"
        except BackendError as err:
            outcome = f"{type(err).__name__}: {err}"[:120]
        elapsed = time.perf_counter() - started
        grown = _peak_mb() - before
        await client.close()
    return (
        f"models: {len(body) / 1e6:.0f} MB body: +{grown:.0f} MB peak"
        f" in {elapsed:.2f} s; {outcome}"
    )


async def _serve_calls() -> str:
    """A server (its own process) whose first reply holds CALLS native calls.

    It prints its port, then, on a line from stdin, what the second request
    held: the tool results and the body's size.
    """
    async with OpenAIServer(models=["bench-model"]) as server:
        calls = [
            {"name": "HassTurnOn", "arguments": {"name": f"Lamp {i}"}}
            for i in range(CALLS)
        ]
        server.reply_tool_calls(calls, pieces=(1000,))
        server.reply_text("Too many.")
        print(server.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        if len(server.requests) < 2:
            return "null"
        nxt = server.requests[1]
        results = sum(1 for m in nxt.messages if m["role"] == "tool")
        return json.dumps([results, len(json.dumps(nxt.body).encode())])


async def _calls() -> str:
    server, port = await _spawn("serve-calls")
    url = SimpleNamespace(base_url=f"http://127.0.0.1:{port}/v1")
    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
            frame.async_setup(hass)  # as the test harness's hass fixture does
            await _demo_home(hass)
            agent = (await _agents(hass, url))[False]
            stall = 0.0
            running = True

            async def tick() -> None:
                nonlocal stall
                last = time.perf_counter()
                while running:
                    await asyncio.sleep(0.005)
                    now = time.perf_counter()
                    stall = max(stall, now - last - 0.005)
                    last = now

            ticker = asyncio.ensure_future(tick())
            started = time.perf_counter()
            result = await conversation.async_converse(
                hass, "turn on every lamp", None, Context(), agent_id=agent
            )
            elapsed = time.perf_counter() - started
            running = False
            await ticker
            for entry in hass.config_entries.async_entries():
                await hass.config_entries.async_unload(entry.entry_id)
            await hass.async_stop()
    assert server.stdin is not None
    assert server.stdout is not None
    server.stdin.write(b"report\n")
    report = json.loads(await server.stdout.readline())
    await server.wait()
    if report is None:
        said = result.response.speech["plain"]["speech"]
        outcome = f"no second request; said {said!r}"
    else:
        outcome = f"{report[0]} results read, next request {report[1] / 1e6:.2f} MB"
    return (
        f"calls: {CALLS} native calls: longest event-loop stall {stall * 1000:.0f} ms,"
        f" turn {elapsed:.1f} s, {outcome}"
    )


async def _parallel() -> str:
    """PARALLEL turns at once, each waiting 1 s for the server, with Assist."""
    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
            frame.async_setup(hass)  # as the test harness's hass fixture does
            await _demo_home(hass)
            async with OpenAIServer(models=["bench-model"]) as server:
                agent = (await _agents(hass, server))[False]
                for _ in range(PARALLEL):
                    server.reply([Pause(1.0), {"content": "Done."}])
                started = time.perf_counter()
                results = await asyncio.gather(
                    *(
                        conversation.async_converse(
                            hass, f"turn {i}", None, Context(), agent_id=agent
                        )
                        for i in range(PARALLEL)
                    )
                )
                elapsed = time.perf_counter() - started
                said = [r.response.speech["plain"]["speech"] for r in results]
                for entry in hass.config_entries.async_entries():
                    await hass.config_entries.async_unload(entry.entry_id)
            await hass.async_stop()
    return (
        f"parallel: {PARALLEL} turns at once, server 1 s each:"
        f" {said.count('Done.')} answered in {elapsed:.1f} s"
        f" ({(elapsed - 1) / PARALLEL * 1000:.0f} ms of Home Assistant per turn)"
    )


SCENARIOS = {
    "line": _line,
    "models": _models,
    "calls": _calls,
    "parallel": _parallel,
    "serve-line": _serve_line,
    "serve-calls": _serve_calls,
}


def report() -> None:
    """Each scenario in its own process (clean peak memory); one line each."""
    chosen = sys.argv[1:]
    if len(chosen) == 1 and chosen[0] in SCENARIOS:
        print(asyncio.run(SCENARIOS[chosen[0]]()))
        return
    for name in chosen or ("line", "models", "calls", "parallel"):
        subprocess.run([sys.executable, "-m", "bench.hostile_bench", name], check=True)


if __name__ == "__main__":
    report()
