"""Native tool calling end to end: a real HA, a real HTTP model server."""

from __future__ import annotations

import json

from homeassistant.core import HomeAssistant

from custom_components.toolbelt.ha import compat
from tests.ha.conftest import (
    async_assist_api,
    async_converse,
    bare,
    open_chat_log,
    speech,
)
from tests.openai_server import OpenAIServer


async def test_streamed_tool_call_turns_on_light_then_speaks(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """The model calls HassTurnOn; the light really turns on; the answer is spoken."""
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]
    )
    openai_server.reply_text(
        "The kitchen light is on.", chunks=["The kitchen", " light is on."]
    )
    assert hass.states.get("light.kitchen_light").state == "off"

    result = await async_converse(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == "The kitchen light is on."
    first, second = openai_server.requests
    assert first.body["stream"] is True
    tool_names = {tool["function"]["name"] for tool in first.tools}
    assert {"HassTurnOn", "HassTurnOff", "HassLightSet"} <= set(map(bare, tool_names))
    assert first.messages[0]["role"] == "system"
    assert "Device rules" in first.messages[0]["content"]
    assert first.messages[-1] == {
        "role": "user",
        "content": "turn on the kitchen light",
    }
    # The second request carries the call and HA's real result in the tool role.
    assistant, tool = second.messages[-2:]
    # The model said HassTurnOn; the history holds the name HA really offers.
    called = assistant["tool_calls"][0]["function"]["name"]
    assert called in tool_names
    assert bare(called) == "HassTurnOn"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {
        "name": "Kitchen light"
    }
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    result_data = json.loads(tool["content"])
    assert result_data["data"]["success"][0]["name"] == "Kitchen light"


async def test_two_tool_calls_in_one_reply(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """Both calls of one reply run, and both results go back in call order."""
    openai_server.reply_tool_calls(
        [
            {"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}},
            {"name": "HassTurnOn", "arguments": {"name": "Porch light"}},
        ],
        interleave=True,
    )
    openai_server.reply_text("Both lights are on.")

    result = await async_converse(hass, "kitchen and porch lights on")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert hass.states.get("light.porch_light").state == "on"
    assert speech(result) == "Both lights are on."
    messages = openai_server.requests[1].messages
    tool_messages = [m for m in messages if m["role"] == "tool"]
    calls = messages[-3]["tool_calls"]
    assert [m["tool_call_id"] for m in tool_messages] == [c["id"] for c in calls]
    assert "Kitchen light" in tool_messages[0]["content"]
    assert "Porch light" in tool_messages[1]["content"]


async def test_tool_error_goes_back_to_the_model(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """An unknown device is an error the model reads; the turn goes on."""
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Garden fountain"}}]
    )
    openai_server.reply_text("I couldn't find a garden fountain.")

    result = await async_converse(hass, "turn on the garden fountain")

    assert speech(result) == "I couldn't find a garden fountain."
    tool = openai_server.requests[1].messages[-1]
    assert tool["role"] == "tool"
    assert tool["content"].startswith("ERROR: ")
    assert "Garden fountain" in tool["content"]
    assert hass.states.get("light.kitchen_light").state == "off"


async def test_chat_log_records_calls_results_and_durations(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """The debug view sees the call, its result and how long it took."""
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOff", "arguments": {"name": "Porch light"}}]
    )
    openai_server.reply_text("Off.")
    result = await async_converse(hass, "porch light off")

    with open_chat_log(hass, result.conversation_id) as chat_log:
        contents = chat_log.content
    calls = [c for c in contents if getattr(c, "tool_calls", None)]
    results = [c for c in contents if c.role == "tool_result"]
    assert bare(calls[0].tool_calls[0].tool_name) == "HassTurnOff"
    assert calls[0].tool_calls[0].external is True
    recorded = compat.tool_result_data(results[0])
    assert recorded["duration_ms"] >= 0
    assert recorded["data"]["success"][0]["name"] == "Porch light"


async def test_tools_sent_are_exactly_what_this_ha_offers(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """Names and schemas as HA's own Assist API instance gives them, nothing renamed."""
    openai_server.reply_text("Hello.")
    await async_converse(hass, "hello")
    api = await async_assist_api(hass)
    sent = {tool["function"]["name"] for tool in openai_server.requests[0].tools}
    assert sent == {tool.name for tool in api.tools}


async def test_a_lone_surrogate_in_call_arguments_is_mended_not_blamed_on_the_server(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """A JSON escape for half a character runs as U+FFFD; the next request goes out."""
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light\ud800"}}]
    )
    openai_server.reply_text("I could not find that light.")

    # Words HA's own sentences do not cover: the honesty guard stays out.
    result = await async_converse(hass, "light up the kitchen")

    assert speech(result) == "I could not find that light."
    assistant = openai_server.requests[1].messages[-2]
    sent = json.loads(assistant["tool_calls"][0]["function"]["arguments"])
    assert sent == {"name": "Kitchen light\ufffd"}
