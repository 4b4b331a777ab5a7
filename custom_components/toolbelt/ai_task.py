"""AI Task: one ``ai_task`` entity per ``ai_task_data`` subentry.

A task runs through the same tool loop as a conversation turn (native or text
tool calls, the task's own LLM API if it brings one). A task with a
``structure`` must return data of that shape: when the server honoured a JSON
schema at setup (and the task calls no tools) the reply is constrained to it;
otherwise the reply is checked against the schema and, if it does not fit,
the model gets one corrective message and one more try.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components import ai_task, conversation
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import compat
from .backend.errors import BackendError
from .const import CONF_CONSTRAINTS, LOGGER, SUBENTRY_AI_TASK
from .entity import ToolbeltLLMEntity, add_subentry_entities
from .entry import ToolbeltConfigEntry, entry_in_use
from .ha_executor import HAExecutor
from .history import chat_log_messages
from .loop.structured import (
    StructureError,
    answer_format,
    corrective_message,
    format_instructions,
    read_structured,
)
from .loop.transcript import History

JSON_SCHEMA = "json_schema"


async def async_setup_entry(
    hass: HomeAssistant,
    entry: ToolbeltConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One AI Task entity per ai_task_data subentry."""
    add_subentry_entities(
        entry, async_add_entities, SUBENTRY_AI_TASK, ToolbeltTaskEntity
    )


class ToolbeltTaskEntity(ai_task.AITaskEntity, ToolbeltLLMEntity):
    """Generates text or structured data with one model on the entry's server."""

    _attr_supported_features = ai_task.AITaskEntityFeature.GENERATE_DATA

    async def _async_generate_data(
        self, task: ai_task.GenDataTask, chat_log: conversation.ChatLog
    ) -> ai_task.GenDataTaskResult:
        """Text, or data of the task's structure (one corrective retry).

        A reload asked for meanwhile (a subentry edited, a model switched)
        waits until the task ends, as it waits for a conversation turn. A task
        is no agent: tools that act on "this agent" do not take it for one.
        """
        with entry_in_use(self.hass, self.entry):
            return await self._async_generate(task, chat_log)

    async def _async_generate(
        self, task: ai_task.GenDataTask, chat_log: conversation.ChatLog
    ) -> ai_task.GenDataTaskResult:
        llm_api = chat_log.llm_api
        tools = (
            [compat.tool_to_openai(t, llm_api.custom_serializer) for t in llm_api.tools]
            if llm_api
            else []
        )
        if not task.structure:
            await self._async_run(chat_log, tools)
            return ai_task.GenDataTaskResult(
                conversation_id=chat_log.conversation_id, data=_answer(chat_log)
            )
        schema = compat.structure_schema(
            task.structure, llm_api.custom_serializer if llm_api else None
        )
        honoured = JSON_SCHEMA in (self.subentry.data.get(CONF_CONSTRAINTS) or ())
        refused = JSON_SCHEMA in self.agent_state.refused
        # A schema on every request would keep the model from calling tools.
        constrained = honoured and not refused and not tools
        for attempt in (1, 2):
            await self._async_run(
                chat_log,
                tools,
                instructions=format_instructions(schema),
                response_format=answer_format(schema) if constrained else None,
            )
            try:
                data = read_structured(_answer(chat_log), schema)
            except StructureError as err:
                LOGGER.debug("%s: reply %d not structured: %s", self.name, attempt, err)
                if attempt == 2:
                    raise HomeAssistantError(
                        f"The model's answer did not match the task's structure: {err}"
                    ) from err
                chat_log.async_add_user_content(
                    conversation.UserContent(corrective_message(err, schema))
                )
                continue
            return ai_task.GenDataTaskResult(
                conversation_id=chat_log.conversation_id, data=data
            )
        raise AssertionError("unreachable")  # pragma: no cover

    async def _async_run(
        self,
        chat_log: conversation.ChatLog,
        tools: list[dict[str, Any]],
        *,
        instructions: str = "",
        response_format: dict[str, Any] | None = None,
    ) -> None:
        """One loop run over the chat log; its answer lands in the chat log."""
        messages = _with_instructions(chat_log_messages(chat_log.content), instructions)
        try:
            await self._async_run_loop(
                chat_log,
                HAExecutor(chat_log.llm_api),
                messages,
                tools,
                # Tool-choice constraints belong to agents; a task constrains
                # its answer.
                options={**self.subentry.data, CONF_CONSTRAINTS: []},
                answer_format=response_format,
            )
        except BackendError as err:
            raise HomeAssistantError(f"Sorry, {err.server} {err.reason}.") from err


def _with_instructions(history: History, instructions: str) -> History:
    """The system prompt with the answer's format added (not kept in the log)."""
    if not instructions:
        return history
    first = history[0] if history else None
    if isinstance(first, dict) and first.get("role") == "system":
        system = {**first, "content": f"{first['content']}\n\n{instructions}"}
        return [system, *history[1:]]
    return [{"role": "system", "content": instructions}, *history]


def _answer(chat_log: conversation.ChatLog) -> str:
    """The last assistant message: the task's answer."""
    last = chat_log.content[-1]
    if not isinstance(last, conversation.AssistantContent):
        raise HomeAssistantError("The model gave no answer")
    return last.content or ""
