"""What an Assist agent and an AI Task share: one turn, built here, streamed into a ChatLog.

Both entities are a subentry of one server: the same device, the same learned
state (``AgentState``), the same settings, and the same turn builder
(``_async_handle_chat_log``, as HA core's own LLM integrations have in their
``entity.py``): the tools shaped once, the prompt edited once, the executor,
the trace, the loop's events as ChatLog deltas, and a server failure as one
sentence from strings.json's "exceptions" in the turn's language.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from ..backend.base import CompletionRequest
from ..backend.errors import BackendAuthError, BackendError
from ..backend.status import refuses_images
from ..const import (
    DOMAIN,
    LOGGER,
)
from ..loop import (
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
from ..loop.honesty import CommandRecognizer
from ..loop.phrasebook import ENGLISH
from ..loop.takes_control import TakesControl
from ..loop.transcript import History
from ..tools.api import async_record_call
from . import compat
from .attachments import ImageParts
from .entry import ToolbeltConfigEntry
from .executor import HAExecutor, tool_input
from .history import recorded_result
from .intent_tools import device_guidance, is_intent_tool_name
from .large_home import ConversationHomes
from .server_names import kind_label
from .settings import agent_settings, loop_settings
from .spoken import Phrases
from .turn_prompt import turn_prompt

# A tool of the agent's own, outside any LLM API: its name, schema and runner.
type OwnTool = tuple[str, dict[str, Any], Executor]
# The honesty guard for a turn's tools, or None where it has no devices.
type RecognizerFor = Callable[
    [list[dict[str, Any]], HAExecutor], CommandRecognizer | None
]


@dataclass(slots=True)
class Turn:
    """What one loop run starts from: its messages, its tools and their runner."""

    messages: History
    tools: list[dict[str, Any]]
    executor: HAExecutor


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
        self._homes = ConversationHomes()

    @property
    def agent_state(self) -> AgentState:
        """What this entity learned about its server since the entry loaded."""
        return self.entry.runtime_data.agent_state(self.subentry)

    async def _async_handle_chat_log(
        self,
        chat_log: conversation.ChatLog,
        phrases: Phrases,
        *,
        own_tools: Sequence[OwnTool] = (),
        images: ImageParts | None = None,
        instructions: str = "",
        answer_format: dict[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        takes_control: Sequence[TakesControl] = (),
        confirm: Callable[[Sequence[ResultOut]], Awaitable[str | None]] | None = None,
        silent_answers: bool = False,
        recognizer: RecognizerFor | None = None,
        trace_id: str | None = None,
    ) -> None:
        """Run one turn on the ChatLog; its events land there as they happen.

        The one place a turn is built, for an agent and a task alike: the
        tools and the prompt (``_turn``), the loop, the diagnostics trace
        (``trace_id``), and what a server failure says: a ``SpokenFailure``
        in ``phrases``' language, after it is logged (a 401 starts re-auth).

        ``own_tools``: the agent's tools outside any LLM API (hand-off);
        ``images`` and ``instructions``: a task's attachments and its
        answer's format; ``recognizer``: the honesty guard for these tools.
        """
        turn = self._turn(chat_log, own_tools, images=images, instructions=instructions)
        on_result = self._tracer(trace_id, turn.executor) if trace_id else None
        loop = self._tool_loop(
            turn.executor,
            options=options,
            takes_control=takes_control,
            confirm=confirm,
            silent_answers=silent_answers,
            phrases=phrases.phrasebook(),
            recognizer=recognizer(turn.tools, turn.executor) if recognizer else None,
        )
        events = loop.run(
            turn.messages,
            turn.tools,
            guidance=_guidance(turn.tools),
            answer_format=answer_format,
        )
        try:
            async for _content in chat_log.async_add_delta_content_stream(
                self.entity_id, chat_log_deltas(events, on_result)
            ):
                pass
        except BackendError as err:
            self._backend_failed(err)
            raise self._spoken_failure(err, phrases, images) from err

    def _turn(
        self,
        chat_log: conversation.ChatLog,
        own_tools: Sequence[OwnTool] = (),
        *,
        images: ImageParts | None = None,
        instructions: str = "",
        warm_up: bool = False,
    ) -> Turn:
        """The tools, shaped once, the messages, and the executor for them.

        The tools and the prompt depend on the devices the conversation's
        assistant sees (read once per conversation) and the large-home mode.
        A warm-up's devices are read and not kept: it is no conversation, and
        must not push one out of those remembered.
        """
        llm_api = chat_log.llm_api
        # Only HA's intent tools and device list depend on the home: a turn
        # without them (an AI task with only our tools) reads no exposures.
        devices = (
            self._homes.devices(
                self.hass,
                chat_log.conversation_id,
                llm_api.llm_context.assistant,
                keep=not warm_up,
            )
            if llm_api and any(is_intent_tool_name(tool.name) for tool in llm_api.tools)
            else []
        )
        prompt = turn_prompt(
            self.hass,
            chat_log,
            agent_settings(self.subentry.data).large_home,
            devices,
            own_tools,
            images=images,
            instructions=instructions,
        )
        return Turn(prompt.messages, prompt.tools, HAExecutor(llm_api, prompt.own))

    def _opening_request(
        self, turn: Turn, *, silent_answers: bool = False
    ) -> CompletionRequest:
        """The first request a turn on these messages and tools sends."""
        loop = self._tool_loop(turn.executor, silent_answers=silent_answers)
        return loop.opening_request(
            turn.messages, turn.tools, guidance=_guidance(turn.tools)
        )

    def _tracer(
        self, turn_id: str, executor: HAExecutor
    ) -> Callable[[ResultOut], None]:
        """Records each result in the diagnostics trace, keyed by ``turn_id``.

        Our own tools write their own entries; an error is the text the
        model read for it.
        """

        def traced(event: ResultOut) -> None:
            if not executor.traces_itself(event.call):
                async_record_call(
                    self.hass,
                    turn_id,
                    tool=event.call.name,
                    arguments=event.call.arguments,
                    ok=not event.failed,
                    latency_ms=event.duration * 1000,
                    error=event.text if event.failed else None,
                )

        return traced

    def _spoken_failure(
        self, err: BackendError, phrases: Phrases, images: ImageParts | None = None
    ) -> HomeAssistantError:
        """What the user hears of a server failure: one sentence, its kind and why.

        A server that refused a task's images says so, with the model's name.
        """
        if images and refuses_images(err.server_message):
            return phrases.failure(
                "images_refused",
                self.entry.runtime_data.kind.key,
                spoken=False,
                model=agent_settings(self.subentry.data).model,
            )
        return phrases.server_failure(err, self.entry.runtime_data.kind.key)

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
                "tool_calls": [tool_input(call, external=True) for call in event.calls],
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
