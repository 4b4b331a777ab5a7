"""The Assist agent: one ConversationEntity per agent subentry.

Each turn: HA builds the prompt and tools (``async_provide_llm_data``), the
HA-free tool loop runs, and its events stream into the ChatLog as they happen,
so Assist can hand text to TTS while the model is still writing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util.ulid import ulid_now

from . import compat
from .assist_prompt import compact_system_prompt, compact_tool
from .backend.errors import BackendError
from .confirmations import async_confirmation
from .const import (
    CONF_HANDOFF_TARGETS,
    CONF_INSTANT_CONFIRMATIONS,
    CONF_LLM_HASS_API,
    CONF_PROMPT,
    DOMAIN,
    SUBENTRY_CONVERSATION,
)
from .entity import ToolbeltLLMEntity, add_subentry_entities
from .entry import ToolbeltConfigEntry, agent_turn
from .ha_executor import HAExecutor
from .handoff import HANDOFF_TOOL, Handoff
from .history import chat_log_messages
from .loop import ResultOut
from .loop.takes_control import InstantConfirmation, TakesControl
from .toolcalls.prompting import result_text
from .tools.api import async_record_call, drop_redundant_time
from .tools.turn_history import async_record_turn


async def async_setup_entry(
    hass: HomeAssistant,
    entry: ToolbeltConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One agent per conversation subentry."""
    add_subentry_entities(
        entry, async_add_entities, SUBENTRY_CONVERSATION, ToolbeltAgent
    )


class ToolbeltAgent(conversation.ConversationEntity, ToolbeltLLMEntity):
    """A conversation agent backed by one model on the entry's server."""

    _attr_supports_streaming = True

    def __init__(self, entry: ToolbeltConfigEntry, subentry: ConfigSubentry) -> None:
        """The shared device; Assist may control the home when an API is set."""
        super().__init__(entry, subentry)
        if subentry.data.get(CONF_LLM_HASS_API):
            self._attr_supported_features = (
                conversation.ConversationEntityFeature.CONTROL
            )

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """The model decides which languages it speaks."""
        return MATCH_ALL

    async def _async_handle_message(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> conversation.ConversationResult:
        """Run one turn and answer from the ChatLog."""
        options = self.subentry.data
        try:
            # Our tools learn which agent calls them (model, self, prompt lines).
            with agent_turn(self.hass, self.entry, self.subentry):
                await chat_log.async_provide_llm_data(
                    user_input.as_llm_context(DOMAIN),
                    options.get(CONF_LLM_HASS_API),
                    options.get(CONF_PROMPT),
                    user_input.extra_system_prompt,
                )
                await self._async_run_turn(user_input, chat_log)
                async_record_turn(self.hass, user_input, chat_log)
        except conversation.ConverseError as err:
            return err.as_conversation_result()
        return conversation.async_get_result_from_chat_log(user_input, chat_log)

    def _takes_control(
        self, user_input: conversation.ConversationInput
    ) -> Sequence[TakesControl]:
        """The agent's optional takes-control checks (hand-off needs none)."""
        if not self.subentry.data.get(CONF_INSTANT_CONFIRMATIONS, False):
            return ()

        async def confirm(outcomes: Sequence[ResultOut]) -> str:
            return await async_confirmation(self.hass, user_input.language, outcomes)

        return (InstantConfirmation(confirm),)

    async def _async_run_turn(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> None:
        llm_api = chat_log.llm_api
        # Our 'time' tool gives way to Assist's GetDateTime when both are offered.
        tools = (
            [
                compact_tool(compat.tool_to_openai(tool, llm_api.custom_serializer))
                for tool in drop_redundant_time(llm_api.tools)
            ]
            if llm_api
            else []
        )
        handoff = Handoff(
            self.hass,
            self.entity_id,
            list(self.subentry.data.get(CONF_HANDOFF_TARGETS) or ()),
            user_input,
            chat_log.conversation_id,
        )
        if handoff.offered:
            tools.append(handoff.openai_tool())
        executor = HAExecutor(
            llm_api, {HANDOFF_TOOL: handoff} if handoff.offered else {}
        )
        messages = chat_log_messages(chat_log.content)
        if messages and messages[0].get("role") == "system":
            system = compact_system_prompt(messages[0]["content"])
            messages[0] = {**messages[0], "content": system}
        # The turn's trace is keyed by the HA context, as our tools key theirs.
        turn_id = user_input.context.id if user_input.context else ulid_now()

        def traced(event: ResultOut) -> None:
            if not executor.traces_itself(event.call):
                async_record_call(
                    self.hass,
                    turn_id,
                    tool=event.call.name,
                    arguments=event.call.arguments,
                    ok=not event.failed,
                    latency_ms=event.duration * 1000,
                    error=result_text(event.data) if event.failed else None,
                )

        try:
            await self._async_run_loop(
                chat_log,
                executor,
                messages,
                tools,
                takes_control=self._takes_control(user_input),
                on_result=traced,
            )
        except BackendError as err:
            raise _spoken_error(user_input, chat_log, err) from err


def _spoken_error(
    user_input: conversation.ConversationInput,
    chat_log: conversation.ChatLog,
    err: BackendError,
) -> conversation.ConverseError:
    """A short sentence for TTS that names the server; details go to the log."""
    response = intent.IntentResponse(language=user_input.language)
    response.async_set_error(
        intent.IntentResponseErrorCode.UNKNOWN, f"Sorry, {err.server} {err.reason}."
    )
    return conversation.ConverseError(
        str(err), conversation_id=chat_log.conversation_id, response=response
    )
