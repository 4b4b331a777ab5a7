"""The UI flows: connection, agents, reconfigure and reauth, against a real server."""

from __future__ import annotations

import base64
import json
import logging
from pathlib import Path
from unittest.mock import patch

from homeassistant import config_entries
from homeassistant.components import ai_task
from homeassistant.const import CONF_NAME
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import device_registry as dr, entity_registry as er, llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.toolbelt.const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_CONSTRAINTS,
    CONF_INSTANT_CONFIRMATIONS,
    CONF_LLM_HASS_API,
    CONF_MAX_DEVICE_COMMANDS,
    CONF_MAX_TOKENS,
    CONF_MAX_TOOL_CALLS,
    CONF_MODEL,
    CONF_REQUEST_TIMEOUT,
    CONF_SERVER_KIND,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    CONF_TOOL_FORMAT,
    DOMAIN,
)
from custom_components.toolbelt.ha.server_names import url_from_form
from tests import icu_message
from tests.ha.conftest import (
    async_add_toolbelt,
    async_assist_api,
    async_converse,
    speech,
)
from tests.openai_server import OpenAIServer

INTEGRATION = Path(__file__).parents[2] / "custom_components" / "toolbelt"


async def assist_name(hass: HomeAssistant, bare_name: str) -> str:
    """The name this HA's Assist API gives a tool (namespaced on 2026.10+)."""
    api = await async_assist_api(hass)
    return next(t.name for t in api.tools if t.name.rpartition("__")[2] == bare_name)


async def _through_check(hass: HomeAssistant, result: dict) -> dict:
    """The first agent's model as suggested, then its check accepted as is."""
    assert result["step_id"] == "agent", result
    (model,) = [k for k in result["data_schema"].schema if k == CONF_MODEL]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: model.description["suggested_value"]}
    )
    assert result["step_id"] == "check", result
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    await hass.async_block_till_done()
    return result


async def _start(hass: HomeAssistant, kind: str) -> dict:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_SERVER_KIND: kind}
    )
    assert result["step_id"] == "connect"
    return result


async def test_connect_suggests_the_kinds_usual_address(
    hass: HomeAssistant, ha_ready
) -> None:
    result = await _start(hass, "ollama")
    schema = result["data_schema"].schema
    base_url = next(key for key in schema if key == CONF_BASE_URL)
    assert base_url.description["suggested_value"] == "http://localhost:11434/v1"


async def test_success_creates_entry_and_default_agent(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    server: OpenAIServer = await openai_server_factory(models=["qwen3:8b", "llama3.2"])
    result = await _start(hass, "ollama")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: server.base_url + "/", CONF_API_KEY: ""}
    )
    await hass.async_block_till_done()
    result = await _through_check(hass, result)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == f"Ollama on 127.0.0.1:{server.port}"
    assert result["data"] == {
        CONF_SERVER_KIND: "ollama",
        CONF_BASE_URL: server.base_url,
        CONF_API_KEY: "",
    }
    entry = result["result"]
    agent, task = entry.subentries.values()
    assert agent.subentry_type == "conversation"
    assert agent.data[CONF_MODEL] == "qwen3:8b"
    assert agent.data[CONF_LLM_HASS_API] == [llm.LLM_API_ASSIST]
    assert agent.data[CONF_TOOL_FORMAT] == "auto"
    # Named after the model it was checked with, as an added agent is.
    assert agent.title == "qwen3:8b"
    assert hass.states.get("conversation.qwen3_8b") is not None
    # An AI task comes with the server, as with HA's own LLM integrations.
    assert task.subentry_type == "ai_task_data"
    assert task.title == "Toolbelt AI Task"
    assert task.data[CONF_MODEL] == "qwen3:8b"
    assert task.data[CONF_CONSTRAINTS] == []  # nothing honoured by this server
    assert hass.states.get("ai_task.toolbelt_ai_task") is not None
    server.reply_text("A short poem about tea.")
    generated = await ai_task.async_generate_data(
        hass,
        task_name="poem",
        entity_id="ai_task.toolbelt_ai_task",
        instructions="Write a poem.",
    )
    assert generated.data == "A short poem about tea."
    assert server.requests[-1].body["model"] == "qwen3:8b"


@pytest.mark.parametrize(
    ("options", "setup", "error"),
    [
        ({}, "closed", "cannot_connect"),
        ({"require_api_key": "sk-right"}, None, "invalid_auth"),
        ({"models_shape": "html"}, None, "not_openai_api"),
        ({"models_shape": "not_found"}, None, "not_openai_api"),
    ],
)
async def test_connection_errors_show_on_the_form_and_recover(
    hass: HomeAssistant,
    ha_ready,
    openai_server_factory,
    closed_port_url: str,
    options: dict,
    setup: str | None,
    error: str,
) -> None:
    server: OpenAIServer = await openai_server_factory(**options)
    url = closed_port_url if setup == "closed" else server.base_url
    result = await _start(hass, "vllm")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: url, CONF_API_KEY: "sk-wrong"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": error}

    # Fixing the input on the same form finishes the flow.
    server.models_shape = "openai"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: server.base_url, CONF_API_KEY: "sk-right"}
    )
    result = await _through_check(hass, result)
    assert result["type"] is FlowResultType.CREATE_ENTRY


async def test_unexpected_error_is_unknown(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    result = await _start(hass, "other")
    with patch(
        "custom_components.toolbelt.config_flow.async_create_backend",
        side_effect=RuntimeError("boom"),
    ):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_BASE_URL: openai_server.base_url}
        )
    assert result["errors"] == {"base": "unknown"}


async def test_openai_needs_a_key(hass: HomeAssistant, ha_ready) -> None:
    result = await _start(hass, "openai")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_BASE_URL: "https://api.openai.com/v1", CONF_API_KEY: ""},
    )
    assert result["errors"] == {CONF_API_KEY: "api_key_required"}


async def test_same_server_twice_aborts(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server)
    result = await _start(hass, "llamacpp")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: openai_server.base_url + "/"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_reconfigure_changes_url_and_key(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    old: OpenAIServer = await openai_server_factory()
    new: OpenAIServer = await openai_server_factory(require_api_key="sk-new")
    entry = await async_add_toolbelt(hass, old)
    result = await entry.start_reconfigure_flow(hass)
    assert result["step_id"] == "reconfigure"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: new.base_url, CONF_API_KEY: "sk-bad"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: new.base_url, CONF_API_KEY: "sk-new"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data[CONF_BASE_URL] == new.base_url
    assert entry.data[CONF_API_KEY] == "sk-new"
    assert entry.unique_id == new.base_url
    await hass.async_block_till_done()
    assert new.all_requests[-1].authorization == "Bearer sk-new"


async def _vllm_entry(
    hass: HomeAssistant, server: OpenAIServer, api_key: str
) -> MockConfigEntry:
    """A loaded vLLM server entry that stores ``api_key``."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        unique_id=server.base_url,
        data={
            CONF_SERVER_KIND: "vllm",
            CONF_BASE_URL: server.base_url,
            CONF_API_KEY: api_key,
        },
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    return entry


async def test_reconfigure_never_shows_the_stored_key(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    """The key field starts empty (no eye icon can reveal it); empty keeps the key."""
    server: OpenAIServer = await openai_server_factory(require_api_key="sk-secret")
    entry = await _vllm_entry(hass, server, "sk-secret")
    result = await entry.start_reconfigure_flow(hass)
    (key,) = [k for k in result["data_schema"].schema if k == CONF_API_KEY]
    assert not (key.description or {}).get("suggested_value")
    assert "sk-secret" not in str(result)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: server.base_url, CONF_API_KEY: ""}
    )
    assert result["reason"] == "reconfigure_successful"
    assert entry.data[CONF_API_KEY] == "sk-secret"
    await hass.async_block_till_done()
    assert server.all_requests[-1].authorization == "Bearer sk-secret"


async def test_a_name_typed_in_the_form_is_the_title(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    result = await _start(hass, "other")
    # The form suggests a readable name for the suggested address.
    (name,) = [k for k in result["data_schema"].schema if k == CONF_NAME]
    assert name.description == {"suggested_value": "Model server on localhost:8000"}
    assert result["description_placeholders"] == {"server": "the model server"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_NAME: "Garage GPU box", CONF_BASE_URL: openai_server.base_url},
    )
    result = await _through_check(hass, result)
    assert result["title"] == "Garage GPU box"


async def test_credentials_in_the_url_stay_out_of_titles_forms_and_logs(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A proxy's user:password@ reaches the server as basic auth, nowhere else."""
    caplog.set_level(logging.DEBUG)
    url = openai_server.base_url.replace("http://", "http://anna:s3cret-pw@")
    result = await _start(hass, "llamacpp")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_NAME: "llama.cpp on localhost:8080", CONF_BASE_URL: url},
    )
    await hass.async_block_till_done()
    result = await _through_check(hass, result)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    entry = result["result"]
    assert entry.title == f"llama.cpp on 127.0.0.1:{openai_server.port}"
    assert entry.unique_id == openai_server.base_url
    expected = "Basic " + base64.b64encode(b"anna:s3cret-pw").decode()
    assert openai_server.all_requests[-1].authorization == expected

    openai_server.reply_error(500, message="boom")
    said = speech(await async_converse(hass, "hello"))
    assert said.startswith("Sorry, the llama.cpp server had an internal error")

    form = await hass.config_entries.flow.async_init(
        DOMAIN,
        context={
            "source": config_entries.SOURCE_RECONFIGURE,
            "entry_id": entry.entry_id,
        },
    )
    shown = form["data_schema"].schema
    (base_url,) = [k for k in shown if k == CONF_BASE_URL]
    masked = openai_server.base_url.replace("http://", "http://anna:********@")
    assert base_url.description == {"suggested_value": masked}
    # Submitting the asterisks keeps the stored password.
    result = await hass.config_entries.flow.async_configure(
        form["flow_id"],
        {CONF_NAME: entry.title, CONF_BASE_URL: masked, CONF_API_KEY: ""},
    )
    assert result["reason"] == "reconfigure_successful"
    assert entry.data[CONF_BASE_URL] == url
    await hass.async_block_till_done()

    for text in (said, entry.title, str(form), caplog.text):
        assert "s3cret-pw" not in text
    assert "127.0.0.1" not in said


async def test_reauth_flow(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    server: OpenAIServer = await openai_server_factory(require_api_key="sk-old")
    entry = await _vllm_entry(hass, server, "sk-old")
    server.require_api_key = "sk-rotated"
    result = await entry.start_reauth_flow(hass)
    assert result["step_id"] == "reauth_confirm"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: "sk-wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: "sk-rotated"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data[CONF_API_KEY] == "sk-rotated"


async def test_setup_with_rejected_key_starts_reauth(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    server: OpenAIServer = await openai_server_factory(require_api_key="sk-1")
    entry = MockConfigEntry(
        domain=DOMAIN,
        data={
            CONF_SERVER_KIND: "vllm",
            CONF_BASE_URL: server.base_url,
            CONF_API_KEY: "x",
        },
    )
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [flow["context"]["source"] for flow in flows] == ["reauth"]


async def test_add_agent_with_capability_check(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    server: OpenAIServer = await openai_server_factory(models=["m1", "m2"])
    entry = await async_add_toolbelt(hass, server)
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "conversation"), context={"source": config_entries.SOURCE_USER}
    )
    assert result["step_id"] == "init"
    model_selector = next(
        value
        for key, value in result["data_schema"].schema.items()
        if key == CONF_MODEL
    )
    assert model_selector.config["options"] == ["m1", "m2"]
    assert model_selector.config["custom_value"] is True

    server.reply_tool_calls([{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}])
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            "name": "Kitchen helper",
            CONF_MODEL: "my-custom-model",
            CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
            CONF_TOOL_FORMAT: "auto",
        },
    )
    assert result["step_id"] == "check"
    assert "Native tool calls" in result["description_placeholders"]["result"]
    probe = server.requests[0]
    assert probe.body["model"] == "my-custom-model"
    # The check sends the agent's real turn-on tool, as a turn would send it.
    assert probe.tools[0]["function"]["name"] == await assist_name(hass, "HassTurnOn")

    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    agent = next(s for s in entry.subentries.values() if s.title == "Kitchen helper")
    assert agent.data[CONF_MODEL] == "my-custom-model"
    assert agent.data[CONF_LLM_HASS_API] == [llm.LLM_API_ASSIST]


async def test_capability_check_reports_text_calls(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry = await async_add_toolbelt(hass, openai_server)
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    openai_server.reply_text(
        '<tool_call>\n{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}\n</tool_call>'
    )
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_MODEL: "test-model", CONF_TOOL_FORMAT: "auto"}
    )
    assert "Text tool calls" in result["description_placeholders"]["result"]
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    assert result["reason"] == "reconfigure_successful"


async def test_stale_llm_api_ids_are_dropped(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """An API that no longer exists (uninstalled integration) is not offered back."""
    entry = await async_add_toolbelt(
        hass, openai_server, llm_hass_api=[llm.LLM_API_ASSIST, "gone_api"]
    )
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    key = next(k for k in result["data_schema"].schema if k == CONF_LLM_HASS_API)
    assert key.description["suggested_value"] == [llm.LLM_API_ASSIST]


@pytest.mark.skipif(
    not hasattr(llm, "LLM_API_HOME_ASSISTANT"),
    reason="this HA has no administrators-only API",
)
async def test_an_administrators_only_api_says_so_in_the_form(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """HA 2026.11's Home Assistant API works only in an admin's turns: the
    agent's API list says so; Assist shows under HA's own name."""
    entry = await async_add_toolbelt(hass, openai_server)
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    key = next(k for k in result["data_schema"].schema if k == CONF_LLM_HASS_API)
    options = result["data_schema"].schema[key].config["options"]
    labels = {option["value"]: option["label"] for option in options}
    assert labels[llm.LLM_API_HOME_ASSISTANT] == "Home Assistant (administrators only)"
    assert labels[llm.LLM_API_ASSIST] == "Device control"


async def test_counts_are_stored_as_whole_numbers(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """The number selector sends 1024.0; the agent stores 1024 (and sends it so)."""
    entry = await async_add_toolbelt(hass, openai_server)
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    openai_server.reply_text("Hello.")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            CONF_MODEL: "test-model",
            CONF_TOOL_FORMAT: "auto",
            CONF_MAX_TOKENS: 1024.0,
            CONF_MAX_TOOL_CALLS: 12.0,
            CONF_MAX_DEVICE_COMMANDS: 2.0,
            CONF_REQUEST_TIMEOUT: 30.0,
            CONF_TEMPERATURE: 0.5,
        },
    )
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    assert result["reason"] == "reconfigure_successful"
    data = entry.subentries[subentry.subentry_id].data
    for key, value in (
        (CONF_MAX_TOKENS, 1024),
        (CONF_MAX_TOOL_CALLS, 12),
        (CONF_MAX_DEVICE_COMMANDS, 2),
        (CONF_REQUEST_TIMEOUT, 30),
    ):
        assert data[key] == value
        assert type(data[key]) is int, key
    assert data[CONF_TEMPERATURE] == 0.5


async def test_the_first_agent_gets_the_capability_check_with_real_tool_names(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Adding a server checks its first agent too, and saves what was found."""
    turn_on = await assist_name(hass, "HassTurnOn")
    openai_server.reply_tool_calls([{"name": turn_on, "arguments": {"name": "x"}}])
    result = await _start(hass, "llamacpp")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: openai_server.base_url}
    )
    assert result["step_id"] == "agent"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "test-model"}
    )
    assert result["step_id"] == "check"
    assert "Native tool calls" in result["description_placeholders"]["result"]
    probe = openai_server.requests[0]
    assert probe.tools[0]["function"]["name"] == turn_on
    assert probe.messages[-1]["content"] == "Turn on the kitchen light."

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    agent, _task = result["result"].subentries.values()
    assert agent.data[CONF_TOOL_CHOICE] == "auto"
    # No constraint was honoured by this test server: none is offered or stored.
    assert agent.data[CONF_CONSTRAINTS] == []


async def test_adding_a_server_picks_the_model_and_can_go_back(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    """The first agent's model is chosen, named in the verdict, and a "No tool
    call" verdict can be answered with another format or model on the same form."""
    server: OpenAIServer = await openai_server_factory(models=["hermes-8b", "chat-3b"])
    result = await _start(hass, "other")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: server.base_url}
    )
    assert result["step_id"] == "agent"
    (model,) = [k for k in result["data_schema"].schema if k == CONF_MODEL]
    assert model.description["suggested_value"] == "hermes-8b"
    model_selector = result["data_schema"].schema[model].config
    assert model_selector["options"] == ["hermes-8b", "chat-3b"]

    server.reply_text("Sure! The kitchen light is on now.")  # no call: chats
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "chat-3b", CONF_TOOL_FORMAT: "auto"}
    )
    assert result["step_id"] == "check"
    assert result["description_placeholders"]["model"] == "chat-3b"
    assert result["description_placeholders"]["result"].startswith("No tool call")
    assert server.requests[0].body["model"] == "chat-3b"

    # Back: another format on the same form checks again.
    sent = len(server.requests)
    server.reply_text('Action: HassTurnOn\nAction Input: {"name": "kitchen"}')
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "chat-3b", CONF_TOOL_FORMAT: "react"}
    )
    assert result["step_id"] == "check"
    assert result["description_placeholders"]["result"].startswith("Text tool calls")
    again = server.requests[sent]
    assert again.body["model"] == "chat-3b"
    assert "Action Input" in again.messages[0]["content"]  # react's prompt

    # Submitted as checked: the entry is created, nothing is asked again.
    sent = len(server.requests)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "chat-3b", CONF_TOOL_FORMAT: "react"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert len(server.requests) == sent
    agent, task = result["result"].subentries.values()
    assert agent.data[CONF_MODEL] == "chat-3b"
    assert agent.data[CONF_TOOL_FORMAT] == "react"
    assert task.data[CONF_MODEL] == "chat-3b"
    await hass.async_block_till_done()


async def test_add_agent_suggests_a_free_name(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Not 'Toolbelt agent' again: the model's name, numbered when it is taken."""
    entry = await async_add_toolbelt(hass, openai_server)
    names = []
    for _ in range(2):
        result = await hass.config_entries.subentries.async_init(
            (entry.entry_id, "conversation"), context={"source": "user"}
        )
        assert result["type"] is FlowResultType.FORM, result
        (name,) = [k for k in result["data_schema"].schema if k == CONF_NAME]
        names.append(name.description["suggested_value"])
        openai_server.reply_text("Hello.")
        result = await hass.config_entries.subentries.async_configure(
            result["flow_id"],
            {CONF_NAME: names[-1], CONF_MODEL: "test-model", CONF_TOOL_FORMAT: "auto"},
        )
        result = await hass.config_entries.subentries.async_configure(
            result["flow_id"], {}
        )
        assert result["type"] is FlowResultType.CREATE_ENTRY
        await hass.async_block_till_done()  # the entry reloads with its new agent
    assert names == ["test-model", "test-model 2"]


async def test_an_untouched_name_follows_the_model(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    """Add agent suggests the first model's name; picking another renames it."""
    server: OpenAIServer = await openai_server_factory(models=["hermes-8b", "qwen3:8b"])
    entry = await async_add_toolbelt(hass, server)
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "conversation"), context={"source": "user"}
    )
    (name,) = [k for k in result["data_schema"].schema if k == CONF_NAME]
    assert name.description["suggested_value"] == "hermes-8b"
    server.reply_text("Hello.")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {CONF_NAME: "hermes-8b", CONF_MODEL: "qwen3:8b", CONF_TOOL_FORMAT: "auto"},
    )
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    await hass.async_block_till_done()
    titles = sorted(sub.title for sub in entry.subentries.values())
    assert titles == ["Test agent", "qwen3:8b"]

    # Reconfigure: the model-named agent follows a new model too...
    agent = next(s for s in entry.subentries.values() if s.title == "qwen3:8b")
    result = await entry.start_subentry_reconfigure_flow(hass, agent.subentry_id)
    (name,) = [k for k in result["data_schema"].schema if k == CONF_NAME]
    assert name.description["suggested_value"] == "qwen3:8b"
    server.reply_text("Hello.")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {CONF_NAME: "qwen3:8b", CONF_MODEL: "hermes-8b", CONF_TOOL_FORMAT: "auto"},
    )
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    assert result["reason"] == "reconfigure_successful"
    assert entry.subentries[agent.subentry_id].title == "hermes-8b"


async def test_reconfigure_renames_an_agent_and_its_device(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """A name typed in Reconfigure is the subentry's title and its device's name,
    and it no longer follows the model."""
    entry = await async_add_toolbelt(hass, openai_server)
    (agent,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, agent.subentry_id)
    (name,) = [k for k in result["data_schema"].schema if k == CONF_NAME]
    assert name.description["suggested_value"] == "Test agent"
    openai_server.reply_text("Hello.")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {CONF_NAME: "Porch agent", CONF_MODEL: "test-model", CONF_TOOL_FORMAT: "auto"},
    )
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done()  # the entry reloads
    assert entry.subentries[agent.subentry_id].title == "Porch agent"
    entities = er.async_get(hass)
    entity_id = entities.async_get_entity_id("conversation", DOMAIN, agent.subentry_id)
    device = dr.async_get(hass).async_get(entities.async_get(entity_id).device_id)
    assert device.name == "Porch agent"
    assert hass.states.get(entity_id).name == "Porch agent"

    # A typed name stays when the model changes later.
    result = await entry.start_subentry_reconfigure_flow(hass, agent.subentry_id)
    openai_server.reply_text("Hello.")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {CONF_NAME: "Porch agent", CONF_MODEL: "other-model", CONF_TOOL_FORMAT: "auto"},
    )
    await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    assert entry.subentries[agent.subentry_id].title == "Porch agent"


async def test_reconfigure_checks_again_only_when_it_matters(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Caps or instant confirmations alone: saved at once, no request to the
    server, the check's choices kept. "Run the check again" checks anyway."""
    entry = await async_add_toolbelt(
        hass,
        openai_server,
        tool_choice="required_first",
        constraints=["tool_choice"],
    )
    (agent,) = entry.subentries.values()
    stored = dict(agent.data)
    result = await entry.start_subentry_reconfigure_flow(hass, agent.subentry_id)
    sent = len(openai_server.requests)
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            CONF_MODEL: stored[CONF_MODEL],
            CONF_TOOL_FORMAT: stored[CONF_TOOL_FORMAT],
            CONF_LLM_HASS_API: stored[CONF_LLM_HASS_API],
            CONF_MAX_DEVICE_COMMANDS: 5,
            CONF_INSTANT_CONFIRMATIONS: True,
        },
    )
    assert result["reason"] == "reconfigure_successful"
    assert len(openai_server.requests) == sent
    data = entry.subentries[agent.subentry_id].data
    assert data[CONF_MAX_DEVICE_COMMANDS] == 5
    assert data[CONF_INSTANT_CONFIRMATIONS] is True
    assert data[CONF_TOOL_CHOICE] == "required_first"
    assert data[CONF_CONSTRAINTS] == ["tool_choice"]
    await hass.async_block_till_done()

    result = await entry.start_subentry_reconfigure_flow(hass, agent.subentry_id)
    openai_server.reply_text("Hello.")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            CONF_MODEL: stored[CONF_MODEL],
            CONF_TOOL_FORMAT: stored[CONF_TOOL_FORMAT],
            CONF_LLM_HASS_API: stored[CONF_LLM_HASS_API],
            "check_again": True,
        },
    )
    assert result["step_id"] == "check"
    assert result["description_placeholders"]["model"] == stored[CONF_MODEL]
    assert len(openai_server.requests) > sent


async def test_the_agent_check_can_go_back_to_another_model(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    """A "No tool call" verdict is not final: another model on the check's form
    is checked, and the untouched name follows it."""
    server: OpenAIServer = await openai_server_factory(models=["chat-3b", "hermes-8b"])
    entry = await async_add_toolbelt(hass, server)
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "conversation"), context={"source": "user"}
    )
    server.reply_text("Sure, done!")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {CONF_NAME: "chat-3b", CONF_MODEL: "chat-3b", CONF_TOOL_FORMAT: "auto"},
    )
    assert result["description_placeholders"]["model"] == "chat-3b"
    assert result["description_placeholders"]["result"].startswith("No tool call")
    server.reply_tool_calls([{"name": "HassTurnOn", "arguments": {"name": "x"}}])
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_MODEL: "hermes-8b", CONF_TOOL_FORMAT: "auto"}
    )
    assert result["step_id"] == "check"
    assert result["description_placeholders"]["model"] == "hermes-8b"
    assert result["description_placeholders"]["result"].startswith("Native tool calls")
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_MODEL: "hermes-8b", CONF_TOOL_FORMAT: "auto"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    added = next(s for s in entry.subentries.values() if s.title != "Test agent")
    assert added.title == "hermes-8b"
    assert added.data[CONF_MODEL] == "hermes-8b"
    await hass.async_block_till_done()


async def test_tool_call_formats_are_labelled_with_their_model_families(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """auto and native first; every format has a label that names who writes it."""
    entry = await async_add_toolbelt(hass, openai_server)
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    selector = next(
        v for k, v in result["data_schema"].schema.items() if k == CONF_TOOL_FORMAT
    )
    options = selector.config["options"]
    assert options[:2] == ["auto", "native"]
    assert selector.config["translation_key"] == CONF_TOOL_FORMAT
    raw = json.loads((INTEGRATION / "strings.json").read_text(encoding="utf-8"))[
        "selector"
    ][CONF_TOOL_FORMAT]["options"]
    assert set(options) == set(raw)
    # What the frontend shows (ICU quoting undone): tests/test_translations.py.
    labels = {name: icu_message.parse(label).rendered for name, label in raw.items()}
    assert labels["hermes"].startswith("Hermes <tool_call>")
    assert labels["llama3"].startswith('Llama 3 JSON {"name", "parameters"}')
    assert "Qwen 2.5" in labels["hermes"]
    assert all("(" in label for name, label in labels.items() if name != "native")


def test_a_stored_password_never_goes_to_another_host() -> None:
    """Asterisks keep the password only for the same scheme, host and port."""
    stored = "http://anna:pw@10.0.0.5:8080/v1"
    same = url_from_form("http://anna:********@10.0.0.5:8080/v2", stored)
    assert same == "http://anna:pw@10.0.0.5:8080/v2"
    elsewhere = url_from_form("http://anna:********@evil.example:8080/v1", stored)
    assert elsewhere == "http://anna@evil.example:8080/v1"
