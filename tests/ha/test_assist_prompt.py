"""HA's Assist prompt and tool texts reach the model shorter, meaning the same.

HA writes long texts for every agent; Toolbelt says them in fewer characters
(``assist_prompt.py``). Each rewrite applies only where HA's own text is found,
so these tests run against the prompt this HA version really builds.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er

from custom_components.toolbelt.ha import compat
from custom_components.toolbelt.ha.assist_prompt import (
    LIVE_CONTEXT_SHORT,
    OVERVIEW_LINES,
    OVERVIEW_SHORT,
    compact_system_prompt,
    compact_tool,
    tools_as_sent,
)
from tests.ha.conftest import (
    async_add_toolbelt,
    async_assist_api,
    async_converse,
    bare,
    speech,
)
from tests.ha.generated_home import async_setup_generated_home
from tests.openai_server import OpenAIServer


async def _assist_prompt(hass: HomeAssistant) -> str:
    """The Assist API prompt exactly as HA builds it for any agent."""
    return (await async_assist_api(hass)).api_prompt


async def test_the_model_reads_hass_prompt_shorter_and_still_acts(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    kitchen = ar.async_get(hass).async_create("Kitchen", aliases={"Cookery"})
    er.async_get(hass).async_update_entity("light.kitchen_light", area_id=kitchen.id)
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]
    )
    openai_server.reply_text("The kitchen light is on.")

    result = await async_converse(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == "The kitchen light is on."
    sent = openai_server.requests[0].messages[0]["content"]
    hass_prompt = await _assist_prompt(hass)
    live = compat.live_context_prompt()
    assert live  # the rewrite is not a no-op
    assert live in hass_prompt
    assert live not in sent
    tools = {
        bare(t["function"]["name"]): t["function"]
        for t in openai_server.requests[0].tools
    }
    # The short text names the live-context tool as it is sent.
    live_name = tools["GetLiveContext"]["name"]
    assert LIVE_CONTEXT_SHORT.replace("GetLiveContext", live_name) in sent
    assert "Static Context" in hass_prompt
    assert "Static Context" not in sent
    assert OVERVIEW_SHORT in sent
    # Every device keeps its names, domain and areas: one line per area and
    # domain, devices joined by semicolons, the area's alias beside it.
    lines = sent.splitlines()
    assert "light in Kitchen, Cookery: Kitchen light" in lines
    assert "light: Hallway light; Living room lamp; Porch light" in lines
    assert "When controlling Home Assistant" not in sent
    assert "Control devices only with the tools" in sent
    # Locks: said once, by the tools' descriptions.
    assert "to lock" not in sent
    assert "ask which area, unless there is only one." in sent
    assert "This device cannot start timers." in sent
    # The whole system prompt, instructions and device rules included, is
    # shorter than 60 % of HA's Assist text alone.
    assert len(sent) < 0.6 * len(hass_prompt)

    live_tool = tools["GetLiveContext"]
    filters = live_tool["parameters"]["properties"]
    # HA 2026.10 gave it filters: the description names them only where it has them.
    assert live_tool["description"] == (
        "Current state or value of devices and sensors."
        + (
            " Filter by name, area or domain (best for several of one type)."
            if filters
            else ""
        )
    )
    # The filters named for what they are lose their text.
    assert set(filters) <= {"name", "domain", "area"}
    assert all(
        "description" not in filters[k] for k in ("name", "area") if k in filters
    )
    assert tools["HassTurnOn"]["description"] == (
        "Turns on, opens or presses a device (locks a lock)."
    )
    # No exposed entity has a device class or a floor: nothing to pass there.
    assert set(tools["HassTurnOn"]["parameters"]["properties"]) == {
        "name",
        "area",
        "domain",
    }


def test_tools_are_named_as_sent_in_a_merged_prompt() -> None:
    """HA 2026.11's merged prompt: a heading per API lists its tools, and a
    name two APIs share is prefixed with the API's id."""
    prompt = (
        'Follow these instructions for tools from "assist" (intent__HassTurnOn,'
        " llm__GetDateTime):\nUse intent__HassTurnOn to lock.\n\n"
        'Follow these instructions for tools from "toolbelt-tools" (memory, time):\n'
        "Use `memory` to recall; the memory tool stores. Store one fact per memory."
        "\n\n"
        'Follow these instructions for tools from "other" (memory):\nUse `memory`.'
    )
    names = (
        "intent__HassTurnOn",
        "llm__GetDateTime",
        "toolbelt-tools__memory",
        "other__memory",
    )

    assert tools_as_sent(prompt, names) == (
        'Follow these instructions for tools from "assist" (intent__HassTurnOn,'
        " llm__GetDateTime):\nUse intent__HassTurnOn to lock.\n\n"
        'Follow these instructions for tools from "toolbelt-tools"'
        " (toolbelt-tools__memory):\nUse `toolbelt-tools__memory` to recall;"
        " the toolbelt-tools__memory tool stores. Store one fact per memory.\n\n"
        'Follow these instructions for tools from "other" (other__memory):\n'
        "Use `other__memory`."
    )
    # The user's own instructions around the API's prompt are left alone.
    text = "Never use `memory`.\n" + prompt
    assert compact_system_prompt(text, prompt, names).startswith(
        "Never use `memory`.\nFollow"
    )


def test_text_hass_did_not_write_is_sent_unchanged() -> None:
    text = "You are a pirate.\nStatic Context: An overview of the areas and the devices in this smart home:\n- not: [valid\n\nBye."
    assert compact_system_prompt(text) == text
    assert compact_system_prompt("Turn things on.") == "Turn things on."


def test_device_overview_keeps_states_and_attributes() -> None:
    text = (
        "Static Context: An overview of the areas and the devices in this smart home:\n"
        "- names: Thermostat, Hall heat\n  domain: climate\n  state: heat\n  areas: Hall\n"
        "  attributes:\n    current_temperature: '19.5'\n    temperature: '21'\n"
        "\nAfter."
    )
    assert compact_system_prompt(text) == (
        OVERVIEW_LINES + "- Thermostat, Hall heat: climate, Hall; state heat;"
        " attributes current_temperature 19.5, temperature 21\n\nAfter."
    )


def test_tools_hass_did_not_write_are_untouched() -> None:
    script = {
        "type": "function",
        "function": {
            "name": "script__wake_up",
            "description": "A very long description " * 10,
            "parameters": {"type": "object", "properties": {}},
        },
    }
    assert compact_tool(script) is script


async def test_intent_tools_offer_what_the_home_can_match(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Device classes of the home's entities, floors where they are; and they work."""
    ids = await async_setup_generated_home(hass, 12)
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_tool_calls(
        [
            {
                "name": "HassTurnOn",
                "arguments": {"area": "Kitchen", "device_class": ["outlet"]},
            },
            {"name": "HassTurnOn", "arguments": {"device_class": ["tv"]}},
        ]
    )
    openai_server.reply_text("The kitchen socket is on.")

    await async_converse(hass, "turn on the kitchen sockets")

    assert hass.states.get(ids["Kitchen socket"]).state == "on"
    assert hass.states.get(ids["Cellar socket"]).state == "off"
    tools = {
        bare(t["function"]["name"]): t["function"]["parameters"]["properties"]
        for t in openai_server.requests[0].tools
    }
    # HA lists 21 classes for HassTurnOn; the home has two (kept in HA's order).
    assert sorted(tools["HassTurnOn"]["device_class"]["items"]["enum"]) == [
        "blind",
        "outlet",
    ]
    assert tools["HassSetPosition"]["device_class"]["items"]["enum"] == ["blind"]
    assert "floor" in tools["HassTurnOn"]
    assert tools["HassSetPosition"]["position"] == {
        "type": "integer",
        "minimum": 0,
        "maximum": 100,
    }
    # HassLightSet acts on lights only: a domain filter whose one allowed
    # value is "light" (HA 2026.10+) goes; HA 2026.2's free one stays.
    domain = tools["HassLightSet"].get("domain", {"items": {}})
    assert "enum" not in domain["items"]
    results = [
        m["content"] for m in openai_server.requests[1].messages if m["role"] == "tool"
    ]
    assert "Kitchen socket" in results[0]
    assert results[1].startswith("ERROR:")
    assert "outlet" in results[1]
