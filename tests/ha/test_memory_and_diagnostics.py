"""Memory across conversations through a real agent turn; diagnostics redact secrets."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)

from custom_components.toolbelt.const import CONF_API_KEY
from tests.ha.conftest import async_add_toolbelt, async_converse, speech
from tests.openai_server import OpenAIServer


async def test_memory_stored_in_one_turn_is_found_in_a_later_conversation(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry = await async_add_toolbelt(
        hass, openai_server, llm_hass_api=[llm.LLM_API_ASSIST, "toolbelt_tools"]
    )
    # The merged API namespaces our tool; the model may use either spelling.
    openai_server.reply_text(
        '<tool_call>{"name": "store_memory", "arguments": '
        '{"content": "Anna likes the living room at 22 degrees"}}</tool_call>'
    )
    openai_server.reply_text("I'll remember that.")
    first = await async_converse(hass, "remember that Anna likes 22 degrees")
    assert speech(first) == "I'll remember that."
    stored = openai_server.requests[1].messages[-1]
    assert stored["role"] == "tool"
    assert "Stored memory" in stored["content"]

    tool_names = {t["function"]["name"] for t in openai_server.requests[0].tools}
    memory_name = next(n for n in tool_names if n.endswith("memory"))
    openai_server.reply_tool_calls(
        [{"name": memory_name, "arguments": {"action": "search", "query": "Anna"}}]
    )
    openai_server.reply_text("Anna likes 22 degrees.")
    later = await async_converse(hass, "what temperature does Anna like?")

    assert later.conversation_id != first.conversation_id
    found = openai_server.requests[3].messages[-1]
    assert "Anna likes the living room at 22 degrees" in found["content"]
    assert speech(later) == "Anna likes 22 degrees."
    # Unloading the last entry closes the memory database and its thread.
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()


async def test_diagnostics_redact_the_api_key(
    hass: HomeAssistant, ha_ready, hass_client, openai_server_factory
) -> None:
    server: OpenAIServer = await openai_server_factory()
    entry = await async_add_toolbelt(hass, server)
    hass.config_entries.async_update_entry(
        entry, data={**entry.data, CONF_API_KEY: "sk-secret"}
    )
    await hass.async_block_till_done()
    diag = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    assert "sk-secret" not in str(diag)
    assert diag["entry"]["data"][CONF_API_KEY] == "**REDACTED**"
    assert diag["subentries"][0]["data"]["model"] == "test-model"
    assert diag["server"]["models"] == ["test-model"]
