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

Then, per home size (8, 58, 208 and 1,000 exposed entities: the demo home plus
lights, switches and covers in 41 areas on four floors, tests/ha/generated_home.py),
the first request's characters for HA core and Toolbelt ``auto`` with the
large-home option at its default (auto: on above 100 entities), off (every
device listed) and on, and the large-home agent's prefix reuse over three turns
whose first looks the device up with find_devices.

Run from the repository root: .venv/bin/python -m bench.prompt_bench
(the newest lane: HA's llama_cpp integration needs HA 2026.10 or newer).
PROMPT_BENCH_SIZES=8,1000 measures only those sizes.

Last, characters of system prompt plus
tools of Toolbelt's first request in every tool-call format, with the dev
instance's demo home (config/demo_devices.yaml: lights, blinds, garage door,
lock, thermostat), Assist plus Toolbelt tools with a search backend, and a
hand-off to HA's built-in agent: 17 tools on HA 2026.11. ``--formats``
prints only that table.
"""

from __future__ import annotations

# HA 2026.11 must be imported before httpx (tests/ha_bridge explains why).
import tests.ha_bridge.plugin  # noqa: F401  # isort: skip

import asyncio
from itertools import pairwise
import json
import os
from pathlib import Path
import socket
import statistics
import sys
import tempfile
import time
from typing import Any

from homeassistant import loader
from homeassistant.components import conversation
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.config_entries import ConfigEntryState, ConfigSubentryData
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    entity_registry as er,
    frame,
    llm,
)
from homeassistant.setup import async_setup_component
from homeassistant.util.yaml import load_yaml_dict
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from custom_components.toolbelt.const import (
    CONF_BASE_URL,
    CONF_HANDOFF_TARGETS,
    CONF_LARGE_HOME,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_SERVER_KIND,
    CONF_TOOL_FORMAT,
    DOMAIN,
)
from custom_components.toolbelt.ha.large_home import FIND_DEVICES_TOOL, exposed_devices
from custom_components.toolbelt.toolcalls.registry import DIALECTS
from custom_components.toolbelt.tools.const import (
    API_ID as TOOLS_API_ID,
    CONF_SEARCH_BACKEND,
    CONF_SEARCH_URL,
    SEARCH_SEARXNG,
    SUBENTRY_TYPE_TOOLS,
)
from tests.ha.generated_home import async_setup_generated_home
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
SIZES = tuple(
    int(n) for n in os.environ.get("PROMPT_BENCH_SIZES", "8,58,208,1000").split(",")
)
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


# Toolbelt agents by key: (format, APIs, large-home option).
AGENTS = {
    "auto": ("auto", [llm.LLM_API_ASSIST], "auto"),
    "react": ("react", [llm.LLM_API_ASSIST], "auto"),
    "tools": ("auto", [llm.LLM_API_ASSIST, TOOLS_API_ID], "auto"),
}
SIZE_AGENTS = {
    "auto": AGENTS["auto"],
    "large": ("auto", [llm.LLM_API_ASSIST], "on"),
    "list": ("auto", [llm.LLM_API_ASSIST], "off"),
}


async def _add_agents(
    hass: HomeAssistant,
    server: OpenAIServer,
    agents: dict[str, tuple[str, list[str], str]],
) -> dict[str, str]:
    """Toolbelt's agents and HA's llama.cpp agent; entity ids by key."""
    for key, (fmt, apis, large_home) in agents.items():
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
                        CONF_LARGE_HOME: large_home,
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
    found = {}
    for state in hass.states.async_all("conversation"):
        name = (state.attributes.get("friendly_name") or state.entity_id).lower()
        for key in ("ha_llama_cpp", *(f"toolbelt_{k}" for k in agents)):
            if key in name:
                found[key] = state.entity_id
    return found


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


def _dump(request: Any) -> str:
    """A request's system prompt and tools, for PROMPT_BENCH_DUMP."""
    system = request.messages[0]["content"]
    return json.dumps({"system": system, "tools": request.tools}, indent=1)


def _static_chars(request: Any) -> int:
    system = request.messages[0]["content"] if request.messages else ""
    tools = json.dumps(request.tools or [], ensure_ascii=False, separators=(",", ":"))
    return len(system) + (len(tools) if request.tools else 0)


async def _conversation(
    hass: HomeAssistant,
    server: OpenAIServer,
    agent_id: str,
    react: bool,
    lookup: bool = False,
) -> tuple[list[Any], list[float]]:
    """Three turns with a call each; the requests, and wall ms per hop.

    ``lookup``: the first turn looks the device up with find_devices first.
    """
    start = len(server.requests)
    server.reply_text("Hello.")
    await conversation.async_converse(hass, "hi", None, None, agent_id=agent_id)
    names = [t["function"]["name"] for t in server.requests[start].tools or []]
    conversation_id = None
    per_hop: list[float] = []
    first = len(server.requests)
    for text, tool, target in TURNS:
        name = next((n for n in names if n.endswith(tool)), tool)
        hops = 2
        if lookup and len(per_hop) == 0:
            words = {"name": target.split()[0]}
            server.reply_tool_calls([{"name": FIND_DEVICES_TOOL, "arguments": words}])
            hops = 3
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
        per_hop.append((time.perf_counter() - began) * 1000 / hops)
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
    """The demo home: every agent's prompt, prefix reuse and time per hop."""
    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
            frame.async_setup(hass)
            await _demo_home(hass)
            async with OpenAIServer() as server:
                agents = await _add_agents(hass, server, AGENTS)
                rows = []
                dumps: dict[str, str] = {}
                for label, key, react in (
                    ("HA core llama_cpp", "ha_llama_cpp", False),
                    ("Toolbelt auto", "toolbelt_auto", False),
                    ("Toolbelt react", "toolbelt_react", True),
                    ("Toolbelt auto+tools", "toolbelt_tools", False),
                ):
                    hops: list[float] = []
                    for _ in range(ROUNDS):
                        requests, per_hop = await _conversation(
                            hass, server, agents[key], react
                        )
                        hops += per_hop
                    conversation_requests = requests[1:]
                    dumps[key] = _dump(requests[0])
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


DEMO_DEVICES = Path(__file__).parent.parent / "config" / "demo_devices.yaml"
# Every format an agent can be set to; ``native`` sends the tools as ``auto`` does.
FORMATS = ("auto", *(name for name in DIALECTS if name != "native"))


# The dev instance's demo entities (script/dev_provision.py) and their areas.
DEV_AREAS = {
    "light.kitchen_light": "Kitchen",
    "light.living_room_lamp": "Living Room",
    "light.living_room_ceiling_light": "Living Room",
    "cover.living_room_blinds": "Living Room",
    "sensor.living_room_temperature": "Living Room",
    "climate.thermostat": "Living Room",
    "cover.garage_door": "Garage",
    "lock.front_door_lock": "Hallway",
}


async def _dev_home(hass: HomeAssistant) -> None:
    """The dev instance's demo devices, in areas and exposed as it exposes them."""
    http = {"server_host": ["127.0.0.1"], "server_port": _free_port()}
    assert await async_setup_component(hass, "http", {"http": http})
    for component in ("homeassistant", "conversation", "intent"):
        assert await async_setup_component(hass, component, {})
    config = load_yaml_dict(str(DEMO_DEVICES))
    for domain in ("input_boolean", "input_number", "template", "climate"):
        assert await async_setup_component(hass, domain, {domain: config[domain]})
    await hass.async_block_till_done()
    areas, entities = ar.async_get(hass), er.async_get(hass)
    for state in hass.states.async_all():
        area = DEV_AREAS.get(state.entity_id)
        async_expose_entity(hass, "conversation", state.entity_id, area is not None)
        if area is not None:
            area_id = (
                areas.async_get_area_by_name(area) or areas.async_create(area)
            ).id
            entities.async_update_entity(state.entity_id, area_id=area_id)
    assert len({e for e in DEV_AREAS if hass.states.get(e)}) == len(DEV_AREAS)


async def format_sizes() -> tuple[int, dict[str, int], dict[str, str]]:
    """Tools; characters of system prompt + tools per format; system prompts."""
    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
            frame.async_setup(hass)
            hass.config.config_dir = config_dir
            await _dev_home(hass)
            async with OpenAIServer() as server:
                subentries = [
                    ConfigSubentryData(
                        data={
                            CONF_MODEL: "bench-model",
                            CONF_LLM_HASS_API: [llm.LLM_API_ASSIST, TOOLS_API_ID],
                            CONF_TOOL_FORMAT: fmt,
                            CONF_HANDOFF_TARGETS: ["conversation.home_assistant"],
                        },
                        subentry_type="conversation",
                        title=f"format {fmt}",
                        unique_id=None,
                    )
                    for fmt in FORMATS
                ]
                subentries.append(
                    ConfigSubentryData(
                        data={
                            CONF_SEARCH_BACKEND: SEARCH_SEARXNG,
                            CONF_SEARCH_URL: "http://127.0.0.1:9",
                        },
                        subentry_type=SUBENTRY_TYPE_TOOLS,
                        title="Tool backends",
                        unique_id=None,
                    )
                )
                entry = MockConfigEntry(
                    domain=DOMAIN,
                    title="Toolbelt formats",
                    data={CONF_SERVER_KIND: "llamacpp", CONF_BASE_URL: server.base_url},
                    subentries_data=subentries,
                )
                entry.add_to_hass(hass)
                assert await hass.config_entries.async_setup(entry.entry_id)
                await hass.async_block_till_done()
                agents = {
                    state.attributes["friendly_name"].removeprefix("format "): state
                    for state in hass.states.async_all("conversation")
                    if state.attributes.get("friendly_name", "").startswith("format ")
                }
                sizes: dict[str, int] = {}
                prompts: dict[str, str] = {}
                tools = 0
                for fmt in FORMATS:
                    server.reply_text("Hello.")
                    start = len(server.requests)
                    await conversation.async_converse(
                        hass, "hi", None, None, agent_id=agents[fmt].entity_id
                    )
                    request = server.requests[start]
                    sizes[fmt] = _static_chars(request)
                    if request.tools:
                        tools = len(request.tools)
                    prompts[fmt] = request.messages[0]["content"]
                assert await hass.config_entries.async_unload(entry.entry_id)
            await hass.async_stop()
    return tools, sizes, prompts


def report_formats() -> None:
    """Print the characters each format sends, beside ``react``'s."""
    tools, sizes, prompts = asyncio.run(format_sizes())
    if DUMP:
        for fmt, text in prompts.items():
            Path(DUMP, f"format_{fmt}.txt").write_text(text)
    print(f"system prompt + tools, {tools} tools (Assist, Toolbelt tools, handoff)")
    print(f"{'format':<16} {'characters':>10} {'x react':>8}")
    for fmt, chars in sizes.items():
        print(f"{fmt:<16} {chars:>10,} {chars / sizes['react']:>8.2f}")


SizeRow = tuple[int, int, int, int, int, float]


async def sizes() -> tuple[list[SizeRow], dict[str, str]]:
    """Per home size: HA core's and Toolbelt's prompts (mode auto, off, on); reuse."""
    rows = []
    dumps: dict[str, str] = {}
    for size in SIZES:
        with tempfile.TemporaryDirectory() as config_dir:
            async with async_test_home_assistant(config_dir=config_dir) as hass:
                hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
                frame.async_setup(hass)
                await _demo_home(hass)
                await async_setup_generated_home(hass, size - len(LIGHTS) - len(COVERS))
                exposed = len(exposed_devices(hass, conversation.DOMAIN))
                assert exposed == size, (exposed, size)
                async with OpenAIServer() as server:
                    agents = await _add_agents(hass, server, SIZE_AGENTS)
                    chars = {}
                    for key in (
                        "ha_llama_cpp",
                        "toolbelt_auto",
                        "toolbelt_list",
                        "toolbelt_large",
                    ):
                        requests, _ = await _conversation(
                            hass, server, agents[key], False, key == "toolbelt_large"
                        )
                        chars[key] = _static_chars(requests[0])
                        dumps[f"{key}_{size}"] = _dump(requests[0])
                    rows.append(
                        (
                            size,
                            chars["ha_llama_cpp"],
                            chars["toolbelt_auto"],
                            chars["toolbelt_list"],
                            chars["toolbelt_large"],
                            _reuse(requests[1:]),
                        )
                    )
                    for entry in hass.config_entries.async_entries():
                        await hass.config_entries.async_unload(entry.entry_id)
                await hass.async_stop()
    return rows, dumps


def report() -> None:
    """Run the bench, print the tables, and write the dumps when asked."""
    if "--formats" in sys.argv[1:]:
        report_formats()
        return
    rows, dumps = asyncio.run(main())
    size_rows, size_dumps = asyncio.run(sizes())
    if DUMP:
        for key, text in {**dumps, **size_dumps}.items():
            Path(DUMP, f"{key}.json").write_text(text)
    core = rows[0][1]
    print(
        f"{'agent':<20} {'prompt+tools':>13} {'x core':>7} {'reuse':>7} {'ms/hop':>7}"
    )
    for label, chars, reuse, ms in rows:
        print(f"{label:<20} {chars:>13,} {chars / core:>7.3f} {reuse:>7.1%} {ms:>7.2f}")
    print()
    print(
        f"{'entities':>8} {'HA core':>8} {'Toolbelt':>9} {'x core':>7}"
        f" {'mode off':>9} {'mode on':>8} {'x core':>7} {'reuse':>7}"
    )
    for size, core_chars, auto, listed, large, reuse in size_rows:
        print(
            f"{size:>8,} {core_chars:>8,} {auto:>9,} {auto / core_chars:>7.3f}"
            f" {listed:>9,} {large:>8,} {large / core_chars:>7.3f} {reuse:>7.1%}"
        )
    print()
    report_formats()


if __name__ == "__main__":
    report()
