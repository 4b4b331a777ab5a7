"""Prompt size and prefix reuse: Toolbelt beside HA's own llama.cpp agent.

Both agents run in one Home Assistant on the same demo home (6 lights, 2
covers in 4 areas, exposed to Assist) against the same local recording server
(tests/openai_server.py), with HA's default instructions and the Assist API.
Printed per agent:

- characters of system prompt plus tools in the first request (tools as
  compact JSON; in a text format the catalog is inside the system prompt);
- prefix reuse over a three-turn conversation with a device call in every
  turn: of each request, the share the next request repeats at its start (a
  local server's prompt cache skips exactly that share);
- the agent's own wall time per hop, model time excluded: the server answers
  at once, so this is HA, the agent, HTTP and the intent handler.

Run from the repository root: .venv/bin/python -m bench.prompt_bench
(the newest lane: HA's llama_cpp integration needs HA 2026.10 or newer).
"""

from __future__ import annotations

import asyncio
from itertools import pairwise
import json
import os
from pathlib import Path
import socket
import statistics
import tempfile
import time
from typing import Any

from homeassistant import loader
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntryState, ConfigSubentryData
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er, llm
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from custom_components.toolbelt.const import (
    CONF_BASE_URL,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_SERVER_KIND,
    CONF_TOOL_FORMAT,
    DOMAIN,
)
from custom_components.toolbelt.tools.const import API_ID as TOOLS_API_ID
from tests.openai_server import OpenAIServer

LIGHTS = {
    "kitchen_light": ("Kitchen light", "Kitchen"),
    "kitchen_spots": ("Kitchen spots", "Kitchen"),
    "living_room_lamp": ("Living room lamp", "Living Room"),
    "living_room_ceiling": ("Living room ceiling light", "Living Room"),
    "bedroom_light": ("Bedroom light", "Bedroom"),
    "porch_light": ("Porch light", "Garage"),
}
COVERS = {
    "living_room_blinds": ("Living room blinds", "Living Room"),
    "garage_door": ("Garage door", "Garage"),
}
TURNS = (
    ("turn on the kitchen light", "HassTurnOn", "Kitchen light"),
    ("close the garage door", "HassTurnOff", "Garage door"),
    ("turn off the kitchen light", "HassTurnOff", "Kitchen light"),
)
ROUNDS = 5
# Set to a directory to write each agent's first system prompt and tools there.
DUMP = os.environ.get("PROMPT_BENCH_DUMP")


async def _demo_home(hass: HomeAssistant) -> None:
    """Template lights and covers on input helpers, each in an area."""
    # HA's web server on a free local port: 8123 may be a dev instance's.
    http = {"server_host": ["127.0.0.1"], "server_port": _free_port()}
    assert await async_setup_component(hass, "http", {"http": http})
    for component in ("homeassistant", "conversation", "intent"):
        assert await async_setup_component(hass, component, {})
    helpers = {f"{key}_state": {"name": key} for key in (*LIGHTS, *COVERS)}
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": helpers}
    )
    lights = [
        {
            "name": name,
            "unique_id": key,
            "state": f"{{{{ is_state('input_boolean.{key}_state', 'on') }}}}",
            "turn_on": _action("turn_on", key),
            "turn_off": _action("turn_off", key),
        }
        for key, (name, _area) in LIGHTS.items()
    ]
    covers = [
        {
            "name": name,
            "unique_id": key,
            "state": f"{{{{ 'open' if is_state('input_boolean.{key}_state', 'on')"
            " else 'closed' }}",
            "open_cover": _action("turn_on", key),
            "close_cover": _action("turn_off", key),
        }
        for key, (name, _area) in COVERS.items()
    ]
    assert await async_setup_component(
        hass, "template", {"template": [{"light": lights, "cover": covers}]}
    )
    await hass.async_block_till_done()
    areas, entities = ar.async_get(hass), er.async_get(hass)
    for domain, table in (("light", LIGHTS), ("cover", COVERS)):
        for key, (_name, area) in table.items():
            area_id = (
                areas.async_get_area_by_name(area) or areas.async_create(area)
            ).id
            entity_id = entities.async_get_entity_id(domain, "template", key)
            entities.async_update_entity(entity_id, area_id=area_id)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _action(service: str, key: str) -> dict[str, Any]:
    return {
        "action": f"input_boolean.{service}",
        "target": {"entity_id": f"input_boolean.{key}_state"},
    }


async def _add_agents(hass: HomeAssistant, server: OpenAIServer) -> None:
    """Toolbelt (auto, react, auto with its own tools) and HA's llama.cpp agent."""
    agents = {
        "auto": ("auto", [llm.LLM_API_ASSIST]),
        "react": ("react", [llm.LLM_API_ASSIST]),
        "tools": ("auto", [llm.LLM_API_ASSIST, TOOLS_API_ID]),
    }
    for key, (fmt, apis) in agents.items():
        MockConfigEntry(
            domain=DOMAIN,
            title=f"Toolbelt {key}",
            unique_id=f"{server.base_url}#{key}",
            data={CONF_SERVER_KIND: "llamacpp", CONF_BASE_URL: server.base_url},
            subentries_data=[
                ConfigSubentryData(
                    data={
                        CONF_MODEL: "bench-model",
                        CONF_LLM_HASS_API: apis,
                        CONF_TOOL_FORMAT: fmt,
                    },
                    subentry_type="conversation",
                    title=f"toolbelt_{key}",
                    unique_id=None,
                )
            ],
        ).add_to_hass(hass)
    core_llama_cpp_entry(server.base_url).add_to_hass(hass)
    for entry in hass.config_entries.async_entries():
        if entry.state is ConfigEntryState.NOT_LOADED:
            await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    for entry in hass.config_entries.async_entries():
        assert entry.state is ConfigEntryState.LOADED, (entry.domain, entry.state)


def core_llama_cpp_entry(base_url: str) -> MockConfigEntry:
    """HA core's llama.cpp integration with one agent on Assist, streaming."""
    return MockConfigEntry(
        domain="llama_cpp",
        title="llama.cpp",
        data={"base_url": base_url, "streaming": True},
        subentries_data=[
            ConfigSubentryData(
                data={"chat_model": "bench-model", "llm_hass_api": ["assist"]},
                subentry_type="conversation",
                title="ha_llama_cpp",
                unique_id=None,
            )
        ],
    )


def _prompt(request: Any) -> str:
    """A request as a prompt cache sees it: tools, then messages, in order.

    Open at the end, as a chat template leaves it: the closing brackets of the
    JSON are not prompt, so a request that the next one continues counts whole.
    """
    text = json.dumps(
        {"tools": request.tools or [], "messages": request.messages},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return text.removesuffix("]}")


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _static_chars(request: Any) -> int:
    system = request.messages[0]["content"] if request.messages else ""
    tools = json.dumps(request.tools or [], ensure_ascii=False, separators=(",", ":"))
    return len(system) + (len(tools) if request.tools else 0)


async def _conversation(
    hass: HomeAssistant, server: OpenAIServer, agent_id: str, react: bool
) -> tuple[list[Any], list[float]]:
    """Three turns with a call each; the requests, and wall ms per hop."""
    start = len(server.requests)
    server.reply_text("Hello.")
    await conversation.async_converse(hass, "hi", None, None, agent_id=agent_id)
    names = [t["function"]["name"] for t in server.requests[start].tools or []]
    conversation_id = None
    per_hop: list[float] = []
    first = len(server.requests)
    for text, tool, target in TURNS:
        name = next((n for n in names if n.endswith(tool)), tool)
        if react:
            server.reply_text(f'Action: {tool}\nAction Input: {{"name": "{target}"}}')
            server.reply_text("Final Answer: Done.")
        else:
            server.reply_tool_calls([{"name": name, "arguments": {"name": target}}])
            server.reply_text("Done.")
        began = time.perf_counter()
        result = await conversation.async_converse(
            hass, text, conversation_id, None, agent_id=agent_id
        )
        per_hop.append((time.perf_counter() - began) * 1000 / 2)
        conversation_id = result.conversation_id
        assert result.response.speech["plain"]["speech"] == "Done.", result.response
    return server.requests[start:first] + server.requests[first:], per_hop


def _reuse(requests: list[Any]) -> float:
    """Of every request but the last, the share the next one repeats at its start."""
    prompts = [_prompt(r) for r in requests]
    seen = sum(len(p) for p in prompts[:-1])
    kept = sum(_common_prefix(a, b) for a, b in pairwise(prompts))
    return kept / seen


async def main() -> tuple[list[tuple[str, int, float, float]], dict[str, str]]:
    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
            await _demo_home(hass)
            async with OpenAIServer() as server:
                await _add_agents(hass, server)
                agents = {
                    state.attributes.get("friendly_name") or state.entity_id: state
                    for state in hass.states.async_all("conversation")
                }
                rows = []
                dumps: dict[str, str] = {}
                for label, key, react in (
                    ("HA core llama_cpp", "ha_llama_cpp", False),
                    ("Toolbelt auto", "toolbelt_auto", False),
                    ("Toolbelt react", "toolbelt_react", True),
                    ("Toolbelt auto+tools", "toolbelt_tools", False),
                ):
                    state = next(s for n, s in agents.items() if key in n.lower())
                    hops: list[float] = []
                    for _ in range(ROUNDS):
                        requests, per_hop = await _conversation(
                            hass, server, state.entity_id, react
                        )
                        hops += per_hop
                    conversation_requests = requests[1:]
                    dumps[key] = json.dumps(
                        {
                            "system": requests[0].messages[0]["content"],
                            "tools": requests[0].tools,
                        },
                        indent=1,
                    )
                    rows.append(
                        (
                            label,
                            _static_chars(requests[0]),
                            _reuse(conversation_requests),
                            statistics.median(hops),
                        )
                    )
                for entry in hass.config_entries.async_entries():
                    await hass.config_entries.async_unload(entry.entry_id)
            await hass.async_stop()
    return rows, dumps


def report() -> None:
    """Run the bench, print the table, and write the dumps when asked."""
    rows, dumps = asyncio.run(main())
    if DUMP:
        for key, text in dumps.items():
            Path(DUMP, f"{key}.json").write_text(text)
    core = rows[0][1]
    print(
        f"{'agent':<20} {'prompt+tools':>13} {'x core':>7} {'reuse':>7} {'ms/hop':>7}"
    )
    for label, chars, reuse, ms in rows:
        print(f"{label:<20} {chars:>13,} {chars / core:>7.2f} {reuse:>7.1%} {ms:>7.2f}")


if __name__ == "__main__":
    report()
