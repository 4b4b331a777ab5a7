"""What a user hears when the model server fails, from an agent and an AI task.

One sentence in the turn's language (strings.json "exceptions", translated in
translations/<language>.json): a conversation turn streams nothing to TTS and
answers with it, and an AI task raises it with its translation key. Both entities build their turns in one place, so they
also send the model server the same tools for the same LLM API.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from homeassistant.components import ai_task
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
import pytest

from custom_components.toolbelt.const import CONF_LLM_HASS_API, CONF_REQUEST_TIMEOUT
from custom_components.toolbelt.ha import compat, large_home
from tests.ha.conftest import (
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    speech,
    streamed_text,
)
from tests.ha.test_ai_task import add_task
from tests.openai_server import OpenAIServer

LIB = compat.CURRENT.schema_lib

TIMEOUT = {
    "en": "Sorry, the llama.cpp server did not answer in time.",
    "de": "Entschuldigung, der llama.cpp-Server hat nicht rechtzeitig geantwortet.",
    "fr": "Désolé, le serveur llama.cpp n'a pas répondu à temps.",
}
AUTH = {
    "en": "Sorry, the llama.cpp server rejected the API key.",
    "de": "Entschuldigung, der llama.cpp-Server hat den API-Schlüssel abgelehnt.",
    "fr": "Désolé, le serveur llama.cpp a refusé la clé API.",
}


def fail(server: OpenAIServer, failure: str) -> None:
    """The next request fails: the server is too slow, or refuses the key."""
    if failure == "timeout":
        server.reply_delay(5)
    else:
        server.reply_error(401, message="Invalid API key")


SAID = {"timeout": TIMEOUT, "auth": AUTH}
CASES = [(failure, language) for failure in SAID for language in ("en", "de", "fr")]


@pytest.mark.parametrize(("failure", "language"), CASES)
async def test_a_failed_turn_is_said_in_the_conversations_language(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    failure: str,
    language: str,
) -> None:
    await async_add_toolbelt(hass, openai_server, **{CONF_REQUEST_TIMEOUT: 0.5})
    fail(openai_server, failure)

    result, deltas = await async_converse_streamed(hass, "hello", language)

    # Nothing reached TTS before the failure: Assist speaks the final answer.
    assert streamed_text(deltas) == ""
    assert speech(result) == SAID[failure][language]


@pytest.mark.parametrize(("failure", "language"), CASES)
async def test_a_failed_task_says_the_same_sentence_in_homes_language(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    failure: str,
    language: str,
) -> None:
    """An AI task has no conversation: it speaks the home's language."""
    hass.config.language = language
    _entry, task = await add_task(hass, openai_server, **{CONF_REQUEST_TIMEOUT: 0.5})
    fail(openai_server, failure)

    with pytest.raises(HomeAssistantError) as caught:
        await ai_task.async_generate_data(
            hass, task_name="t", entity_id=task, instructions="Write a poem."
        )

    assert str(caught.value) == SAID[failure][language]
    # The frontend finds the same sentence under the same key.
    assert caught.value.translation_key == f"server_{failure}"


class LongContext(llm.Tool):
    """A tool HA's Assist also offers, whose long description a turn shortens."""

    name = "GetLiveContext"
    description = (
        "Provides real-time information about the CURRENT state, value, or mode"
        " of devices, sensors, entities, or areas. Use this tool for: 1. Answering"
        " questions about current conditions. 2. As the first step in conditional"
        " actions."
    )
    parameters = LIB.Schema({})
    integration = "toolbelt_tests"

    async def async_call(
        self, hass: HomeAssistant, tool_input: llm.ToolInput, llm_context: Any
    ) -> Any:
        return compat.make_tool_result({"live": "all quiet"})


@dataclass(slots=True, kw_only=True)
class ContextAPI(llm.API):
    """An LLM API with one tool (the one above), for an agent and a task alike."""

    tool: type[llm.Tool] = LongContext

    async def async_get_api_instance(
        self, llm_context: llm.LLMContext
    ) -> llm.APIInstance:
        return llm.APIInstance(self, "", llm_context, [self.tool()])


async def test_a_task_and_an_agent_send_the_same_tools_for_one_api(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    api = ContextAPI(hass=hass, id="context_api", name="Context")
    unregister = llm.async_register_api(hass, api)
    try:
        _entry, task = await add_task(hass, openai_server)
        entry = hass.config_entries.async_entries("toolbelt")[0]
        agent = next(
            s for s in entry.subentries.values() if s.subentry_type == "conversation"
        )
        hass.config_entries.async_update_subentry(
            entry, agent, data={**agent.data, CONF_LLM_HASS_API: [api.id]}
        )
        await hass.async_block_till_done()
        openai_server.reply_text("All quiet.")
        openai_server.reply_text("All quiet.")

        await async_converse(hass, "Anything going on?")
        await ai_task.async_generate_data(
            hass, task_name="t", entity_id=task, instructions="Anything?", llm_api=api
        )
    finally:
        unregister()

    agent_request, task_request = openai_server.requests
    (sent,) = agent_request.body["tools"]
    assert task_request.body["tools"] == agent_request.body["tools"]
    # Both send the shortened description, not HA's long one.
    assert sent["function"]["description"] != LongContext.description


class Lookup(LongContext):
    """A tool of another integration: not one of HA's intent tools."""

    name = "lookup_recipe"
    description = "Finds a recipe."


@pytest.mark.parametrize(("tool", "reads"), [(Lookup, 0), (LongContext, 1)])
async def test_a_task_reads_the_home_only_with_ha_intent_tools(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    tool: type[llm.Tool],
    reads: int,
) -> None:
    """Exposures shape HA's intent tools; a task without them reads none."""
    calls: list[str] = []
    monkeypatch.setattr(
        large_home,
        "exposed_devices",
        lambda hass, assistant: calls.append(assistant) or [],
    )
    api = ContextAPI(hass=hass, id="some_api", name="Some", tool=tool)
    unregister = llm.async_register_api(hass, api)
    try:
        _entry, task = await add_task(hass, openai_server)
        openai_server.reply_text("Done.")
        await ai_task.async_generate_data(
            hass, task_name="t", entity_id=task, instructions="Anything?", llm_api=api
        )
    finally:
        unregister()

    assert len(calls) == reads
