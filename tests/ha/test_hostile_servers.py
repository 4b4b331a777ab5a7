"""A hostile or broken model server: what the user hears, what HA keeps, what is sent.

Each test scripts a server that misbehaves on the wire (a line that never ends,
unescaped line separators, a reply or a model list far past any real size,
thousands of tool calls, repeated call ids, an id no file can store) and checks
the spoken text, the streamed text, HA's saved config and the next request.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
import json

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from custom_components.toolbelt.backend.base import CompletionRequest
from custom_components.toolbelt.backend.openai_compat import (
    MAX_BODY_BYTES,
    MAX_EVENT_CHARS,
    MAX_REPLY_CHARS,
)
from custom_components.toolbelt.const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_MODEL,
    CONF_SERVER_KIND,
    DOMAIN,
)
from custom_components.toolbelt.ha.client import async_create_backend
from custom_components.toolbelt.toolcalls.model import MAX_CALLS
from custom_components.toolbelt.tools.const import CONF_MODEL_SWITCHING
from tests.ha.conftest import (
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    bare,
    speech,
    streamed_text,
)
from tests.ha.test_config_flow import _start, _through_check
from tests.ha.test_errors_and_lifecycle import assert_spoken_error
from tests.openai_server import OpenAIServer, Pause, Wire

LONE = "evil\ud800model"


def tool_messages(server: OpenAIServer, request: int) -> list[dict]:
    """The tool results the model read in that request."""
    return [m for m in server.requests[request].messages if m["role"] == "tool"]


# -- model ids ----------------------------------------------------------------------


async def _saved_entries(hass: HomeAssistant, hass_storage: dict) -> list[dict]:
    """HA's delayed save of the config entries, run now; the entries it wrote."""
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=30))
    await hass.async_block_till_done()
    return hass_storage["core.config_entries"]["data"]["entries"]


async def test_a_model_id_no_file_can_hold_is_not_offered_and_every_save_works(
    hass: HomeAssistant,
    ha_ready,
    openai_server_factory,
    hass_storage: dict,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A listed id with a lone surrogate never reaches the entry: HA keeps saving."""
    server: OpenAIServer = await openai_server_factory(models=[LONE, "good-model"])
    result = await _start(hass, "llamacpp")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: server.base_url, CONF_API_KEY: ""}
    )
    await hass.async_block_till_done()
    result = await _through_check(hass, result)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    agent = next(iter(result["result"].subentries.values()))
    assert agent.data[CONF_MODEL] == "good-model"

    saved = await _saved_entries(hass, hass_storage)
    ours = next(e for e in saved if e["domain"] == DOMAIN)
    models = [s["data"].get(CONF_MODEL) for s in ours["subentries"]]
    assert models == ["good-model", "good-model"]  # the agent and its AI task
    assert "not valid UTF-8" not in caplog.text


async def test_the_model_tool_neither_lists_nor_switches_to_such_an_id(
    hass: HomeAssistant,
    ha_ready,
    openai_server_factory,
    hass_admin_user,
    hass_storage: dict,
) -> None:
    """The model reads a list it can send back; a switch to the id is refused."""
    server: OpenAIServer = await openai_server_factory(models=["test-model", LONE])
    entry = await async_add_toolbelt(
        hass,
        server,
        tools={CONF_MODEL_SWITCHING: "anyone"},
        llm_hass_api=["toolbelt_tools"],
    )
    server.reply_tool_calls([{"name": "model", "arguments": {"action": "list"}}])
    server.reply_tool_calls(
        [{"name": "model", "arguments": {"action": "switch", "model": LONE}}]
    )
    server.reply_text("It stays.")
    result = await async_converse(hass, "switch to the evil model")

    assert speech(result) == "It stays."
    listed = json.loads(tool_messages(server, 1)[-1]["content"])["result"]
    assert listed == "Test server lists 1 models: test-model. You run on test-model."
    refusal = json.loads(tool_messages(server, 2)[-1]["content"])["error"]
    assert "is not a model Test server lists" in refusal
    agents = [s for s in entry.subentries.values() if s.subentry_type == "conversation"]
    assert [a.data[CONF_MODEL] for a in agents] == ["test-model"]
    # Its database closed before the save's timer jumps the clock forward.
    assert await hass.config_entries.async_unload(entry.entry_id)
    hass.config_entries.async_update_entry(entry, title="Renamed")
    saved = await _saved_entries(hass, hass_storage)
    assert [e["title"] for e in saved if e["domain"] == DOMAIN] == ["Renamed"]


async def test_a_model_list_past_the_body_limit_is_refused_on_the_form(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """A model list past the body limit is not read whole: the setup form says
    the address does not answer like an OpenAI-compatible API, and a sane list
    then finishes the flow."""
    model = b'{"id": "model-%07d", "object": "model", "owned_by": "x"}'
    count = MAX_BODY_BYTES // len(model % 0) + 1000
    openai_server.models_body = (
        b'{"object": "list", "data": ['
        + b", ".join(model % i for i in range(count))
        + b"]}"
    )
    result = await _start(hass, "llamacpp")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: openai_server.base_url, CONF_API_KEY: ""}
    )

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "not_openai_api"}
    openai_server.models_body = None
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: openai_server.base_url, CONF_API_KEY: ""}
    )
    result = await _through_check(hass, result)
    assert result["type"] is FlowResultType.CREATE_ENTRY


# -- the stream -----------------------------------------------------------------------


async def test_unicode_line_separators_in_a_stream_event_are_text(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """SSE ends lines only at CR, LF or CRLF: U+2028, U+2029 and U+0085 are text."""
    openai_server.ascii_json = False  # as llama.cpp writes JSON
    answer = "The hallway light\u2028is on,\u2029the porch\u0085light too."
    openai_server.reply_text(answer)

    result, deltas = await async_converse_streamed(hass, "which lights are on?")

    assert speech(result) == answer
    assert streamed_text(deltas) == answer


async def test_a_stream_line_that_never_ends_is_cut_and_spoken(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """A server that streams without a newline ends the turn at the line limit."""
    piece = 64 * 1024
    openai_server.reply(
        [
            Wire(b'data: {"choices": [{"index": 0, "delta": {"content": "'),
            *[Wire(b"a" * piece)] * (MAX_EVENT_CHARS // piece + 4),
        ],
        finish_reason=None,
        role=False,
    )

    result, deltas = await async_converse_streamed(hass, "hello")

    assert_spoken_error(result, "sent a reply that was too long")
    assert streamed_text(deltas) == ""


async def test_an_endless_reply_is_cut_at_the_limit_and_not_kept(
    hass: HomeAssistant,
    toolbelt,
    openai_server: OpenAIServer,
    recognized: asyncio.Event,
) -> None:
    """TTS gets at most the limit; the conversation does not keep the cut answer."""
    piece = "All work and no play makes a dull reply. " * 100
    # After the honesty guard has read the words ("tell me a story" is no
    # command), so the reply streams.
    openai_server.reply(
        [{"content": piece}] * (MAX_REPLY_CHARS // len(piece) + 3),
        role=True,
        after=recognized,
    )

    result, deltas = await async_converse_streamed(hass, "tell me a story")

    assert_spoken_error(result, "sent a reply that was too long")
    heard = streamed_text(deltas)
    assert 0 < len(heard) <= MAX_REPLY_CHARS
    openai_server.reply_text("A short one.")
    result = await async_converse(hass, "a shorter one", result.conversation_id)
    assert speech(result) == "A short one."
    sent = openai_server.requests[-1].messages
    assert [m["role"] for m in sent][-2:] == ["assistant", "user"]
    assert not any("All work" in (m.get("content") or "") for m in sent)
    assert all(len(m.get("content") or "") < 10_000 for m in sent)


# -- tool calls -----------------------------------------------------------------------


async def test_native_calls_past_the_reply_limit_are_refused_with_a_reason(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """As for text formats: the first calls go through the caps, the rest is one
    refusal the model reads."""
    await async_add_toolbelt(hass, openai_server, max_tool_calls=100)
    calls = [
        {"name": "HassTurnOn", "arguments": {"name": f"Lamp {i}"}}
        for i in range(MAX_CALLS + 20)
    ]
    openai_server.reply_tool_calls(calls, pieces=(1000,))
    openai_server.reply_text("That was too much at once.")

    # Words HA reads as no command on any lane: the honesty guard stays out.
    result = await async_converse(hass, "here is a long job for you")

    assert speech(result) == "That was too much at once."
    results = tool_messages(openai_server, 1)
    assert len(results) == MAX_CALLS + 1
    assert f"more than {MAX_CALLS} calls in one reply" in results[-1]["content"]
    assert results[-1]["content"].startswith("ERROR: ")
    sent_calls = openai_server.requests[1].messages[-len(results) - 1]["tool_calls"]
    assert len(sent_calls) == MAX_CALLS + 1


async def test_a_repeated_call_id_is_replaced_so_each_result_finds_its_call(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """Two calls sent with one id both run; the next request pairs each result
    with its own call under distinct ids."""
    openai_server.reply_tool_calls(
        [
            {
                "id": "call_1",
                "name": "HassTurnOn",
                "arguments": {"name": "Kitchen light"},
            },
            {
                "id": "call_1",
                "name": "HassTurnOn",
                "arguments": {"name": "Porch light"},
            },
        ]
    )
    openai_server.reply_text("Both are on.")

    result = await async_converse(hass, "kitchen and porch lights on")

    assert speech(result) == "Both are on."
    assert hass.states.get("light.kitchen_light").state == "on"
    assert hass.states.get("light.porch_light").state == "on"
    messages = openai_server.requests[1].messages
    assistant = next(m for m in messages if m.get("tool_calls"))
    ids = [c["id"] for c in assistant["tool_calls"]]
    assert ids[0] == "call_1"
    assert len(set(ids)) == 2
    results = tool_messages(openai_server, 1)
    assert [r["tool_call_id"] for r in results] == ids
    names = [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]]
    assert names == [{"name": "Kitchen light"}, {"name": "Porch light"}]
    assert all(
        bare(c["function"]["name"]) == "HassTurnOn" for c in assistant["tool_calls"]
    )


# -- many turns at once ---------------------------------------------------------------


async def test_more_than_a_hundred_requests_share_the_http_client_at_once(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """HA's shared HTTP client sets no connection limit (``Limits`` with only a
    keep-alive expiry), so parallel turns are not queued behind a pool of 100:
    101 streams are open at the server at once, none finished. What bounds
    parallel turns is the event loop's time (``bench/hostile_bench.py
    parallel``) against each request's timeout."""
    backend = await async_create_backend(
        hass, {CONF_BASE_URL: openai_server.base_url, CONF_SERVER_KIND: "llamacpp"}
    )
    streams = 101
    for _ in range(streams):
        openai_server.reply([{"content": "Do"}, Pause(120), {"content": "ne."}])
    request = CompletionRequest(
        model="test-model", messages=[{"role": "user", "content": "hi"}], timeout=180
    )

    async def drain() -> None:
        async for _ in backend.complete(request):
            pass

    tasks = [asyncio.create_task(drain()) for _ in range(streams)]
    try:
        async with asyncio.timeout(90):  # however slow the machine
            while len(openai_server.requests) < streams:  # noqa: ASYNC110 - the server records, it does not signal
                await asyncio.sleep(0.05)
        assert not any(task.done() for task in tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
