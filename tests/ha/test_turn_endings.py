"""How a turn ends: silence, HA's own confirmation, a failed turn, a busy one.

HA 2026.11 keeps an empty answer as a silent response, writes ``"Error: …"``
or ``"(no response)"`` for a turn that raised or added nothing, and refuses a
second message while a turn runs. Each test says what the user hears and what
the model reads in the next turn, on every HA version.
"""

from __future__ import annotations

import asyncio
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import intent, llm
import pytest

from custom_components.toolbelt.ha import compat
from custom_components.toolbelt.ha.history import (
    FAILED_TURN_TEXT,
    NO_RESULT_TEXT,
    chat_log_messages,
)
from custom_components.toolbelt.loop.transcript import Exchange
from tests.ha.conftest import (
    agent_id,
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    bare,
    speech,
    streamed_text,
)
from tests.openai_server import OpenAIServer

NO_ANSWER = "Sorry, the model gave no answer."
SILENT = compat.CURRENT.silent_answers
KITCHEN_ON = [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]


@pytest.mark.parametrize("reply", ["", "   "])
async def test_an_empty_answer_is_silent_where_ha_keeps_silence(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer, reply: str
) -> None:
    """Nothing asked of a tool, nothing written: silence on HA 2026.11+, which
    keeps an empty answer as a silent response; older HAs need words."""
    openai_server.reply_text(reply, chunks=[reply] if reply else [])

    result, deltas = await async_converse_streamed(hass, "thanks, that's all")

    said = "" if SILENT else NO_ANSWER
    assert speech(result) == said
    assert streamed_text(deltas).strip() == said
    assert result.response.response_type is not intent.IntentResponseType.ERROR


async def test_reasoning_without_an_answer_is_said_to_be_no_answer(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """A model that thought and then wrote nothing did not choose silence."""
    openai_server.reply_text("<think>The user greets me.</think>")

    result = await async_converse(hass, "hello")

    assert speech(result) == NO_ANSWER


async def test_device_commands_that_worked_then_nothing_are_confirmed_by_ha(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """After a command that worked, an empty answer gets HA's own sentence, as
    instant confirmations do (without the option), streamed and spoken."""
    openai_server.reply_tool_calls(KITCHEN_ON)
    openai_server.reply_text("")

    result, deltas = await async_converse_streamed(hass, "kitchen light on")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == "Turned on the light"
    assert streamed_text(deltas) == "Turned on the light"


async def test_a_failed_command_then_nothing_is_not_confirmed(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """Never "done" for a command that failed: the user hears there was no answer."""
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Garden fountain"}}]
    )
    openai_server.reply_text("")

    result = await async_converse(hass, "garden fountain on")

    assert speech(result) == NO_ANSWER


async def test_a_failed_turn_is_a_failed_request_in_the_next_turn(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """The spoken error stays in the ChatLog (what the user heard); the model
    reads the request as failed, not the error as something it said."""
    openai_server.reply_error(500, message="CUDA out of memory")
    first = await async_converse(hass, "turn on the kitchen light")
    assert speech(first).startswith("Sorry, the llama.cpp server")

    openai_server.reply_text("Sure.")
    await async_converse(hass, "try again", first.conversation_id)

    assert openai_server.requests[1].messages[1:] == [
        {"role": "user", "content": "turn on the kitchen light"},
        {"role": "assistant", "content": FAILED_TURN_TEXT},
        {"role": "user", "content": "try again"},
    ]


def _result(call_id: str, name: str, data: dict[str, Any]) -> Any:
    """A ToolResultContent as HA's ChatLog writes it, on any HA."""
    delta = compat.tool_result_delta(call_id, name, data, failed=True)
    delta.pop("role")
    return conversation.ToolResultContent(agent_id="conversation.x", **delta)


def test_what_ha_writes_for_a_turn_that_raised_reads_as_a_failed_request() -> None:
    """HA 2026.11's "Error: …" and "(no response)", and its error results for
    unanswered calls: the model reads failed requests and unfinished calls."""
    call = llm.ToolInput(
        tool_name="HassTurnOn", tool_args={"name": "Porch"}, id="c1", external=True
    )
    content = [
        conversation.SystemContent(content="You are Toolbelt."),
        conversation.UserContent(content="porch light on"),
        conversation.AssistantContent(agent_id="conversation.x", tool_calls=[call]),
        _result("c1", "HassTurnOn", {"error": "CancelledError", "error_text": "x"}),
        conversation.AssistantContent(
            agent_id="conversation.x", content="Error: CancelledError"
        ),
        conversation.UserContent(content="hello?"),
        conversation.AssistantContent(
            agent_id="conversation.x", content="(no response)"
        ),
        conversation.UserContent(content="Error: is a word I like"),
        conversation.AssistantContent(
            agent_id="conversation.x", content="Error: noted, it is a nice word."
        ),
        conversation.AssistantContent(agent_id="conversation.x", content="More."),
    ]

    history = chat_log_messages(content)

    assert isinstance(history[2], Exchange)
    assert history[2].results == (NO_RESULT_TEXT,)
    assert history[3:] == [
        {"role": "assistant", "content": FAILED_TURN_TEXT},
        {"role": "user", "content": "hello?"},
        {"role": "assistant", "content": FAILED_TURN_TEXT},
        {"role": "user", "content": "Error: is a word I like"},
        # An answer that starts with "Error: " but does not end its turn is one.
        {"role": "assistant", "content": "Error: noted, it is a nice word."},
        {"role": "assistant", "content": "More."},
    ]


async def test_a_cancelled_turn_reads_as_failed_in_the_next_turn(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """A turn cancelled while the model answers (a pipeline stopped): the light
    it switched stays in the history, the request reads as failed (HA 2026.11
    keeps the turn; older HAs drop it whole)."""
    openai_server.reply_tool_calls(KITCHEN_ON)
    openai_server.reply_delay(30)
    context = Context()
    task = hass.async_create_task(
        conversation.async_converse(
            hass, "kitchen light on", "conv-cancel", context, agent_id=agent_id(hass)
        )
    )
    await openai_server.requests_seen(2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert hass.states.get("light.kitchen_light").state == "on"

    openai_server.reply_text("Hello.")
    await async_converse(hass, "hello", "conv-cancel")

    messages = openai_server.requests[-1].messages
    if hasattr(conversation.ChatLog, "async_add_error"):
        assert [m["role"] for m in messages[1:]] == [
            "user",
            "assistant",
            "tool",
            "assistant",
            "user",
        ]
        assert messages[-2] == {"role": "assistant", "content": FAILED_TURN_TEXT}
    else:
        assert messages[1:] == [{"role": "user", "content": "hello"}]


@pytest.mark.skipif(not compat.BUSY_ERRORS, reason="this HA has no busy conversations")
async def test_a_message_while_the_turn_runs_gets_a_short_sentence(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """A second message in the same conversation while the first is answered."""
    openai_server.reply_delay(0.5, "Here I am.")
    first = hass.async_create_task(async_converse(hass, "are you there?", "conv-busy"))
    await openai_server.requests_seen(1)

    second = await async_converse(hass, "hello?", "conv-busy")

    assert speech(second) == (
        "I'm still answering your last message. Ask me again in a moment."
    )
    assert second.response.response_type is intent.IntentResponseType.ERROR
    assert speech(await first) == "Here I am."
    assert len(openai_server.requests) == 1


HOME_ASSISTANT_API = getattr(llm, "LLM_API_HOME_ASSISTANT", None)


@pytest.mark.skipif(
    HOME_ASSISTANT_API is None, reason="this HA has no administrators-only API"
)
async def test_an_administrators_only_api_is_left_out_without_an_administrator(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, hass_admin_user
) -> None:
    """A satellite (no user) still controls devices with Assist; an admin's turn
    gets the Home Assistant API's tools too."""
    await async_add_toolbelt(
        hass, openai_server, llm_hass_api=[llm.LLM_API_ASSIST, HOME_ASSISTANT_API]
    )
    openai_server.reply_tool_calls(KITCHEN_ON)
    openai_server.reply_text("On.")

    satellite = await conversation.async_converse(
        hass, "kitchen light on", None, Context(), agent_id=agent_id(hass)
    )

    assert speech(satellite) == "On."
    assert hass.states.get("light.kitchen_light").state == "on"
    satellite_tools = {
        bare(t["function"]["name"]) for t in openai_server.requests[0].tools
    }
    assert "HassTurnOn" in satellite_tools

    openai_server.reply_text("Hi.")
    admin = await conversation.async_converse(
        hass, "hi", None, Context(user_id=hass_admin_user.id), agent_id=agent_id(hass)
    )

    assert speech(admin) == "Hi."
    admin_tools = {bare(t["function"]["name"]) for t in openai_server.requests[2].tools}
    assert satellite_tools < admin_tools
