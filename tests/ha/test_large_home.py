"""Large homes: the prompt stays within a budget, every device stays reachable.

A home of 1,000 real exposed entities (lights, switches, covers in 41 areas on
four floors, ``generated_home.py``) plus the four template lights of
``ha_ready``. In large-home mode the model reads an index instead of every
name, looks a device up with ``find_devices`` and switches it with HA's own
intent tools; what reaches the server is asserted, and the entity's state.
"""

from __future__ import annotations

from itertools import pairwise
import json
from pathlib import Path

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
import pytest

from custom_components import toolbelt
from custom_components.toolbelt.const import CONF_LARGE_HOME
from custom_components.toolbelt.ha.large_home import (
    FIND_DEVICES_TOOL,
    LARGE_HOME_ENTITIES,
    PAGE_SIZE,
    ExposedDevice,
    LargeHome,
)
from tests.ha.conftest import async_add_toolbelt, async_converse, bare, speech
from tests.ha.generated_home import async_setup_generated_home
from tests.openai_server import OpenAIServer, RecordedRequest

# ha_ready's four template lights, which have no area.
HA_READY_LIGHTS = 4
READING_LAMP = ("light", "Reading lamp", "Study")
# The issue's goal: 2,500 tokens' worth of characters at 1,000 entities.
BUDGET = 10_000


def _static_chars(request: RecordedRequest) -> int:
    """System prompt plus tools, as the bench counts them."""
    tools = json.dumps(request.tools or [], ensure_ascii=False, separators=(",", ":"))
    return len(request.messages[0]["content"]) + len(tools)


def _tool_names(request: RecordedRequest) -> list[str]:
    return [bare(t["function"]["name"]) for t in request.tools or []]


def _results(request: RecordedRequest) -> list[str]:
    """The tool results the request carries, in order."""
    return [m["content"] for m in request.messages if m["role"] == "tool"]


def _look_up_and_turn_on(
    server: OpenAIServer, lookup: dict[str, str], name: str
) -> None:
    """The model looks devices up, turns one on by the name it read, and says so."""
    server.reply_tool_calls([{"name": FIND_DEVICES_TOOL, "arguments": lookup}])
    server.reply_tool_calls([{"name": "HassTurnOn", "arguments": {"name": name}}])
    server.reply_text(f"The {name.lower()} is on.")


async def _big_home(hass: HomeAssistant) -> dict[str, str]:
    """1,000 exposed entities with the reading lamp; entity ids by name."""
    count = 1000 - HA_READY_LIGHTS - 1
    return await async_setup_generated_home(hass, count, extra=[READING_LAMP])


async def test_a_thousand_entities_fit_the_budget_and_a_lookup_finds_the_lamp(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """The model knows the lamp only from find_devices; HassTurnOn switches it."""
    ids = await _big_home(hass)
    await async_add_toolbelt(hass, openai_server)
    _look_up_and_turn_on(openai_server, {"name": "reading"}, "Reading lamp")

    result = await async_converse(hass, "turn on the reading light in the study")

    assert speech(result) == "The reading lamp is on."
    assert hass.states.get(ids["Reading lamp"]).state == "on"
    first, second, third = openai_server.requests
    system = first.messages[0]["content"]
    assert _static_chars(first) <= BUDGET
    # No name is listed; the index counts domains and names the areas by floor.
    assert "Reading lamp" not in system
    assert "Kitchen ceiling light" not in system
    assert "Devices: 1,000 exposed (light 508, switch 287, cover 205)," in system
    assert "First floor: Bathroom, Bedroom," in system
    assert "Study" in system
    assert "4 devices have no area." in system
    assert FIND_DEVICES_TOOL in _tool_names(first)
    assert "Reading lamp" not in json.dumps(first.tools)
    assert _results(second) == [
        "1 device matches (name: domain, area, floor: state):\n"
        "- Reading lamp: light, Study, First floor: off"
    ]
    assert len(_results(third)) == 2

    # A second turn names the lamp itself: no lookup, one command.
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOff", "arguments": {"name": "Reading lamp"}}]
    )
    openai_server.reply_text("It is off.")
    result = await async_converse(hass, "turn it off", result.conversation_id)

    assert speech(result) == "It is off."
    assert hass.states.get(ids["Reading lamp"]).state == "off"
    # Byte-stable over both turns: each request starts with the one before,
    # so a server's prompt cache reads the index and the tools only once.
    requests = openai_server.requests
    assert len(requests) == 5
    for before, after in pairwise(requests):
        assert after.messages[: len(before.messages)] == before.messages
        assert after.tools == before.tools


async def test_find_devices_filters_pages_and_says_what_missed(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """One round of lookups: floor and domain, an area's second page, a miss."""
    await _big_home(hass)
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_tool_calls(
        [
            {
                "name": FIND_DEVICES_TOOL,
                "arguments": {"floor": "basement", "domain": "covers"},
            },
            {
                "name": FIND_DEVICES_TOOL,
                "arguments": {"area": "Kitchen", "offset": PAGE_SIZE},
            },
            {"name": FIND_DEVICES_TOOL, "arguments": {"name": "jacuzzi"}},
            {
                "name": FIND_DEVICES_TOOL,
                "arguments": {"area": "Kitchen", "offset": 25},
            },
        ]
    )
    openai_server.reply_text("Done.")

    await async_converse(hass, "which blinds are in the basement?")

    covers, kitchen, missed, past_the_end = _results(openai_server.requests[1])
    lines = covers.splitlines()
    # Six basement rooms, five blinds and curtains in each, all closed.
    assert lines[0] == (
        "30 devices match, 1-20 shown (name: domain, area, floor: state):"
    )
    assert "- Boiler room blind: cover, Boiler room, Basement: closed" in lines
    assert all(": cover, " in line for line in lines[1:21])
    assert all(line.endswith(", Basement: closed") for line in lines[1:21])
    assert lines[21:] == ["More: call again with offset 20."]
    # The kitchen holds 25 devices: the second page has the last five.
    lines = kitchen.splitlines()
    assert (
        lines[0] == "25 devices match, 21-25 shown (name: domain, area, floor: state):"
    )
    assert len(lines) == 6
    assert not any(line.startswith("More:") for line in lines)
    assert missed.startswith(
        "ERROR: LookupError: no exposed device matches name 'jacuzzi'"
    )
    assert past_the_end == "ERROR: LookupError: only 25 match; use an offset below 25"


async def test_a_page_ends_with_how_to_read_on(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await _big_home(hass)
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_tool_calls(
        [{"name": FIND_DEVICES_TOOL, "arguments": {"domain": "light"}}]
    )
    openai_server.reply_text("Done.")

    await async_converse(hass, "list the lights")

    (lights,) = _results(openai_server.requests[1])
    lines = lights.splitlines()
    assert (
        lines[0] == "508 devices match, 1-20 shown (name: domain, area, floor: state):"
    )
    assert len(lines) == 1 + PAGE_SIZE + 1
    assert lines[-1] == f"More: call again with offset {PAGE_SIZE}."


@pytest.mark.parametrize(
    ("generated", "indexed"),
    [(LARGE_HOME_ENTITIES - HA_READY_LIGHTS, False), (LARGE_HOME_ENTITIES - 3, True)],
    ids=["at-the-threshold", "one-above"],
)
async def test_auto_switches_on_above_the_threshold(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    generated: int,
    indexed: bool,
) -> None:
    await async_setup_generated_home(hass, generated)
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_text("Hello.")

    await async_converse(hass, "hi")

    request = openai_server.requests[0]
    system = request.messages[0]["content"]
    assert ("Kitchen ceiling light" not in system) is indexed
    assert (FIND_DEVICES_TOOL in _tool_names(request)) is indexed


async def _first_request(
    hass: HomeAssistant, server: OpenAIServer, entry: ConfigEntry, mode: str | None
) -> RecordedRequest:
    """A new conversation's first request with the agent's mode set (None: unset)."""
    subentry = next(iter(entry.subentries.values()))
    data = {k: v for k, v in subentry.data.items() if k != CONF_LARGE_HOME}
    if mode is not None:
        data[CONF_LARGE_HOME] = mode
    hass.config_entries.async_update_subentry(entry, subentry, data=data)
    await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    server.reply_text("Hello.")
    await async_converse(hass, "hi")
    return server.requests[-1]


async def test_a_small_home_prompt_is_the_same_with_the_mode_available(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Four lights: auto (and an agent saved before the option) send what off sends."""
    entry = await async_add_toolbelt(hass, openai_server)

    off = await _first_request(hass, openai_server, entry, "off")
    auto = await _first_request(hass, openai_server, entry, "auto")
    unset = await _first_request(hass, openai_server, entry, None)

    lines = off.messages[0]["content"].splitlines()
    assert "light: Hallway light; Kitchen light; Living room lamp; Porch light" in lines
    assert FIND_DEVICES_TOOL not in _tool_names(off)
    for request in (auto, unset):
        assert request.messages == off.messages
        assert request.tools == off.tools


async def test_on_in_a_small_home_and_off_in_a_large_one(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """The option decides in both directions; on, a lookup then a command work."""
    entry = await async_add_toolbelt(hass, openai_server, large_home="on")
    _look_up_and_turn_on(openai_server, {"domain": "light"}, "Porch light")

    result = await async_converse(hass, "turn on the porch light")

    assert speech(result) == "The porch light is on."
    assert hass.states.get("light.porch_light").state == "on"
    first, second, _ = openai_server.requests
    system = first.messages[0]["content"]
    assert "Devices: 4 exposed (light 4), names not listed." in system
    assert "Which devices exist: see the index below." in system
    assert "Porch light" not in system
    assert _results(second) == [
        "4 devices match (name: domain, area, floor: state):\n"
        "- Hallway light: light, no area: off\n"
        "- Kitchen light: light, no area: off\n"
        "- Living room lamp: light, no area: off\n"
        "- Porch light: light, no area: off"
    ]

    await async_setup_generated_home(hass, LARGE_HOME_ENTITIES)
    off = await _first_request(hass, openai_server, entry, "off")
    assert "Kitchen ceiling light" in off.messages[0]["content"]
    assert FIND_DEVICES_TOOL not in _tool_names(off)


async def test_a_text_format_agent_looks_up_and_acts(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """ReAct: find_devices is in the prompt's catalog and runs like any tool."""
    await async_add_toolbelt(hass, openai_server, tool_format="react", large_home="on")
    openai_server.reply_text(
        f'Action: {FIND_DEVICES_TOOL}\nAction Input: {{"name": "porch"}}'
    )
    openai_server.reply_text(
        'Action: HassTurnOn\nAction Input: {"name": "Porch light"}'
    )
    openai_server.reply_text("Final Answer: The porch light is on.")

    result = await async_converse(hass, "turn on the porch light")

    assert speech(result) == "The porch light is on."
    assert hass.states.get("light.porch_light").state == "on"
    first, second, _ = openai_server.requests
    assert first.tools is None
    assert FIND_DEVICES_TOOL in first.messages[0]["content"]
    assert "Porch light" not in first.messages[0]["content"]
    assert "- Porch light: light, no area: off" in second.messages[-1]["content"]


def test_the_index_groups_areas_by_floor_and_stops_at_its_size() -> None:
    """Floors lowest first, areas without a floor after them; 300 areas do not fit."""
    devices = [
        ExposedDevice(f"light.a{i}", (f"Lamp {i}",), "light", f"Room {i:03}")
        for i in range(300)
    ]
    devices += [
        ExposedDevice("light.up", ("Up",), "light", "Loft", floor="Top", floor_level=2),
        ExposedDevice(
            "light.down", ("Down",), "light", "Den", floor="Low", floor_level=-1
        ),
        ExposedDevice("switch.x", ("X",), "switch"),
    ]

    index = LargeHome(None, devices).index

    assert index.startswith("Devices: 303 exposed (light 302, switch 1), names not")
    areas = index.splitlines()[1]
    assert areas.startswith("Areas by floor: Low: Den; Top: Loft; no floor: Room 000,")
    assert len(areas) < 2200
    shown = areas.count("Room ")
    assert areas.endswith(
        f"; {300 - shown} more areas (find_devices finds them); 1 device has no area."
    )


def test_the_option_names_the_threshold_in_the_ui() -> None:
    strings = json.loads((Path(toolbelt.__file__).parent / "strings.json").read_text())
    auto = strings["selector"][CONF_LARGE_HOME]["options"]["auto"]
    assert f"more than {LARGE_HOME_ENTITIES} entities" in auto


async def test_an_overflow_says_what_to_change(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """The server's context is too small: one sentence names the fixes."""
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_error(
        400, message="the request exceeds the available context size, try increasing it"
    )

    result = await async_converse(hass, "turn on the porch light")

    assert speech(result) == (
        "Sorry, this is too long for the model's context on the llama.cpp server;"
        " raise the context size, or turn on the agent's large-home mode."
    )
