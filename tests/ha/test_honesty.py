"""The honesty guard in a real HA: a claimed device change that never ran is not said.

HA's own recognizer (the built-in agent's sentences, in the user's language)
reads the user's words; the tests listen to the ChatLog's deltas as the Assist
pipeline does, so what they assert is exactly what TTS would speak.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er

from custom_components.toolbelt.const import CONF_RUN_RECOGNIZED
from custom_components.toolbelt.ha import compat
from custom_components.toolbelt.ha.large_home import FIND_DEVICES_TOOL
from custom_components.toolbelt.loop.honesty import NOTHING_CHANGED_NOTE
from tests.ha.conftest import (
    agent_id,
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    bare,
    open_chat_log,
    speech,
    streamed_text,
)
from tests.openai_server import OpenAIServer

CLAIM = "The kitchen light should be on now."
ANSWER = "Done: the kitchen light is on."
UNCHANGED = "Sorry, I did not do that: nothing was changed."


async def test_a_claim_without_a_call_is_not_said(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_text(CLAIM, chunks=list(CLAIM))
    openai_server.reply_text(CLAIM, chunks=list(CLAIM))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "off"
    assert speech(result) == UNCHANGED
    assert streamed_text(deltas) == UNCHANGED
    # The model was told, once, that nothing changed.
    reminder = openai_server.requests[1].messages
    assert reminder[-2:] == [
        {"role": "assistant", "content": CLAIM},
        {"role": "user", "content": NOTHING_CHANGED_NOTE},
    ]
    assert len(openai_server.requests) == 2
    # What the next turn reads is what the user heard.
    with open_chat_log(hass, result.conversation_id) as chat_log:
        said = [c.content for c in chat_log.content if c.role == "assistant"]
    assert said == [UNCHANGED]


async def test_the_reminded_model_turns_the_light_on_and_is_heard(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_text(CLAIM, chunks=list(CLAIM))
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]
    )
    openai_server.reply_text(ANSWER, chunks=list(ANSWER))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    calls = [d["tool_calls"] for d in deltas if d.get("tool_calls")]
    assert [bare(call.tool_name) for call in calls[0]] == ["HassTurnOn"]


async def test_a_question_and_a_chat_are_untouched(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server)
    # As the Assist pipeline does: HA's sentences load before the turn.
    await conversation.async_prepare_agent(hass, agent_id(hass), "en")
    for text, answer in (
        ("is the kitchen light on?", "No, the kitchen light is off."),
        ("tell me a joke", "The light bulb quit: it felt burnt out."),
    ):
        openai_server.reply_text(answer, chunks=list(answer))
        before = len(openai_server.requests)

        result, deltas = await async_converse_streamed(hass, text)

        assert speech(result) == answer
        assert streamed_text(deltas) == answer
        assert len(openai_server.requests) == before + 1


async def test_the_agent_may_let_ha_run_the_command(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, **{CONF_RUN_RECOGNIZED: True})
    openai_server.reply_text(CLAIM)
    openai_server.reply_text(CLAIM)

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    # HA's built-in agent says exactly this for HassTurnOn on a light.
    assert speech(result) == "Turned on the light"
    assert streamed_text(deltas) == "Turned on the light"
    assert len(openai_server.requests) == 2
    # The call HA ran is recorded like any call, for the debug view and history.
    calls = [d["tool_calls"] for d in deltas if d.get("tool_calls")]
    assert [bare(call.tool_name) for call in calls[0]] == ["HassTurnOn"]
    assert calls[0][0].tool_args == {"name": "Kitchen light"}


async def test_german_words_are_read_with_has_german_sentences(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    er.async_get(hass).async_update_entity(
        "light.kitchen_light", aliases={"Küchenlicht"}
    )
    await async_add_toolbelt(hass, openai_server)
    claim = "Das Küchenlicht ist jetzt an."
    openai_server.reply_text(claim)
    openai_server.reply_text(claim)

    result = await conversation.async_converse(
        hass,
        "Schalte das Küchenlicht ein",
        None,
        Context(),
        language="de",
        agent_id=agent_id(hass),
    )

    assert hass.states.get("light.kitchen_light").state == "off"
    assert speech(result) == (
        "Entschuldigung, das habe ich nicht getan: Es wurde nichts geändert."
    )
    assert len(openai_server.requests) == 2


async def test_a_text_format_claim_is_held_and_corrected(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """The issue's plain-text model, with a text tool-call format."""
    await async_add_toolbelt(hass, openai_server, tool_format="hermes")
    openai_server.reply_text(CLAIM, chunks=list(CLAIM))
    openai_server.reply_text(
        '<tool_call>\n{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}'
        "\n</tool_call>"
    )
    openai_server.reply_text(ANSWER)

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    assert CLAIM not in streamed_text(deltas)


async def test_recognition_starts_with_the_turn_once_the_pipeline_prepared(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Prepared (as HA's Assist pipeline prepares its agent), recognizing is
    cheap and runs beside the first request; unprepared, a turn whose model
    calls the device at once never recognizes at all."""
    await async_add_toolbelt(hass, openai_server)
    turn_on = [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]
    seen: list[str] = []
    recognize = compat.async_recognize_intent

    async def counted(hass: HomeAssistant, user_input: Any) -> Any:
        seen.append(user_input.text)
        return await recognize(hass, user_input)

    with patch.object(compat, "async_recognize_intent", counted):
        openai_server.reply_tool_calls(turn_on)
        openai_server.reply_text(ANSWER)
        # Unprepared, as conversation.process from an automation runs it.
        await async_converse(hass, "turn on the kitchen light")
        assert seen == []

        await conversation.async_prepare_agent(hass, agent_id(hass), "en")
        openai_server.reply_tool_calls(turn_on)
        openai_server.reply_text(ANSWER)
        result, _deltas = await async_converse_streamed(
            hass, "turn on the kitchen light"
        )

    assert seen == ["turn on the kitchen light"]
    assert speech(result) == ANSWER


async def test_a_silent_answer_to_a_command_is_not_left_silent(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """HA 2026.11 keeps an empty answer as silence; after a command that never
    ran, the user hears that nothing was changed instead."""
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_text("")
    openai_server.reply_text("")

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "off"
    assert speech(result) == UNCHANGED
    assert streamed_text(deltas) == UNCHANGED
    assert len(openai_server.requests) == 2


async def test_a_lookup_is_no_command_in_large_home_mode(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """find_devices only reads: a claim after it is held, the model reminded,
    and the light it then turns on is what the user hears about."""
    await async_add_toolbelt(hass, openai_server, large_home="on")
    openai_server.reply_tool_calls(
        [{"name": FIND_DEVICES_TOOL, "arguments": {"name": "kitchen"}}]
    )
    openai_server.reply_text(CLAIM, chunks=list(CLAIM))
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]
    )
    openai_server.reply_text(ANSWER, chunks=list(ANSWER))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    assert openai_server.requests[2].messages[-1] == {
        "role": "user",
        "content": NOTHING_CHANGED_NOTE,
    }
