"""The Assist agent: one ConversationEntity per agent subentry.

Each turn: HA builds the prompt and tools (``async_provide_llm_data``), the
HA-free tool loop runs, and its events stream into the ChatLog as they happen,
so Assist can hand text to TTS while the model is still writing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, intent, llm
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util.ulid import ulid_now

from . import compat
from .assist_prompt import compact_system_prompt, compact_tool
from .backend.errors import BackendAuthError, BackendError
from .backend.servers import get_server_kind
from .confirmations import async_confirmation
from .const import (
    CONF_CONSTRAINTS,
    CONF_HANDOFF_TARGETS,
    CONF_INSTANT_CONFIRMATIONS,
    CONF_LLM_HASS_API,
    CONF_MAX_DEVICE_COMMANDS,
    CONF_MAX_TOKENS,
    CONF_MAX_TOOL_CALLS,
    CONF_MODEL,
    CONF_PROMPT,
    CONF_REQUEST_TIMEOUT,
    CONF_SERVER_KIND,
    CONF_STRICT_CALLS,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    CONF_TOOL_FORMAT,
    DEFAULT_MAX_TOKENS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOOL_CHOICE,
    DEFAULT_TOOL_FORMAT,
    DOMAIN,
    LOGGER,
    MAX_DEVICE_COMMANDS_PER_TURN,
    MAX_TOOL_CALLS_PER_TURN,
    SUBENTRY_CONVERSATION,
)
from .entry import ToolbeltConfigEntry, agent_turn
from .ha_executor import HAExecutor
from .handoff import HANDOFF_TOOL, Handoff
from .history import chat_log_messages, recorded_result
from .loop import (
    CallsOut,
    ControlOut,
    HopStart,
    LoopEvent,
    LoopSettings,
    ReasoningOut,
    ResultOut,
    TextOut,
    ToolLoop,
)
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
    for subentry in entry.subentries.values():
        if subentry.subentry_type != SUBENTRY_CONVERSATION:
            continue
        async_add_entities(
            [ToolbeltAgent(entry, subentry)], config_subentry_id=subentry.subentry_id
        )


def loop_settings(
    options: dict[str, Any],
    *,
    tool_role: bool,
    refused: set[str] | frozenset[str] = frozenset(),
    named_tool_choice: bool = True,
) -> LoopSettings:
    """An agent's subentry options as loop settings (the UI stores floats).

    ``refused``: constraint kinds the server rejected since the entry loaded.
    """
    return LoopSettings(
        model=options.get(CONF_MODEL, ""),
        tool_format=options.get(CONF_TOOL_FORMAT, DEFAULT_TOOL_FORMAT),
        temperature=float(options.get(CONF_TEMPERATURE, DEFAULT_TEMPERATURE)),
        max_tokens=int(options.get(CONF_MAX_TOKENS, DEFAULT_MAX_TOKENS)),
        timeout=float(options.get(CONF_REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT)),
        max_tool_calls=int(options.get(CONF_MAX_TOOL_CALLS, MAX_TOOL_CALLS_PER_TURN)),
        max_device_commands=int(
            options.get(CONF_MAX_DEVICE_COMMANDS, MAX_DEVICE_COMMANDS_PER_TURN)
        ),
        tool_role=tool_role,
        tool_choice=str(options.get(CONF_TOOL_CHOICE) or DEFAULT_TOOL_CHOICE).strip(),
        strict_calls=bool(options.get(CONF_STRICT_CALLS, False)),
        constraints=tuple(
            kind for kind in options.get(CONF_CONSTRAINTS) or () if kind not in refused
        ),
        named_tool_choice=named_tool_choice,
    )


class ToolbeltAgent(conversation.ConversationEntity):
    """A conversation agent backed by one model on the entry's server."""

    _attr_has_entity_name = True
    _attr_name = None
    _attr_supports_streaming = True

    def __init__(self, entry: ToolbeltConfigEntry, subentry: ConfigSubentry) -> None:
        """Describe the agent as a service device named after the subentry."""
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
        if subentry.data.get(CONF_LLM_HASS_API):
            self._attr_supported_features = (
                conversation.ConversationEntityFeature.CONTROL
            )

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """The model decides which languages it speaks."""
        return MATCH_ALL

    @property
    def _state(self) -> dict[str, Any]:
        """Facts this agent learned about its server since the entry loaded."""
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
        runtime = self.entry.runtime_data
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
        kind = get_server_kind(self.entry.data.get(CONF_SERVER_KIND, ""))
        settings = loop_settings(
            dict(self.subentry.data),
            tool_role=self._state.get("tool_role", kind.tool_role),
            refused=self._state.get("refused", frozenset()),
            named_tool_choice=kind.named_tool_choice,
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
        loop = ToolLoop(
            runtime.backend,
            executor,
            settings,
            on_tool_role_rejected=self._tool_role_rejected,
            on_constraint_rejected=self._constraint_rejected,
            warn_once=self._warn_once,
            takes_control=self._takes_control(user_input),
        )
        messages = chat_log_messages(chat_log.content)
        if messages and messages[0].get("role") == "system":
            system = compact_system_prompt(messages[0]["content"])
            messages[0] = {**messages[0], "content": system}
        events = loop.run(messages, tools)
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
            async for _content in chat_log.async_add_delta_content_stream(
                self.entity_id, _chat_log_deltas(events, traced)
            ):
                pass
        except BackendError as err:
            if isinstance(err, BackendAuthError):
                self.entry.async_start_reauth(self.hass)
            LOGGER.error(
                "%s on %s: %s", self.subentry.title, self.entry.runtime_data.label, err
            )
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


async def _chat_log_deltas(
    events: AsyncIterator[LoopEvent], on_result: Callable[[ResultOut], None]
) -> AsyncIterator[dict[str, Any]]:
    """Loop events as ChatLog deltas; tool calls are external (the loop ran them).

    Each result is also handed to ``on_result`` (the diagnostics trace).
    """
    async for event in events:
        if isinstance(event, TextOut):
            yield {"content": event.text}
        elif isinstance(event, ReasoningOut):
            yield {"thinking_content": event.text}
        elif isinstance(event, HopStart):
            yield {"role": "assistant"}
        elif isinstance(event, ControlOut):
            # The round's own answer: a new assistant message, spoken and kept.
            yield {"role": "assistant"}
            yield {"content": event.text}
        elif isinstance(event, CallsOut):
            # ``native`` keeps the reply as later requests repeat it.
            yield {
                "native": event,
                "tool_calls": [
                    llm.ToolInput(
                        tool_name=call.name,
                        tool_args=call.arguments,
                        id=call.id,
                        external=True,
                    )
                    for call in event.calls
                ],
            }
        elif isinstance(event, ResultOut):
            on_result(event)
            yield compat.tool_result_delta(
                event.call.id,
                event.call.name,
                recorded_result(event),
                failed=event.failed,
            )
