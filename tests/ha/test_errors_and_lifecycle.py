"""Server failures give a short spoken error; entries load, unload and reload."""

from __future__ import annotations

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.toolbelt.const import CONF_BASE_URL, CONF_SERVER_KIND, DOMAIN
from tests.ha.conftest import async_add_toolbelt, async_converse, speech
from tests.openai_server import OpenAIServer

SERVER = "the llama.cpp server"


def assert_spoken_error(result, *fragments: str) -> None:
    assert result.response.response_type is intent.IntentResponseType.ERROR
    said = speech(result)
    assert said.startswith(f"Sorry, {SERVER} ")
    assert "127.0.0.1" not in said  # the address is for the log, not for TTS
    assert "Traceback" not in said
    assert len(said) < 200
    for fragment in fragments:
        assert fragment in said


async def test_server_error_500_is_spoken(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    openai_server.reply_error(500, message="CUDA out of memory")
    result = await async_converse(hass, "hello")
    assert_spoken_error(result, "internal error")


async def test_garbage_body_is_spoken(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    openai_server.reply_garbage("not_json")
    result = await async_converse(hass, "hello")
    assert_spoken_error(result, "could not be read")


async def test_broken_stream_is_spoken(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    openai_server.reply_garbage("cut")
    result = await async_converse(hass, "hello")
    assert result.response.response_type is intent.IntentResponseType.ERROR


async def test_timeout_is_spoken_and_nothing_hangs(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, request_timeout=0.5)
    openai_server.reply_delay(5)
    result = await async_converse(hass, "hello")
    assert_spoken_error(result, "in time")


async def test_server_down_during_turn_is_spoken(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    await openai_server.close()
    result = await async_converse(hass, "hello")
    assert_spoken_error(result, "could not be reached")


async def test_401_during_turn_starts_reauth(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    openai_server.reply_error(401, message="Invalid API key")
    result = await async_converse(hass, "hello")
    assert_spoken_error(result, "API key")
    await hass.async_block_till_done()
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [flow["context"]["source"] for flow in flows] == ["reauth"]


async def test_server_down_at_start_retries_setup(
    hass: HomeAssistant, ha_ready, closed_port_url: str
) -> None:
    entry = MockConfigEntry(
        domain=DOMAIN,
        data={CONF_SERVER_KIND: "ollama", CONF_BASE_URL: closed_port_url},
    )
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY


async def test_unload_and_reload(
    hass: HomeAssistant, toolbelt: MockConfigEntry, openai_server: OpenAIServer
) -> None:
    entity_id = "conversation.test_agent"
    assert hass.states.get(entity_id) is not None
    assert await hass.config_entries.async_unload(toolbelt.entry_id)
    await hass.async_block_till_done()
    assert toolbelt.state is ConfigEntryState.NOT_LOADED
    assert hass.states.get(entity_id).state == "unavailable"

    assert await hass.config_entries.async_reload(toolbelt.entry_id)
    await hass.async_block_till_done()
    assert toolbelt.state is ConfigEntryState.LOADED
    openai_server.reply_text("Still here.")
    result = await async_converse(hass, "are you there?")
    assert speech(result) == "Still here."


async def test_busy_server_is_spoken_and_the_agent_keeps_the_tool_role(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """A 429 without a wait we can afford: a short busy sentence, no demotion."""
    turn_on = [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]
    openai_server.reply_tool_calls(turn_on)
    openai_server.reply_error(429, message="Too many requests")

    result = await async_converse(hass, "turn on the kitchen light")

    assert_spoken_error(result, "is busy right now; please try again in a moment")
    assert hass.states.get("light.kitchen_light").state == "on"

    openai_server.reply_tool_calls(turn_on)
    openai_server.reply_text("It is on.")
    result = await async_converse(hass, "turn on the kitchen light")
    assert speech(result) == "It is on."
    assert openai_server.requests[-1].messages[-1]["role"] == "tool"
