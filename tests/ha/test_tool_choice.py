"""Tool choice end to end in real HA: the check offers it, a turn carries it."""

from __future__ import annotations

import json

from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm, translation

from custom_components.toolbelt.const import (
    CONF_CONSTRAINTS,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_STRICT_CALLS,
    CONF_TOOL_CHOICE,
    CONF_TOOL_FORMAT,
    DOMAIN,
)
from tests.ha.conftest import (
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    bare,
    form_input,
    speech,
    streamed_text,
)
from tests.openai_server import OpenAIServer

TURN_ON = [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]


def _forced(body: dict) -> bool:
    return body.get("tool_choice") == "required"


async def test_required_first_calls_the_tool_then_speaks_the_answer(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """A chatty model whose server honours tool_choice acts instead of chatting."""
    await async_add_toolbelt(
        hass,
        openai_server,
        tool_choice="required_first",
        constraints=["tool_choice"],
    )
    openai_server.reply_when(
        _forced,
        lambda: openai_server.reply_tool_calls(TURN_ON),
        lambda: openai_server.reply_text("Sure! I would love to help with lights."),
    )
    openai_server.reply_when(
        _forced,
        lambda: openai_server.reply_tool_calls(TURN_ON),
        lambda: openai_server.reply_text("The kitchen light is on."),
    )

    result = await async_converse(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == "The kitchen light is on."
    first, second = openai_server.requests
    assert first.body["tool_choice"] == "required"
    assert "HassTurnOn" in {bare(t["function"]["name"]) for t in first.tools}
    assert "tool_choice" not in second.body
    assert second.messages[-1]["role"] == "tool"
    assert json.loads(second.messages[-1]["content"])["data"]["success"]


async def test_a_refused_constraint_never_fails_the_turn(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry = await async_add_toolbelt(
        hass, openai_server, tool_choice="required", constraints=["tool_choice"]
    )
    openai_server.reply_error(400, message="tool_choice 'required' is not supported")
    openai_server.reply_text("Hello!")
    openai_server.reply_text("Hello again!")

    assert speech(await async_converse(hass, "hi")) == "Hello!"
    assert speech(await async_converse(hass, "hi")) == "Hello again!"

    refused, retry, later = openai_server.requests
    assert refused.body["tool_choice"] == "required"
    assert "tool_choice" not in retry.body
    assert "tool_choice" not in later.body  # remembered for the agent
    (subentry,) = entry.subentries.values()
    # As diagnostics show it (server.agent_state).
    assert entry.runtime_data.agent_state(subentry).as_dict() == {
        "tool_role": True,  # a separate fact, untouched (llama.cpp's default)
        "refused": ["tool_choice"],
        "warned": [
            "The server refused the tool_choice constraint; Toolbelt sends"
            " requests without it from now on"
        ],
        "logprobs": None,  # no evaluation asked yet
    }


async def test_check_offers_only_honoured_constraints(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry = await async_add_toolbelt(hass, openai_server)  # llama.cpp
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    call = '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "x"}}</tool_call>'
    openai_server.reply_text(call)  # the tool-mode check
    openai_server.reply_text(call)  # grammar: honoured
    openai_server.reply_error(400, message="response_format is not supported")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            CONF_MODEL: "test-model",
            CONF_TOOL_FORMAT: "hermes",
            CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        },
    )
    assert result["step_id"] == "check"
    summary = result["description_placeholders"]["constraints"]
    assert summary == "grammar: honoured; json_schema: refused"
    assert {str(key) for key in result["data_schema"].schema} == {
        CONF_MODEL,
        CONF_TOOL_FORMAT,
        CONF_TOOL_CHOICE,
        CONF_STRICT_CALLS,
    }
    # A plain list (no typed value): the frontend then shows each policy's
    # label, not "required_first"; the agent's tools follow by name.
    choice = next(
        v for k, v in result["data_schema"].schema.items() if k == CONF_TOOL_CHOICE
    ).config
    assert not choice.get("custom_value")
    assert choice["translation_key"] == CONF_TOOL_CHOICE
    values = [option["value"] for option in choice["options"]]
    assert values[:3] == ["auto", "required_first", "required"]
    assert {"HassTurnOn", "GetLiveContext"} <= set(values[3:])
    labels = await translation.async_get_translations(hass, "en", "selector", [DOMAIN])
    prefix = f"component.{DOMAIN}.selector.{CONF_TOOL_CHOICE}.options"
    assert labels[f"{prefix}.required_first"] == "Required on the first request"
    assert all(f"{prefix}.{value}" in labels for value in values[:3])
    _mode, grammar, schema = openai_server.requests
    assert "HassTurnOn" in grammar.body["grammar"]
    assert grammar.messages[-1]["content"] == "Say hello in five words."
    assert schema.body["response_format"]["type"] == "json_schema"

    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_TOOL_CHOICE: "required_first", CONF_STRICT_CALLS: True}
    )
    assert result["reason"] == "reconfigure_successful"
    data = entry.subentries[subentry.subentry_id].data
    assert data[CONF_CONSTRAINTS] == ["grammar"]
    assert data[CONF_TOOL_CHOICE] == "required_first"
    assert data[CONF_STRICT_CALLS] is True


async def test_check_without_honoured_constraints_offers_nothing(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry = await async_add_toolbelt(hass, openai_server)
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    openai_server.reply_tool_calls(TURN_ON)  # tool-mode check
    openai_server.reply_text("Hello there, friend!")  # tool_choice: ignored
    # A native agent's grammar goes with the tools: llama-server refuses that.
    openai_server.reply_error(400, message="response_format is not supported")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_MODEL: "test-model", CONF_TOOL_FORMAT: "auto"}
    )
    assert result["description_placeholders"]["constraints"] == (
        "tool_choice: ignored; grammar: refused; json_schema: refused"
    )
    _mode, _choice, grammar, schema = openai_server.requests
    assert grammar.body["grammar"]
    assert grammar.tools
    assert schema.body["response_format"]["type"] == "json_schema"
    assert schema.tools
    # Only the model and format checked (to try others): no choice to offer.
    assert {str(key) for key in result["data_schema"].schema} == {
        CONF_MODEL,
        CONF_TOOL_FORMAT,
    }
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    data = entry.subentries[subentry.subentry_id].data
    assert data[CONF_CONSTRAINTS] == []
    assert data[CONF_TOOL_CHOICE] == "auto"


async def test_native_on_a_server_ignoring_tool_choice_forces_by_schema(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Ollama ignores tool_choice but honours a schema: the check finds it, a
    chatty model then acts, and its JSON call is never spoken."""
    entry = await async_add_toolbelt(hass, openai_server, server_kind="ollama")
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    call = json.dumps({"name": "HassTurnOn", "arguments": {"name": "x"}})
    openai_server.reply_tool_calls(TURN_ON)  # tool-mode check: native
    openai_server.reply_text("Hello there, friend!")  # tool_choice: ignored
    openai_server.reply_text(call)  # json_schema: honoured
    # The form as the frontend sends it: the agent's warm-up stays off, so no
    # request but the turn's meets the replies scripted for the turn.
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        form_input(
            result,
            {
                CONF_MODEL: "test-model",
                CONF_TOOL_FORMAT: "auto",
                CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
            },
        ),
    )
    assert result["description_placeholders"]["constraints"] == (
        "tool_choice: ignored; json_schema: honoured"
    )
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_TOOL_CHOICE: "required_first"}
    )
    assert result["reason"] == "reconfigure_successful"
    assert entry.subentries[subentry.subentry_id].data[CONF_CONSTRAINTS] == [
        "json_schema"
    ]
    await hass.async_block_till_done()
    openai_server.requests.clear()

    def constrained(body: dict) -> bool:
        return "response_format" in body

    turn_on = json.dumps(TURN_ON[0])
    openai_server.reply_when(
        constrained,
        lambda: openai_server.reply_text(turn_on),
        lambda: openai_server.reply_text("Sure! I would love to help with lights."),
    )
    openai_server.reply_text("The kitchen light is on.")
    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == "The kitchen light is on."
    assert streamed_text(deltas) == "The kitchen light is on."
    first, second = openai_server.requests
    assert first.body["response_format"]["type"] == "json_schema"
    assert "tool_choice" not in first.body
    assert "HassTurnOn" in {bare(t["function"]["name"]) for t in first.tools}
    assert "response_format" not in second.body
