"""Instant confirmations: device commands that all worked end the turn at once.

The server must receive exactly one request; what is spoken (and streamed) is
HA's own response sentence in the conversation's language, and the next turn
reads the confirmation as the assistant's answer.
"""

from __future__ import annotations

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant

from custom_components.toolbelt.const import CONF_INSTANT_CONFIRMATIONS
from tests.ha.conftest import (
    agent_id,
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    open_chat_log,
    speech,
    streamed_text,
)
from tests.openai_server import OpenAIServer

ON = {CONF_INSTANT_CONFIRMATIONS: True}


def turn_on(*names: str) -> list[dict]:
    return [{"name": "HassTurnOn", "arguments": {"name": n}} for n in names]


async def test_one_request_and_has_own_words_streamed(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, **ON)
    openai_server.reply_tool_calls(turn_on("Kitchen light"))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert len(openai_server.requests) == 1
    # HA's built-in agent says exactly this for HassTurnOn on a light.
    assert speech(result) == "Turned on the light"
    assert streamed_text(deltas) == "Turned on the light"


async def test_off_by_default_the_model_answers(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    openai_server.reply_tool_calls(turn_on("Kitchen light"))
    openai_server.reply_text("The kitchen light is on now.")

    result = await async_converse(hass, "turn on the kitchen light")

    assert len(openai_server.requests) == 2
    assert speech(result) == "The kitchen light is on now."


async def test_two_commands_one_sentence_in_the_conversation_language(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, **ON)
    openai_server.reply_tool_calls(turn_on("Kitchen light", "Porch light"))

    result = await conversation.async_converse(
        hass,
        "Küchenlicht und Verandalicht an",
        None,
        Context(),
        language="de",
        agent_id=agent_id(hass),
    )

    assert hass.states.get("light.kitchen_light").state == "on"
    assert hass.states.get("light.porch_light").state == "on"
    assert len(openai_server.requests) == 1
    # home-assistant-intents' German sentence, said once for both lights.
    assert speech(result) == "Licht eingeschaltet"


async def test_a_failed_command_goes_back_to_the_model(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, **ON)
    openai_server.reply_tool_calls(turn_on("Kitchen light", "Garden fountain"))
    openai_server.reply_text("The kitchen light is on; I found no garden fountain.")

    result = await async_converse(hass, "kitchen light and garden fountain on")

    assert len(openai_server.requests) == 2
    assert speech(result) == "The kitchen light is on; I found no garden fountain."
    tools = [m for m in openai_server.requests[1].messages if m["role"] == "tool"]
    assert tools[1]["content"].startswith("ERROR: ")


async def test_a_read_in_the_round_goes_back_to_the_model(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, **ON)
    openai_server.reply_tool_calls(
        [*turn_on("Kitchen light"), {"name": "GetLiveContext", "arguments": {}}]
    )
    openai_server.reply_text("Done; the porch light is off.")

    result = await async_converse(hass, "kitchen light on, is the porch light on?")

    assert len(openai_server.requests) == 2
    assert speech(result) == "Done; the porch light is off."


async def test_a_command_refused_by_the_cap_goes_back_to_the_model(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, max_device_commands=1, **ON)
    openai_server.reply_tool_calls(turn_on("Kitchen light", "Porch light"))
    openai_server.reply_text("I turned on the kitchen light only.")

    result = await async_converse(hass, "kitchen and porch lights on")

    assert hass.states.get("light.porch_light").state == "off"
    assert len(openai_server.requests) == 2
    assert speech(result) == "I turned on the kitchen light only."


async def test_the_next_turn_reads_the_confirmation_as_the_answer(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, **ON)
    openai_server.reply_tool_calls(turn_on("Kitchen light"))
    first = await async_converse(hass, "turn on the kitchen light")
    openai_server.reply_text("You're welcome.")

    second = await async_converse(hass, "thanks", first.conversation_id)

    assert speech(second) == "You're welcome."
    messages = openai_server.requests[1].messages
    assert messages[-2] == {"role": "assistant", "content": "Turned on the light"}
    assert messages[-1] == {"role": "user", "content": "thanks"}
    assert messages[-3]["role"] == "tool"
    with open_chat_log(hass, first.conversation_id) as chat_log:
        answers = [
            c.content
            for c in chat_log.content
            if isinstance(c, conversation.AssistantContent) and c.content
        ]
    assert answers == ["Turned on the light", "You're welcome."]
