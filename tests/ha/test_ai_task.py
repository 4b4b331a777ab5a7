"""AI Task in real HA: ``ai_task.async_generate_data`` against a real model server.

Text and structured data; a server that honours the JSON schema (one request,
constrained) and one that ignores it (checked, one corrective retry).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from homeassistant import config_entries
from homeassistant.components import ai_task
from homeassistant.config_entries import ConfigSubentry
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er, llm, selector
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.toolbelt.const import (
    CONF_CONSTRAINTS,
    CONF_MODEL,
    CONF_REQUEST_TIMEOUT,
    CONF_TOOL_FORMAT,
    SUBENTRY_AI_TASK,
)
from custom_components.toolbelt.ha import compat
from tests.ha.conftest import async_add_toolbelt
from tests.openai_server import OpenAIServer

LIB = compat.CURRENT.schema_lib
PERSON = LIB.Schema(
    {
        LIB.Required("name"): selector.TextSelector(),
        LIB.Required("age"): selector.NumberSelector(
            selector.NumberSelectorConfig(mode=selector.NumberSelectorMode.BOX)
        ),
    }
)
ADA = '{"name": "Ada", "age": 36}'


async def add_task(
    hass: HomeAssistant,
    server: OpenAIServer,
    *,
    server_kind: str = "llamacpp",
    **options: Any,
) -> tuple[MockConfigEntry, str]:
    """A Toolbelt entry with its agent and one AI task; returns the task entity."""
    entry = await async_add_toolbelt(hass, server, server_kind=server_kind)
    hass.config_entries.async_add_subentry(
        entry,
        ConfigSubentry(
            data={
                CONF_MODEL: "test-model",
                CONF_TOOL_FORMAT: "auto",
                CONF_REQUEST_TIMEOUT: 5,
                **options,
            },
            subentry_type=SUBENTRY_AI_TASK,
            title="Task writer",
            unique_id=None,
        ),
    )
    await hass.async_block_till_done()
    registry = er.async_get(hass)
    (task,) = [
        e.entity_id
        for e in er.async_entries_for_config_entry(registry, entry.entry_id)
        if e.domain == "ai_task"
    ]
    return entry, task


def constrained(body: dict) -> bool:
    return (body.get("response_format") or {}).get("type") == "json_schema"


async def test_text_task(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    assert hass.states.get(task).state == "unknown"
    openai_server.reply_text("Roses are red, the porch light is on.")

    result = await ai_task.async_generate_data(
        hass, task_name="poem", entity_id=task, instructions="Write a short poem."
    )

    assert result.data == "Roses are red, the porch light is on."
    (request,) = openai_server.requests
    assert request.messages[-1] == {"role": "user", "content": "Write a short poem."}
    assert "response_format" not in request.body
    assert hass.states.get(task).state not in ("unknown", "unavailable")


async def test_structure_on_a_server_that_honours_the_schema(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server, constraints=["json_schema"])
    openai_server.reply_when(
        constrained,
        lambda: openai_server.reply_text(ADA),
        lambda: openai_server.reply_text("Ada is 36."),
    )

    result = await ai_task.async_generate_data(
        hass,
        task_name="person",
        entity_id=task,
        instructions="Who wrote the first program?",
        structure=PERSON,
    )

    assert result.data == {"name": "Ada", "age": 36}
    (request,) = openai_server.requests
    schema = request.body["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["name", "age"]
    assert schema["properties"]["age"]["type"] == "number"


async def test_structure_ignored_first_gets_one_corrective_retry(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """The server takes the schema but the model writes prose the first time."""
    _entry, task = await add_task(hass, openai_server, constraints=["json_schema"])
    openai_server.reply_text("It was Ada Lovelace, aged 36.")
    openai_server.reply_text("```json\n" + ADA + "\n```")

    result = await ai_task.async_generate_data(
        hass,
        task_name="person",
        entity_id=task,
        instructions="Who wrote the first program?",
        structure=PERSON,
    )

    assert result.data == {"name": "Ada", "age": 36}
    first, second = openai_server.requests
    assert constrained(first.body)
    assert constrained(second.body)
    assert second.messages[-2] == {
        "role": "assistant",
        "content": "It was Ada Lovelace, aged 36.",
    }
    correction = second.messages[-1]
    assert correction["role"] == "user"
    assert correction["content"].startswith(
        "ERROR: the reply contains no JSON object. Answer with only one JSON object"
    )


async def test_structure_without_the_constraint_is_checked_and_corrected(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    openai_server.reply_text('{"name": "Ada"}')
    openai_server.reply_text(ADA)

    result = await ai_task.async_generate_data(
        hass, task_name="p", entity_id=task, instructions="Who?", structure=PERSON
    )

    assert result.data == {"name": "Ada", "age": 36}
    first, second = openai_server.requests
    assert "response_format" not in first.body
    # The prompt asks for the shape, since nothing enforces it.
    assert '"required": ["name", "age"]' in first.messages[0]["content"]
    assert second.messages[-1]["content"].startswith(
        "ERROR: missing required field: age."
    )


async def test_two_wrong_answers_fail_the_task(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    openai_server.reply_text("Ada.")
    openai_server.reply_text("Still Ada.")

    with pytest.raises(HomeAssistantError, match="did not match the task's structure"):
        await ai_task.async_generate_data(
            hass, task_name="p", entity_id=task, instructions="Who?", structure=PERSON
        )
    assert len(openai_server.requests) == 2


async def test_a_refused_schema_is_dropped_and_the_reply_checked(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server, constraints=["json_schema"])
    openai_server.reply_error(400, message="response_format is not supported")
    openai_server.reply_text(ADA)
    openai_server.reply_text(ADA)

    first = await ai_task.async_generate_data(
        hass, task_name="p", entity_id=task, instructions="Who?", structure=PERSON
    )
    second = await ai_task.async_generate_data(
        hass, task_name="p", entity_id=task, instructions="Who?", structure=PERSON
    )

    assert first.data == second.data == {"name": "Ada", "age": 36}
    refused, retried, later = openai_server.requests
    assert constrained(refused.body)
    assert not constrained(retried.body)
    # Learned: the next task does not send it again.
    assert not constrained(later.body)


async def test_add_an_ai_task_checks_the_schema_constraint(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry = await async_add_toolbelt(hass, openai_server)
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_AI_TASK),
        context={"source": config_entries.SOURCE_USER},
    )
    assert result["step_id"] == "init"
    openai_server.reply_when(
        constrained,
        lambda: openai_server.reply_text(
            '{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}'
        ),
        lambda: openai_server.reply_text("Hello there, how are you?"),
    )

    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {"name": "Summaries", CONF_MODEL: "test-model"}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    task = next(s for s in entry.subentries.values() if s.title == "Summaries")
    assert task.data[CONF_CONSTRAINTS] == ["json_schema"]
    assert hass.states.get("ai_task.summaries").state == "unknown"


class HoldOn(llm.Tool):
    """A task's tool that keeps the task running until the test lets it go."""

    name = "hold_on"
    description = "Wait a moment."
    parameters = LIB.Schema({})
    integration = "toolbelt_tests"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def async_call(
        self, hass: HomeAssistant, tool_input: llm.ToolInput, llm_context: Any
    ) -> Any:
        self.started.set()
        await self.release.wait()
        return compat.make_tool_result({"waited": True})


@dataclass(slots=True, kw_only=True)
class HoldOnAPI(llm.API):
    """An LLM API a task brings, with the one tool above."""

    tool: HoldOn

    async def async_get_api_instance(
        self, llm_context: llm.LLMContext
    ) -> llm.APIInstance:
        return llm.APIInstance(self, "", llm_context, [self.tool])


async def test_an_edit_during_a_task_reloads_only_after_it(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """A model switch while a task runs: the task finishes on its model, then reload."""
    entry, task = await add_task(hass, openai_server)
    subentry = next(s for s in entry.subentries.values() if s.title == "Task writer")
    loaded = entry.runtime_data
    tool = HoldOn()
    api = HoldOnAPI(hass=hass, id="hold_on_api", name="Hold on", tool=tool)
    openai_server.reply_tool_calls([{"name": "hold_on", "arguments": {}}])
    openai_server.reply_text("Finished.")
    running = asyncio.ensure_future(
        ai_task.async_generate_data(
            hass, task_name="t", entity_id=task, instructions="Go.", llm_api=api
        )
    )
    try:
        async with asyncio.timeout(10):
            await tool.started.wait()
        hass.config_entries.async_update_subentry(
            entry, subentry, data={**subentry.data, CONF_MODEL: "other-model"}
        )
        await hass.async_block_till_done()
        # Not reloaded under the running task.
        assert entry.runtime_data is loaded
        assert entry.state is config_entries.ConfigEntryState.LOADED
    finally:
        tool.release.set()
        result = await running
    await hass.async_block_till_done()

    assert result.data == "Finished."
    assert [r.body["model"] for r in openai_server.requests] == ["test-model"] * 2
    # The edit took effect once the task ended.
    assert entry.runtime_data is not loaded
    assert entry.state is config_entries.ConfigEntryState.LOADED
    openai_server.reply_text("Again.")
    again = await ai_task.async_generate_data(
        hass, task_name="t", entity_id=task, instructions="Once more."
    )
    assert again.data == "Again."
    assert openai_server.requests[-1].body["model"] == "other-model"
