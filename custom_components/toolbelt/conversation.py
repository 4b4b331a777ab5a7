"""The Assist agent: one ConversationEntity per agent subentry.

Each turn: HA builds the prompt and tools (``async_provide_llm_data``), the
HA-free tool loop runs, and its events stream into the ChatLog as they happen,
so Assist can hand text to TTS while the model is still writing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import MATCH_ALL
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.helpers import intent, llm
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util.ulid import ulid_now

from .backend.base import CompletionRequest
from .const import (
    DOMAIN,
    LOGGER,
    SUBENTRY_CONVERSATION,
)
from .ha import compat
from .ha.confirmations import async_confirmation
from .ha.entity import OwnTool, ToolbeltLLMEntity, add_subentry_entities
from .ha.entry import ToolbeltConfigEntry, agent_prompt, agent_turn
from .ha.executor import HAExecutor
from .ha.handoff import HANDOFF_TOOL, Handoff
from .ha.history import FailedTurn
from .ha.recognizer import IntentRecognizer, async_load_sentences
from .ha.settings import agent_settings
from .ha.spoken import Phrases, SpokenFailure, async_phrases
from .ha.warmup import WarmUp
from .loop import ResultOut
from .loop.takes_control import InstantConfirmation, TakesControl
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
        if agent_settings(subentry.data).llm_apis:
            self._attr_supported_features = (
                conversation.ConversationEntityFeature.CONTROL
            )

    async def async_added_to_hass(self) -> None:
        """Start the agent's warm-up and keep-alive (warmup.py), where they apply."""
        await super().async_added_to_hass()
        runtime = self.entry.runtime_data
        kind, options = runtime.kind, agent_settings(self.subentry.data)
        prefix = kind.warm_up and options.warm_up
        keep_alive = options.keep_alive if kind.keep_alive_path else None
        if not prefix and keep_alive is None:
            return
        warm_up = WarmUp(
            self.hass,
            self.entry,
            self._async_warm_up_request,
            model=options.model,
            prefix=prefix,
            keep_alive=keep_alive,
        )
        key = self.subentry.subentry_id
        runtime.warm_ups[key] = warm_up
        warm_up.async_start()

        @callback
        def stop() -> None:
            runtime.warm_ups.pop(key, None)
            warm_up.async_stop()

        self.async_on_remove(stop)

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """The model decides which languages it speaks."""
        return MATCH_ALL

    async def async_prepare(self, language: str | None = None) -> None:
        """Load HA's own sentences for the honesty guard before the first turn.

        HA's Assist pipeline calls this before it runs; recognizing a turn's
        words then costs milliseconds, not the seconds of a first load.
        """
        if agent_settings(self.subentry.data).llm_apis:
            await async_load_sentences(self.hass, language or self.hass.config.language)

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """A message that arrives while this conversation's turn runs gets a
        short sentence (HA 2026.11 refuses it with ConversationBusyError)."""
        try:
            return await super().async_process(user_input)
        except compat.BUSY_ERRORS:
            phrases = await async_phrases(self.hass, user_input.language)
            return conversation.ConversationResult(
                response=_spoken_error(user_input, phrases.say("busy")),
                conversation_id=user_input.conversation_id,
            )

    async def _async_handle_message(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> conversation.ConversationResult:
        """Run one turn and answer from the ChatLog.

        A turn that ends in a spoken error keeps that sentence in the ChatLog
        (what the user heard), marked so that later turns show the model a
        failed request, not an answer.
        """
        phrases = await async_phrases(self.hass, user_input.language)
        try:
            # Our tools learn which agent calls them (model, self, prompt lines).
            with agent_turn(self.hass, self.entry, self.subentry):
                await self._async_provide_prompt(user_input, chat_log)
                await self._async_run_turn(user_input, chat_log, phrases)
                async_record_turn(self.hass, user_input, chat_log)
        except conversation.ConverseError as err:
            spoken = err.response.speech.get("plain", {}).get("speech", "")
            chat_log.async_add_assistant_content_without_tools(
                conversation.AssistantContent(
                    agent_id=self.entity_id, content=spoken, native=FailedTurn()
                )
            )
            return err.as_conversation_result()
        return conversation.async_get_result_from_chat_log(user_input, chat_log)

    async def _async_provide_prompt(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> None:
        """HA builds the turn's system prompt and tools from the agent's options."""
        options = agent_settings(self.subentry.data)
        await chat_log.async_provide_llm_data(
            user_input.as_llm_context(DOMAIN),
            await self._usable_apis(user_input, options.llm_apis),
            options.prompt,
            user_input.extra_system_prompt,
        )

    async def _usable_apis(
        self, user_input: conversation.ConversationInput, selected: Any
    ) -> list[str] | None:
        """The agent's LLM APIs this turn may use.

        An administrators-only API (HA 2026.11's "Home Assistant") is left out
        of a turn without an administrator, such as a voice satellite's: HA
        would fail the whole turn for it, and the other APIs still work.
        """
        if not selected:
            return None
        ids = [selected] if isinstance(selected, str) else list(selected)
        admin_only = {
            api.id
            for api in llm.async_get_apis(self.hass)
            if compat.api_requires_admin(api)
        }
        if not admin_only.intersection(ids):
            return ids
        context = user_input.context
        user = (
            await self.hass.auth.async_get_user(context.user_id)
            if context and context.user_id
            else None
        )
        if user is not None and user.is_admin:
            return ids
        LOGGER.debug(
            "%s: %s left out of a turn without an administrator",
            self.subentry.title,
            ", ".join(sorted(admin_only.intersection(ids))),
        )
        return [api for api in ids if api not in admin_only] or None

    async def _confirm(
        self,
        user_input: conversation.ConversationInput,
        outcomes: Sequence[ResultOut],
    ) -> str:
        """HA's own sentence for device commands that worked."""
        return await async_confirmation(self.hass, user_input.language, outcomes)

    def _takes_control(
        self, user_input: conversation.ConversationInput
    ) -> Sequence[TakesControl]:
        """The agent's optional takes-control checks (hand-off needs none)."""
        if not agent_settings(self.subentry.data).instant_confirmations:
            return ()

        async def confirm(outcomes: Sequence[ResultOut]) -> str:
            return await self._confirm(user_input, outcomes)

        return (InstantConfirmation(confirm),)

    def _own_tools(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> list[OwnTool]:
        """The agent's tools outside any LLM API: the hand-off, where it has targets."""
        handoff = Handoff(
            self.hass,
            self.entity_id,
            list(agent_settings(self.subentry.data).handoff_targets),
            user_input,
            chat_log.conversation_id,
        )
        return (
            [(HANDOFF_TOOL, handoff.openai_tool(), handoff)] if handoff.offered else []
        )

    async def _async_warm_up_request(self) -> CompletionRequest | None:
        """The opening request of a conversation without a user or a device.

        Built as a turn builds its own, with an empty user message: the
        system prompt and the tools, nothing anybody said (warmup.py).
        """
        user_input = conversation.ConversationInput(
            text="",
            context=Context(),
            conversation_id=None,
            device_id=None,
            satellite_id=None,
            language=self.hass.config.language,
            agent_id=self.entity_id,
        )
        chat_log = conversation.ChatLog(
            self.hass,
            ulid_now(),
            content=[
                conversation.SystemContent(content=""),
                conversation.UserContent(content=""),
            ],
        )
        with agent_prompt(self.entry, self.subentry):
            try:
                await self._async_provide_prompt(user_input, chat_log)
            except conversation.ConverseError as err:
                LOGGER.debug("%s: no warm-up: %s", self.subentry.title, err)
                return None
            turn = self._turn(
                chat_log, self._own_tools(user_input, chat_log), warm_up=True
            )
        return self._opening_request(turn, silent_answers=compat.CURRENT.silent_answers)

    async def _async_run_turn(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
        phrases: Phrases,
    ) -> None:
        """The turn, built in ``entity.py``; a failure is said as a ConverseError."""

        def recognizer(
            tools: list[dict[str, Any]], executor: HAExecutor
        ) -> IntentRecognizer | None:
            # The honesty guard reads the words as HA would, if the agent has devices.
            if not executor.offers_device_commands():
                return None
            run = agent_settings(self.subentry.data).run_recognized
            return IntentRecognizer(self.hass, user_input, tools, executor, run=run)

        try:
            await self._async_handle_chat_log(
                chat_log,
                phrases,
                own_tools=self._own_tools(user_input, chat_log),
                takes_control=self._takes_control(user_input),
                confirm=lambda outcomes: self._confirm(user_input, outcomes),
                silent_answers=compat.CURRENT.silent_answers,
                recognizer=recognizer,
                # Keyed by the HA context, as our tools key their trace.
                trace_id=user_input.context.id if user_input.context else ulid_now(),
            )
        except SpokenFailure as err:
            raise conversation.ConverseError(
                str(err.__cause__ or err),
                conversation_id=chat_log.conversation_id,
                response=_spoken_error(user_input, str(err)),
            ) from err


def _spoken_error(
    user_input: conversation.ConversationInput, text: str
) -> intent.IntentResponse:
    """An error answer that is one short sentence."""
    response = intent.IntentResponse(language=user_input.language)
    response.async_set_error(intent.IntentResponseErrorCode.UNKNOWN, text)
    return response
