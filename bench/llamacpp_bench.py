"""Prompt-cache use on a real llama-server: Toolbelt beside HA's own llama.cpp agent.

Both agents talk, one after the other, to Debian's llama-server (installed by
script/llama_server) serving the same hand-set test model (tests/llama/), each
on a fresh server so both start cold, in the demo home of ``prompt_bench``.
The model calls HassTurnOn for the kitchen light on every user message and
answers after the tool's result, so a turn is two requests. Over a three-turn
conversation, llama-server reports per request how many prompt tokens it
processed (``timings.prompt_n``) and how many it reused from its cache
(``timings.cache_n``); a recording proxy in front of the server keeps both.

The first request of a new conversation is shown once more for Toolbelt with
its warm-up (the agent's fixed prompt sent ahead, warmup.py): the warm-up's own
request is left out of the table.

Run from the repository root: .venv/bin/python -m bench.llamacpp_bench
(HA's llama_cpp integration needs HA 2026.10 or newer: the current or the
previous lane).
"""

from __future__ import annotations

# Before anything imports httpx: HA 2026.11's alias, and phcc's moved helper.
import tests.ha_bridge.plugin  # noqa: F401

# isort: split

import asyncio
import json
from pathlib import Path
import tempfile

from homeassistant import loader
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntryState, ConfigSubentryData
from homeassistant.helpers import frame
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from bench.prompt_bench import _demo_home, core_llama_cpp_entry
from custom_components.toolbelt.const import (
    CONF_BASE_URL,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_REQUEST_TIMEOUT,
    CONF_SERVER_KIND,
    CONF_WARM_UP,
    DOMAIN,
)
from custom_components.toolbelt.ha.warmup import WARM_UP_DELAY
from tests.llama.model import Recipe
from tests.llama.server import LlamaServers, assist_tool
from tests.llama.timings import TimingProxy

TURN_ON = {"name": assist_tool("HassTurnOn"), "arguments": {"name": "Kitchen light"}}
MODEL = Recipe(
    reply=("<tool_call>", f"\n{json.dumps(TURN_ON)}\n", "</tool_call>"),
    after_tool=("Done.",),
)
TURNS = (
    "turn on the kitchen light",
    "please turn on the kitchen light again",
    "and once more, the kitchen light",
)


def _entry(key: str, base_url: str) -> MockConfigEntry:
    if key.startswith("toolbelt"):
        return MockConfigEntry(
            domain=DOMAIN,
            title="Toolbelt",
            data={CONF_SERVER_KIND: "llamacpp", CONF_BASE_URL: base_url},
            subentries_data=[
                ConfigSubentryData(
                    data={
                        CONF_MODEL: "bench-model",
                        CONF_LLM_HASS_API: ["assist"],
                        CONF_REQUEST_TIMEOUT: 120,
                        CONF_WARM_UP: key == "toolbelt_warm",
                    },
                    subentry_type="conversation",
                    title="toolbelt",
                    unique_id=None,
                )
            ],
        )
    return core_llama_cpp_entry(base_url)


async def _measure(key: str, servers: LlamaServers) -> list[dict[str, int]]:
    """One agent's three turns on a fresh server; the timings per request."""
    servers.stop()
    server = servers.serve(MODEL, context=8192)
    proxy = await TimingProxy(f"http://127.0.0.1:{server.port}").start()
    base_url = proxy.base_url
    try:
        with tempfile.TemporaryDirectory() as config_dir:
            async with async_test_home_assistant(config_dir=config_dir) as hass:
                frame.async_setup(hass)  # as the test harness's hass fixture does
                hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
                await _demo_home(hass)
                entry = _entry(key, base_url)
                entry.add_to_hass(hass)
                await hass.config_entries.async_setup(entry.entry_id)
                await hass.async_block_till_done()
                assert entry.state is ConfigEntryState.LOADED, entry.state
                if key == "toolbelt_warm":
                    # The warm-up goes out after its quiet time; the timings
                    # measured are the conversation's, not the warm-up's.
                    await asyncio.sleep(WARM_UP_DELAY + 1)
                    await hass.async_block_till_done(wait_background_tasks=True)
                    assert len(proxy.timings) == 1, proxy.timings
                    proxy.timings.clear()
                (agent,) = [
                    s.entity_id
                    for s in hass.states.async_all("conversation")
                    if s.entity_id != "conversation.home_assistant"
                ]
                conversation_id = None
                for text in TURNS:
                    result = await conversation.async_converse(
                        hass, text, conversation_id, None, agent_id=agent
                    )
                    speech = result.response.speech["plain"]["speech"]
                    assert speech == "Done.", (key, speech)
                    conversation_id = result.conversation_id
                assert hass.states.get("light.kitchen_light").state == "on"
                await hass.config_entries.async_unload(entry.entry_id)
                await hass.async_stop()
    finally:
        await proxy.close()
    return proxy.timings


async def main() -> dict[str, list[dict[str, int]]]:
    """Both agents' timings per request, Toolbelt first."""
    with tempfile.TemporaryDirectory() as logs:
        servers = LlamaServers(Path(logs))
        try:
            return {
                label: await _measure(key, servers)
                for label, key in (
                    ("Toolbelt", "toolbelt"),
                    ("Toolbelt, warm-up", "toolbelt_warm"),
                    ("HA core llama_cpp", "llama_cpp"),
                )
            }
        finally:
            servers.stop()


def report() -> None:
    """Run the bench and print the side-by-side table."""
    results = asyncio.run(main())
    labels = list(results)
    header = f"{'turn':>4} {'request':<14}"
    for label in labels:
        header += f" | {label + ' prompt_n / cache_n':>36}"
    print(header)
    rows = max(len(t) for t in results.values())
    for index in range(rows):
        line = f"{index // 2 + 1:>4} {'user message' if index % 2 == 0 else 'tool result':<14}"
        for label in labels:
            timing = results[label][index] if index < len(results[label]) else None
            if timing is None:
                line += f" | {'-':>36}"
                continue
            total = timing["prompt_n"] + timing["cache_n"]
            share = timing["cache_n"] / total if total else 0.0
            cell = (
                f"{timing['prompt_n']:>5} / {timing['cache_n']:>5} ({share:.1%} reused)"
            )
            line += f" | {cell:>36}"
        print(line)
    for label in labels:
        processed = sum(t["prompt_n"] for t in results[label])
        reused = sum(t["cache_n"] for t in results[label])
        print(f"{label}: {processed:,} prompt tokens processed, {reused:,} reused")
    print("First request of a new conversation (cache_n / prompt tokens):")
    for label in labels:
        first = results[label][0]
        total = first["prompt_n"] + first["cache_n"]
        print(
            f"  {label}: {first['cache_n']:,} / {total:,} ({first['cache_n'] / total:.1%})"
        )


if __name__ == "__main__":
    report()
