"""Setup and unload of a Toolbelt config entry (one model server)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field

from homeassistant.config_entries import ConfigEntry, ConfigSubentry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryAuthFailed, ConfigEntryNotReady

from ..backend.errors import BackendAuthError, BackendError
from ..backend.openai_compat import OpenAICompatBackend
from ..backend.servers import ServerKind
from ..const import CONNECT_TIMEOUT, LOGGER
from ..loop.agent_state import AgentState
from ..tools.agents import AgentRef, calling_agent_turn
from ..tools.api import async_setup_tools_api
from .client import async_create_backend
from .server_names import address
from .settings import server_settings
from .warmup import WarmUp

PLATFORMS = [Platform.AI_TASK, Platform.CONVERSATION]


@dataclass
class ToolbeltRuntime:
    """What a loaded entry holds: its backend and what each agent learned."""

    backend: OpenAICompatBackend
    label: str
    models: list[str] = field(default_factory=list)
    # Per subentry (e.g. "this server rejects the tool role"): a reload starts
    # clean, but turns don't rediscover it.
    agents: dict[str, AgentState] = field(default_factory=dict)
    # A reload asked for during a turn or an AI task (the model tool saved a new
    # model, a subentry was edited) waits until none is running, so none loses
    # its agent or database midway (``entry_in_use``).
    active_turns: int = 0
    reload_pending: bool = False
    # Each agent's warm-up, by subentry (warmup.py): it gives way to any turn.
    warm_ups: dict[str, WarmUp] = field(default_factory=dict)

    @property
    def kind(self) -> ServerKind:
        """The server's kind, as the backend carries it."""
        return self.backend.kind

    def agent_state(self, subentry: ConfigSubentry) -> AgentState:
        """The subentry's learned state; it starts from the server kind's defaults."""
        state = self.agents.get(subentry.subentry_id)
        if state is None:
            state = self.agents[subentry.subentry_id] = AgentState(
                name=subentry.title, tool_role=self.kind.tool_role
            )
        return state


type ToolbeltConfigEntry = ConfigEntry[ToolbeltRuntime]


async def async_setup_entry(hass: HomeAssistant, entry: ToolbeltConfigEntry) -> bool:
    """Check the server answers, then start one agent per subentry."""
    backend = await async_create_backend(hass, entry.data)
    # Logs name the entry and its address (never credentials); speech only the kind.
    label = f"{entry.title} ({address(server_settings(entry.data).base_url)})"
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            models = await backend.list_models()
    except BackendAuthError as err:
        raise ConfigEntryAuthFailed(f"{label} rejected the API key") from err
    except (BackendError, TimeoutError) as err:
        raise ConfigEntryNotReady(f"{label} is not reachable: {err}") from err

    entry.runtime_data = ToolbeltRuntime(
        backend=backend,
        label=label,
        models=models,
    )
    entry.async_on_unload(await async_setup_tools_api(hass, entry))
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    entry.async_on_unload(entry.add_update_listener(_async_update_listener))
    LOGGER.debug("%s is up with %d models", label, len(models))
    return True


async def async_unload_entry(hass: HomeAssistant, entry: ToolbeltConfigEntry) -> bool:
    """Stop the agents; the SDK client goes with the runtime data."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)


async def _async_update_listener(
    hass: HomeAssistant, entry: ToolbeltConfigEntry
) -> None:
    """Subentry or connection changes take effect through a reload, after any turn."""
    runtime = entry.runtime_data
    if runtime.active_turns:
        runtime.reload_pending = True
        return
    await hass.config_entries.async_reload(entry.entry_id)


@contextmanager
def entry_in_use(hass: HomeAssistant, entry: ToolbeltConfigEntry) -> Iterator[None]:
    """A turn or task runs on this entry: a reload asked for meanwhile waits for it."""
    runtime = entry.runtime_data
    runtime.active_turns += 1
    for warm_up in runtime.warm_ups.values():
        warm_up.async_turn_started()
    try:
        yield
    finally:
        runtime.active_turns -= 1
        if not runtime.active_turns and runtime.reload_pending:
            runtime.reload_pending = False
            hass.config_entries.async_schedule_reload(entry.entry_id)
        elif not runtime.active_turns:
            for warm_up in runtime.warm_ups.values():
                warm_up.async_turns_ended()


@contextmanager
def agent_turn(
    hass: HomeAssistant, entry: ToolbeltConfigEntry, subentry: ConfigSubentry
) -> Iterator[None]:
    """One turn of an agent: our tools know the agent, and reloads wait for it.

    The turn's requests leave the agent's prompt in the server's cache: its
    warm-up counts from the turn's end.
    """
    runtime = entry.runtime_data  # a reload after the turn replaces it
    try:
        with entry_in_use(hass, entry), agent_prompt(entry, subentry):
            yield
    finally:  # a failed turn reached the server too (Ollama's keep-alive)
        if warm_up := runtime.warm_ups.get(subentry.subentry_id):
            warm_up.async_turn_done()


def agent_prompt(
    entry: ToolbeltConfigEntry, subentry: ConfigSubentry
) -> AbstractContextManager[None]:
    """While an agent's prompt is built: our tools know the agent."""
    return calling_agent_turn(
        AgentRef(entry.entry_id, subentry.subentry_id, subentry.title)
    )
