"""What an Assist agent and an AI Task share: one loop run streamed into a ChatLog.

Both entities are a subentry of one server: the same device, the same learned
state (``AgentState``), the same settings, and the same way a turn's loop
events become ChatLog deltas. HA core's own LLM integrations keep this in an
``entity.py`` too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.helpers import device_registry as dr, llm
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import compat
from .backend.base import CompletionRequest
from .backend.errors import BackendAuthError, BackendError
from .const import DOMAIN, LOGGER
from .entry import ToolbeltConfigEntry
from .ha_tools import device_guidance
from .history import recorded_result
from .loop import (
    AgentState,
    CallsOut,
    ControlOut,
    Executor,
    HopStart,
    LoopEvent,
    Phrasebook,
    ReasoningOut,
    ResultOut,
    TextOut,
    ToolLoop,
)
from .loop.honesty import CommandRecognizer
from .loop.phrasebook import ENGLISH
from .loop.takes_control import TakesControl
from .loop.transcript import History
from .server_names import kind_label
from .settings import agent_settings, loop_settings


def add_subentry_entities(
    entry: ToolbeltConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
    subentry_type: str,
    entity_cls: Callable[[ToolbeltConfigEntry, ConfigSubentry], Entity],
) -> None:
    """One entity per subentry of a platform's type, each tied to its subentry."""
    for subentry in entry.subentries.values():
        if subentry.subentry_type == subentry_type:
            async_add_entities(
                [entity_cls(entry, subentry)], config_subentry_id=subentry.subentry_id
            )


class ToolbeltLLMEntity(Entity):
    """A subentry's entity that runs turns through the loop on the entry's server."""

    _attr_has_entity_name = True
    _attr_name = None

    def __init__(self, entry: ToolbeltConfigEntry, subentry: ConfigSubentry) -> None:
        """Describe the entity as a service device named after the subentry."""
        self.entry = entry
        self.subentry = subentry
        self._attr_unique_id = subentry.subentry_id
        self._attr_device_info = dr.DeviceInfo(
            identifiers={(DOMAIN, subentry.subentry_id)},
            name=subentry.title,
            manufacturer=kind_label(entry.runtime_data.kind),
            model=agent_settings(subentry.data).model or None,
            entry_type=dr.DeviceEntryType.SERVICE,
        )

    @property
    def agent_state(self) -> AgentState:
        """What this entity learned about its server since the entry loaded."""
        return self.entry.runtime_data.agent_state(self.subentry)

    async def _async_run_loop(
        self,
        chat_log: conversation.ChatLog,
        executor: Executor,
        messages: History,
        tools: list[dict[str, Any]],
        *,
        options: Mapping[str, Any] | None = None,
        takes_control: Sequence[TakesControl] = (),
        confirm: Callable[[Sequence[ResultOut]], Awaitable[str | None]] | None = None,
        silent_answers: bool = False,
        phrases: Phrasebook = ENGLISH,
        answer_format: dict[str, Any] | None = None,
        on_result: Callable[[ResultOut], None] | None = None,
        recognizer: CommandRecognizer | None = None,
    ) -> None:
        """Run the loop; its events land in the ChatLog as they happen.

        A backend failure is logged (and an auth failure starts re-auth), then
        raised for the caller to say in its own way.
        """
        loop = self._tool_loop(
            executor,
            options=options,
            takes_control=takes_control,
            confirm=confirm,
            silent_answers=silent_answers,
            phrases=phrases,
            recognizer=recognizer,
        )
        events = loop.run(
            messages, tools, guidance=_guidance(tools), answer_format=answer_format
        )
        try:
            async for _content in chat_log.async_add_delta_content_stream(
                self.entity_id, chat_log_deltas(events, on_result)
            ):
                pass
        except BackendError as err:
            self._backend_failed(err)
            raise

    def _opening_request(
        self,
        executor: Executor,
        messages: History,
        tools: list[dict[str, Any]],
        *,
        silent_answers: bool = False,
    ) -> CompletionRequest:
        """The first request a turn on these messages and tools sends."""
        loop = self._tool_loop(executor, silent_answers=silent_answers)
        return loop.opening_request(messages, tools, guidance=_guidance(tools))

    def _tool_loop(
        self,
        executor: Executor,
        *,
        options: Mapping[str, Any] | None = None,
        takes_control: Sequence[TakesControl] = (),
        confirm: Callable[[Sequence[ResultOut]], Awaitable[str | None]] | None = None,
        silent_answers: bool = False,
        phrases: Phrasebook = ENGLISH,
        recognizer: CommandRecognizer | None = None,
    ) -> ToolLoop:
        """The loop for one turn of this entity, on the entry's server."""
        runtime = self.entry.runtime_data
        return ToolLoop(
            runtime.backend,
            executor,
            loop_settings(
                self.subentry.data if options is None else options,
                runtime.kind,
                silent_answers=silent_answers,
                phrases=phrases,
            ),
            state=self.agent_state,
            takes_control=takes_control,
            confirm=confirm,
            recognizer=recognizer,
        )

    def _backend_failed(self, err: BackendError) -> None:
        """Log a backend failure with the server's address; a 401 starts re-auth."""
        if isinstance(err, BackendAuthError):
            self.entry.async_start_reauth(self.hass)
        LOGGER.error(
            "%s on %s: %s", self.subentry.title, self.entry.runtime_data.label, err
        )


def _guidance(tools: list[dict[str, Any]]) -> str:
    """HA's device rules for the tools a turn offers."""
    return device_guidance(t["function"]["name"] for t in tools)


async def chat_log_deltas(
    events: AsyncIterator[LoopEvent],
    on_result: Callable[[ResultOut], None] | None = None,
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
            if on_result is not None:
                on_result(event)
            yield compat.tool_result_delta(
                event.call.id,
                event.call.name,
                recorded_result(event),
                failed=event.failed,
            )
