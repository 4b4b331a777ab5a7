"""The agent form's instant-confirmation and hand-off options, and their labels."""

from __future__ import annotations

import json
from pathlib import Path

from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm

from custom_components.toolbelt.const import (
    CONF_HANDOFF_TARGETS,
    CONF_INSTANT_CONFIRMATIONS,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_TOOL_FORMAT,
    SUBENTRY_AI_TASK,
)
from tests.ha.conftest import (
    agent_id,
    async_add_toolbelt,
    async_converse,
    form_input,
    speech,
)
from tests.openai_server import OpenAIServer

STRINGS = json.loads(
    (
        Path(__file__).parents[2] / "custom_components" / "toolbelt" / "strings.json"
    ).read_text()
)


def field(result: dict, name: str):
    key = next(k for k in result["data_schema"].schema if k == name)
    return key, result["data_schema"].schema[key]


async def test_reconfigure_turns_on_instant_confirmations_and_handoff(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry = await async_add_toolbelt(hass, openai_server)
    own = agent_id(hass)
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    key, _ = field(result, CONF_INSTANT_CONFIRMATIONS)
    assert key.default() is False
    _, targets = field(result, CONF_HANDOFF_TARGETS)
    assert targets.config["domain"] == ["conversation"]
    assert targets.config["multiple"] is True
    # An agent cannot hand off to itself.
    assert targets.config["exclude_entities"] == [own]

    # The check: one tool request, one tool_choice constraint.
    openai_server.reply_text("Hello.")
    openai_server.reply_text("Hello.")
    # As the frontend sends it: the agent's warm-up stays off, so no request
    # but the turn's meets the reply scripted for the turn.
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        form_input(
            result,
            {
                CONF_MODEL: "test-model",
                CONF_TOOL_FORMAT: "auto",
                CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
                CONF_INSTANT_CONFIRMATIONS: True,
                CONF_HANDOFF_TARGETS: ["conversation.home_assistant"],
            },
        ),
    )
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done()

    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Porch light"}}]
    )
    spoken = speech(await async_converse(hass, "porch light on"))

    assert spoken == "Turned on the light"
    sent = openai_server.requests[-1]
    names = [t["function"]["name"] for t in sent.tools]
    assert "handoff" in names


def test_every_new_field_has_a_label() -> None:
    agent = STRINGS["config_subentries"]["conversation"]["step"]["init"]
    for name in (CONF_INSTANT_CONFIRMATIONS, CONF_HANDOFF_TARGETS):
        assert agent["data"][name]
        assert agent["data_description"][name]
    task = STRINGS["config_subentries"][SUBENTRY_AI_TASK]
    assert task["initiate_flow"]["user"] == "Add AI task"
    assert set(task["abort"]) == {"entry_not_loaded", "reconfigure_successful"}


async def test_ai_task_form_fields_all_have_labels(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry = await async_add_toolbelt(hass, openai_server)
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_AI_TASK),
        context={"source": config_entries.SOURCE_USER},
    )
    labels = STRINGS["config_subentries"][SUBENTRY_AI_TASK]["step"]["init"]["data"]
    shown = {str(key) for key in result["data_schema"].schema}
    assert shown == set(labels)
