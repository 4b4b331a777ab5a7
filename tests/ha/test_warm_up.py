"""The warm-up: the agent's fixed prompt reaches the server before a conversation.

What the server receives is asserted here (the scripted server records every
request); that it makes the first request of a conversation a cache hit is
asserted on the real llama-server (test_llamacpp_server.py).
"""

from __future__ import annotations

from datetime import timedelta

from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from custom_components.toolbelt.const import CONF_KEEP_ALIVE, CONF_WARM_UP
from custom_components.toolbelt.ha.warmup import WARM_UP_DELAY
from tests.ha.conftest import async_add_toolbelt, async_converse, speech
from tests.openai_server import OpenAIServer, RecordedRequest

# Past the warm-up's quiet time.
LATER = WARM_UP_DELAY + 1


async def _later(hass: HomeAssistant, seconds: float = LATER) -> None:
    """Let ``seconds`` pass, and whatever they started finish."""
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=seconds))
    await hass.async_block_till_done(wait_background_tasks=True)


async def _warm(hass: HomeAssistant, server: OpenAIServer, **agent) -> None:
    server.reply_text("x")
    await async_add_toolbelt(hass, server, warm_up=True, **agent)
    await _later(hass)


def _keep_alives(server: OpenAIServer) -> list[dict]:
    return [r.body for r in server.all_requests if r.path == "/api/generate"]


async def test_the_warm_up_is_what_a_first_turn_sends_without_its_words(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await _warm(hass, openai_server)
    (warm_up,) = openai_server.requests

    openai_server.reply_text("Hello!")
    assert speech(await async_converse(hass, "hello there")) == "Hello!"

    turn = openai_server.last_request
    assert warm_up.messages == [*turn.messages[:-1], {"role": "user", "content": ""}]
    assert turn.messages[-1] == {"role": "user", "content": "hello there"}
    assert warm_up.tools == turn.tools
    assert "HassTurnOn" in str(warm_up.tools)
    assert "Kitchen light" in warm_up.messages[0]["content"]
    assert warm_up.body["max_tokens"] == 1
    assert warm_up.body["stream"] is False


async def test_nothing_is_sent_again_until_the_prompt_changes(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await _warm(hass, openai_server)
    (first,) = openai_server.requests

    # A registry change that leaves the prompt as it was sends nothing.
    async_expose_entity(hass, "conversation", "light.kitchen_light", True)
    await _later(hass)
    assert len(openai_server.requests) == 1

    openai_server.reply_text("x")
    async_expose_entity(hass, "conversation", "light.kitchen_light", False)
    await _later(hass)

    second = openai_server.last_request
    assert "Kitchen light" in first.messages[0]["content"]
    assert "Kitchen light" not in second.messages[0]["content"]


async def test_the_option_off_sends_nothing(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, warm_up=False)
    async_expose_entity(hass, "conversation", "light.kitchen_light", False)
    await _later(hass)
    assert openai_server.requests == []


async def test_openai_is_never_warmed(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """OpenAI bills the warm-up's tokens and keeps its cache for minutes."""
    await async_add_toolbelt(hass, openai_server, server_kind="openai", warm_up=True)
    await _later(hass)
    assert openai_server.requests == []


async def test_a_turn_is_never_kept_waiting_by_a_warm_up(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """A warm-up under way when a turn starts is cancelled (its connection
    closed, so a one-slot server drops it), and sent again after the turn."""
    openai_server.reply_delay(60)  # a slow server reading a long prompt
    await async_add_toolbelt(hass, openai_server, warm_up=True)
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=LATER))
    await openai_server.requests_seen(1)

    openai_server.reply_text("Hello!")
    result = await async_converse(hass, "hello there")

    assert speech(result) == "Hello!"
    openai_server.reply_text("x")
    await _later(hass)
    warm_ups = [r for r in openai_server.requests if _is_warm_up(r)]
    assert len(warm_ups) == 2


def _is_warm_up(request: RecordedRequest) -> bool:
    return request.messages[-1] == {"role": "user", "content": ""}


async def test_ollama_keeps_the_model_loaded_as_the_agent_says(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Ollama's OpenAI endpoint cannot set keep_alive: Toolbelt sets it through
    /api/generate after the warm-up and after each turn."""
    await _warm(hass, openai_server, server_kind="ollama", keep_alive=30)
    assert _keep_alives(openai_server) == [{"model": "test-model", "keep_alive": 1800}]

    openai_server.reply_text("Hello!")
    await async_converse(hass, "hello there")
    await hass.async_block_till_done(wait_background_tasks=True)

    assert len(_keep_alives(openai_server)) == 2


async def test_ollama_kept_loaded_is_warmed_again_after_its_idle_limit(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Kept loaded (-1), the model may still be unloaded by another client's
    request or a restart: after Ollama's idle limit the prefix is sent again."""
    await _warm(hass, openai_server, server_kind="ollama", keep_alive=-1)
    assert _keep_alives(openai_server) == [{"model": "test-model", "keep_alive": -1}]

    openai_server.reply_text("x")
    await _later(hass, 301)
    await _later(hass)

    assert len(openai_server.requests) == 2
    assert openai_server.requests[1].messages == openai_server.requests[0].messages


async def test_the_agent_form_offers_what_the_server_takes(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    """The warm-up for every local server, the keep-alive for Ollama only,
    neither for OpenAI."""
    offered = {}
    for kind in ("llamacpp", "ollama", "openai"):
        server = await openai_server_factory()
        entry = await async_add_toolbelt(hass, server, server_kind=kind)
        (subentry,) = entry.subentries.values()
        result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
        offered[kind] = {str(key) for key in result["data_schema"].schema} & {
            CONF_WARM_UP,
            CONF_KEEP_ALIVE,
        }
        await hass.config_entries.async_remove(entry.entry_id)

    assert offered == {
        "llamacpp": {CONF_WARM_UP},
        "ollama": {CONF_WARM_UP, CONF_KEEP_ALIVE},
        "openai": set(),
    }


async def test_nothing_is_sent_once_home_assistant_stops(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """HA keeps its entities at stop: the warm-up stops on HA's stop event, so a
    prompt change during shutdown sends nothing."""
    await _warm(hass, openai_server)
    assert len(openai_server.requests) == 1

    hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
    await hass.async_block_till_done()
    openai_server.reply_text("x")
    async_expose_entity(hass, "conversation", "light.kitchen_light", False)
    await _later(hass)

    assert len(openai_server.requests) == 1


async def test_warm_ups_leave_a_conversation_its_devices(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """A conversation keeps the devices of its first turn (its prompt stays
    byte-identical for the server's cache), however many warm-ups the home's
    changes send meanwhile: a warm-up is no conversation to remember. In
    large-home mode the prompt's device index is Toolbelt's own reading."""
    await _warm(hass, openai_server, large_home="on")
    openai_server.reply_text("Hello!")
    first = await async_converse(hass, "hello there")
    turn_one = openai_server.last_request
    assert "Devices: 4 exposed (light 4)" in turn_one.messages[0]["content"]

    # More prompt-changing edits, each warmed, than an agent remembers
    # conversations (8); the last one hides the kitchen light.
    for exposed in [False, True] * 5 + [False]:
        openai_server.reply_text("x")
        async_expose_entity(hass, "conversation", "light.kitchen_light", exposed)
        await _later(hass)
    warm_ups = [r for r in openai_server.requests if _is_warm_up(r)]
    assert len(warm_ups) == 12
    assert "Devices: 3 exposed (light 3)" in warm_ups[-1].messages[0]["content"]

    openai_server.reply_text("Still here.")
    second = await async_converse(hass, "and now?", first.conversation_id)

    assert speech(second) == "Still here."
    turn_two = openai_server.last_request
    assert turn_two.messages[: len(turn_one.messages)] == turn_one.messages
    assert turn_two.tools == turn_one.tools
