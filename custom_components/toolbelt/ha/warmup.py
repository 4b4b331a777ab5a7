"""The warm-up: an agent's fixed prompt waits in its server's cache.

A local server skips the part of a prompt it processed last time (llama.cpp's
prompt cache, vLLM's prefix cache, Ollama's loaded model). Every conversation
of an agent starts with the same system prompt and tools, so Toolbelt sends
them ahead: the first request of the next conversation is then read from the
cache instead of processed token by token.

What is sent is the opening request of a conversation without a user or a
device (a voice satellite without an area, an automation), built by the agent
as a real turn builds it, with an empty user message and one answer token: the
system prompt and the tools, nothing anybody said. It is sent when the agent
is set up or reloaded (a changed model, instructions or tools reload it), when
what the prompt lists may have changed (exposed entities, names, areas), and,
for a server that unloads an idle model (Ollama), each time its idle limit
passes while the user keeps the model loaded. A request that equals the last
one sent is not sent again, unless that idle limit passed.

It never competes with a turn: it waits while any turn of the server's agents
runs, and a turn that starts cancels it (the turn warms the cache itself).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
import json
import time
from typing import TYPE_CHECKING

from homeassistant.components.homeassistant.exposed_entities import (
    async_listen_entity_updates,
)
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import CALLBACK_TYPE, Event, HomeAssistant, callback
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.event import async_call_later
from homeassistant.helpers.start import async_at_started

from ..backend.base import CompletionRequest
from ..backend.errors import BackendError
from ..const import LOGGER

if TYPE_CHECKING:
    from .entry import ToolbeltConfigEntry

# A burst of registry changes (a new device, its entities) sends one warm-up.
WARM_UP_DELAY = 5.0
# The warm-up's own bound: it reads a whole prompt on a cold server.
WARM_UP_TIMEOUT = 300.0
# Ollama's keep_alive meaning "keep the model loaded".
KEEP_LOADED = -1


class WarmUp:
    """Keeps one agent's fixed prompt in its server's cache (see module doc).

    ``build``: the agent's opening request for a conversation without a user,
    None when the agent is not ready; ``prefix``: whether it is sent (the
    agent's option); ``keep_alive``: minutes the server keeps the model loaded
    after a request (-1: always; None: the server decides), where the server
    kind takes it (Ollama).
    """

    def __init__(
        self,
        hass: HomeAssistant,
        entry: ToolbeltConfigEntry,
        build: Callable[[], Awaitable[CompletionRequest | None]],
        *,
        model: str,
        prefix: bool,
        keep_alive: float | None,
    ) -> None:
        """Bind to the agent's entry; nothing is sent before ``async_start``."""
        self._hass = hass
        self._entry = entry
        self._build = build
        self._model = model
        self._prefix = prefix
        kind = entry.runtime_data.kind
        self._keep_alive = keep_alive if kind.keep_alive_path else None
        # A server that unloads an idle model is warmed again each time its
        # idle limit passes, while the user keeps the model loaded.
        self._idle = (
            kind.idle_unload
            if prefix and kind.idle_unload and self._keep_alive == KEEP_LOADED
            else None
        )
        self._sent = ""
        self._task: asyncio.Task[None] | None = None
        self._cancelled = False
        self._unsubs: list[CALLBACK_TYPE] = []
        self._idle_timer: CALLBACK_TYPE | None = None
        self._debouncer = Debouncer(
            hass,
            LOGGER,
            cooldown=WARM_UP_DELAY,
            immediate=False,
            function=self._async_start_task,
        )

    @callback
    def async_start(self) -> None:
        """Warm up once HA has started, and again when the prompt may change."""
        hass = self._hass
        if not self._prefix:
            return
        for event in (
            er.EVENT_ENTITY_REGISTRY_UPDATED,
            dr.EVENT_DEVICE_REGISTRY_UPDATED,
            ar.EVENT_AREA_REGISTRY_UPDATED,
        ):
            self._unsubs.append(hass.bus.async_listen(event, self._async_changed))
        self._unsubs.append(
            async_listen_entity_updates(hass, "conversation", self.async_schedule)
        )
        # Safe to cancel after it fired (a reload later), unlike listen_once.
        self._unsubs.append(async_at_started(hass, self._async_started))
        self._unsubs.append(self._async_listen_stop())

    @callback
    def async_stop(self) -> None:
        """The agent is removed or reloaded: nothing more is sent."""
        while self._unsubs:
            self._unsubs.pop()()
        if self._idle_timer is not None:
            self._idle_timer()
            self._idle_timer = None
        self._debouncer.async_shutdown()
        if self._task is not None:
            self._task.cancel()

    @callback
    def _async_changed(self, _event: Event) -> None:
        self.async_schedule()

    @callback
    def _async_started(self, _hass: HomeAssistant) -> None:
        self.async_schedule()

    @callback
    def _async_listen_stop(self) -> CALLBACK_TYPE:
        """Stop when HA stops (its entities stay, so nothing else stops the
        timers); the returned remover is safe to call after that."""
        unsub: CALLBACK_TYPE | None = None

        @callback
        def stopping(_event: Event) -> None:
            nonlocal unsub
            unsub = None
            self.async_stop()

        @callback
        def cancel() -> None:
            if unsub is not None:
                unsub()

        unsub = self._hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, stopping)
        return cancel

    @callback
    def async_schedule(self) -> None:
        """Warm up after a short quiet time (WARM_UP_DELAY)."""
        self._debouncer.async_schedule_call()

    @callback
    def async_turn_started(self) -> None:
        """A turn on this server starts: a warm-up under way gives way to it."""
        if self._task is not None and not self._task.done():
            self._cancelled = True
            self._task.cancel()

    @callback
    def async_turns_ended(self) -> None:
        """No turn runs any more: a warm-up a turn cancelled is sent again."""
        if self._cancelled:
            self._cancelled = False
            self.async_schedule()

    @callback
    def async_turn_done(self) -> None:
        """This agent's turn ended: its request left the prompt in the cache.

        A server that forgets the keep-alive at each request is told again.
        """
        if self._keep_alive is not None and not self._hass.is_stopping:
            self._entry.async_create_background_task(
                self._hass, self._async_keep_alive(), "toolbelt keep-alive"
            )
        self._async_arm_idle()

    @callback
    def _async_start_task(self) -> None:
        if self._hass.is_stopping:
            return
        if self._task is not None and not self._task.done():
            return
        self._task = self._entry.async_create_background_task(
            self._hass, self._async_warm_up(), "toolbelt warm-up"
        )

    @callback
    def _async_arm_idle(self) -> None:
        """Count the idle limit again from now."""
        if self._idle is None:
            return
        if self._idle_timer is not None:
            self._idle_timer()
        self._idle_timer = async_call_later(
            self._hass, self._idle, self._async_idle_passed
        )

    @callback
    def _async_idle_passed(self, _now: object) -> None:
        self._idle_timer = None
        self._sent = ""  # the server may have unloaded it: send it again
        self.async_schedule()

    async def _async_warm_up(self) -> None:
        runtime = self._entry.runtime_data
        if runtime.active_turns:
            # The running turn keeps the server busy; try when it ends.
            self._cancelled = True
            return
        request = await self._build()
        if request is None:
            return
        wire = json.dumps([request.messages, request.tools], ensure_ascii=False)
        if wire == self._sent:
            return
        request.max_tokens = 1
        request.stream = False
        request.timeout = WARM_UP_TIMEOUT
        started = time.monotonic()
        try:
            async for _delta in runtime.backend.complete(request):
                pass
        except BackendError as err:
            LOGGER.debug("Warm-up on %s failed: %s", runtime.label, err)
            return
        self._sent = wire
        LOGGER.debug(
            "Warm-up on %s took %.1f s", runtime.label, time.monotonic() - started
        )
        if self._keep_alive is not None:
            await self._async_keep_alive()
        self._async_arm_idle()

    async def _async_keep_alive(self) -> None:
        runtime = self._entry.runtime_data
        minutes = self._keep_alive or 0
        seconds = KEEP_LOADED if minutes < 0 else round(minutes * 60)
        try:
            await runtime.backend.keep_alive(self._model, seconds)
        except BackendError as err:
            LOGGER.debug("Keep-alive on %s failed: %s", runtime.label, err)
