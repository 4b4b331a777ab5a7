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
from homeassistant.config_entries import ConfigSubentry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import compat
from .backend.errors import BackendAuthError, BackendError
from .backend.servers import get_server_kind
from .const import (
    CONF_CONSTRAINTS,
    CONF_MODEL,
    CONF_SERVER_KIND,
    DOMAIN,
    LOGGER,
    SUBENTRY_AI_TASK,
)
from .conversation import _chat_log_deltas, loop_settings
from .entry import ToolbeltConfigEntry
from .ha_executor import HAExecutor
from .history import chat_log_messages
from .loop import ToolLoop
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
    for subentry in entry.subentries.values():
        if subentry.subentry_type != SUBENTRY_AI_TASK:
            continue
        async_add_entities(
            [ToolbeltTaskEntity(entry, subentry)],
            config_subentry_id=subentry.subentry_id,
        )


class ToolbeltTaskEntity(ai_task.AITaskEntity):
    """Generates text or structured data with one model on the entry's server."""

    _attr_has_entity_name = True
    _attr_name = None
    _attr_supported_features = ai_task.AITaskEntityFeature.GENERATE_DATA

    def __init__(self, entry: ToolbeltConfigEntry, subentry: ConfigSubentry) -> None:
        """Describe the task as a service device named after the subentry."""
        self.entry = entry
        self.subentry = subentry
        self._attr_unique_id = subentry.subentry_id
        self._attr_device_info = dr.DeviceInfo(
            identifiers={(DOMAIN, subentry.subentry_id)},
            name=subentry.title,
            manufacturer=get_server_kind(entry.data.get(CONF_SERVER_KIND, "")).name,
            model=subentry.data.get(CONF_MODEL),
            entry_type=dr.DeviceEntryType.SERVICE,
        )

    @property
    def _state(self) -> dict[str, Any]:
        """What this task learned about its server since the entry loaded."""
        return self.entry.runtime_data.agent_state.setdefault(
            self.subentry.subentry_id, {"warned": set()}
        )

    def _warn_once(self, message: str) -> None:
        warned: set[str] = self._state["warned"]
        if message not in warned:
            warned.add(message)
            LOGGER.warning("%s: %s", self.subentry.title, message)

    def _tool_role_rejected(self) -> None:
        self._state["tool_role"] = False

    def _constraint_rejected(self, kind: str) -> None:
        self._state.setdefault("refused", set()).add(kind)

    async def _async_generate_data(
        self, task: ai_task.GenDataTask, chat_log: conversation.ChatLog
    ) -> ai_task.GenDataTaskResult:
        """Text, or data of the task's structure (one corrective retry)."""
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
        refused = JSON_SCHEMA in self._state.get("refused", ())
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
        runtime = self.entry.runtime_data
        kind = get_server_kind(self.entry.data.get(CONF_SERVER_KIND, ""))
        # Tool-choice constraints belong to agents; a task constrains its answer.
        settings = loop_settings(
            {**self.subentry.data, CONF_CONSTRAINTS: []},
            tool_role=self._state.get("tool_role", kind.tool_role),
            named_tool_choice=kind.named_tool_choice,
        )
        loop = ToolLoop(
            runtime.backend,
            HAExecutor(chat_log.llm_api),
            settings,
            on_tool_role_rejected=self._tool_role_rejected,
            on_constraint_rejected=self._constraint_rejected,
            warn_once=self._warn_once,
        )
        messages = _with_instructions(chat_log_messages(chat_log.content), instructions)
        events = loop.run(messages, tools, answer_format=response_format)
        try:
            async for _content in chat_log.async_add_delta_content_stream(
                self.entity_id, _chat_log_deltas(events, lambda _result: None)
            ):
                pass
        except BackendError as err:
            if isinstance(err, BackendAuthError):
                self.entry.async_start_reauth(self.hass)
            LOGGER.error("%s on %s: %s", self.subentry.title, runtime.label, err)
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
