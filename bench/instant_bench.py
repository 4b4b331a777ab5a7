"""Instant confirmations: the end-to-end time of a device command, on and off.

One Home Assistant (the prompt_bench demo home), one local recording server
(tests/openai_server.py) that takes a fixed time per request, as a model
server's prompt reading and first token would. Two Toolbelt agents on it, the
same but for the option. Each turns on a light ("turn on the kitchen light"):
the model calls HassTurnOn, then (option off) writes the answer in a second
request. Printed: the median wall time of the whole turn, as
``conversation.async_converse`` sees it, and the requests per turn.

Run from the repository root: .venv/bin/python -m bench.instant_bench
(REQUEST_MS=400 ROUNDS=5 by default; set them in the environment).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time

from homeassistant import loader
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er, frame, llm

# The bridge that lets phcc 0.13.375 run on HA 2026.11 (tests/ha_bridge).
import tests.ha_bridge.plugin  # noqa: F401

# isort: split
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from bench.prompt_bench import _demo_home
from custom_components.toolbelt.const import (
    CONF_BASE_URL,
    CONF_INSTANT_CONFIRMATIONS,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_SERVER_KIND,
    DOMAIN,
)
from tests.openai_server import OpenAIServer

REQUEST_MS = float(os.environ.get("REQUEST_MS", "400"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))


async def _agents(hass: HomeAssistant, server: OpenAIServer) -> dict[bool, str]:
    """Two agents, instant confirmations on and off; entity id by the option."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Bench server",
        data={CONF_SERVER_KIND: "llamacpp", CONF_BASE_URL: server.base_url},
        subentries_data=[
            ConfigSubentryData(
                data={
                    CONF_MODEL: "bench-model",
                    CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
                    CONF_INSTANT_CONFIRMATIONS: instant,
                },
                subentry_type="conversation",
                title=f"instant {'on' if instant else 'off'}",
                unique_id=None,
            )
            for instant in (True, False)
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    ids = [
        e.entity_id
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    ]
    return {
        instant: next(i for i in ids if i.endswith(suffix))
        for instant, suffix in ((True, "_on"), (False, "_off"))
    }


async def _turn(
    hass: HomeAssistant, server: OpenAIServer, agent: str, instant: bool
) -> tuple[float, int, str]:
    delay = REQUEST_MS / 1000
    server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}], delay=delay
    )
    if not instant:
        server.reply_text("The kitchen light is on.", delay=delay)
    before = len(server.requests)
    await hass.services.async_call(
        "light", "turn_off", {"entity_id": "light.kitchen_light"}, blocking=True
    )
    started = time.perf_counter()
    result = await conversation.async_converse(
        hass, "turn on the kitchen light", None, Context(), agent_id=agent
    )
    elapsed = time.perf_counter() - started
    assert hass.states.get("light.kitchen_light").state == "on"
    spoken = result.response.speech["plain"]["speech"]
    return elapsed, len(server.requests) - before, spoken


async def main() -> list[tuple[str, float, int, str]]:
    rows = []
    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
            # phcc 0.13.375 leaves this to its pytest fixture on HA 2026.11.
            frame.async_setup(hass)
            await _demo_home(hass)
            async with OpenAIServer(models=["bench-model"]) as server:
                agents = await _agents(hass, server)
                for instant in (False, True):
                    times, requests, spoken = [], 0, ""
                    for _ in range(ROUNDS):
                        elapsed, requests, spoken = await _turn(
                            hass, server, agents[instant], instant
                        )
                        times.append(elapsed)
                    label = "on" if instant else "off (default)"
                    rows.append((label, statistics.median(times), requests, spoken))
                for entry in hass.config_entries.async_entries():
                    await hass.config_entries.async_unload(entry.entry_id)
            await hass.async_stop()
    return rows


def report() -> None:
    """Run the bench and print one line per setting."""
    rows = asyncio.run(main())
    print(f"server: {REQUEST_MS:.0f} ms per request; median of {ROUNDS} turns")
    print(f"{'instant confirmations':<24} {'turn ms':>8} {'requests':>9}  spoken")
    for label, seconds, requests, spoken in rows:
        print(f"{label:<24} {seconds * 1000:>8.0f} {requests:>9}  {spoken!r}")
    saved = rows[0][1] - rows[1][1]
    print(f"saved per device command: {saved * 1000:.0f} ms")


if __name__ == "__main__":
    report()
