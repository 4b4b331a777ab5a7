"""Setup and unload of a Toolbelt config entry (one model server)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryAuthFailed, ConfigEntryNotReady

from .backend.errors import BackendAuthError, BackendError
from .backend.openai_compat import OpenAICompatBackend
from .client import async_create_backend
from .const import CONF_BASE_URL, CONNECT_TIMEOUT, LOGGER
from .server_names import address
from .tools.api import async_setup_tools_api

PLATFORMS = [Platform.AI_TASK, Platform.CONVERSATION]


@dataclass
class ToolbeltRuntime:
    """What a loaded entry holds: its backend and the agents' shared state."""

    backend: OpenAICompatBackend
    label: str
    models: list[str] = field(default_factory=list)
    # Agents remember per-agent facts here (e.g. "this server rejects the tool
    # role") so a reload starts clean but turns don't rediscover them.
    agent_state: dict[str, Any] = field(default_factory=dict)


type ToolbeltConfigEntry = ConfigEntry[ToolbeltRuntime]


async def async_setup_entry(hass: HomeAssistant, entry: ToolbeltConfigEntry) -> bool:
    """Check the server answers, then start one agent per subentry."""
    backend = await async_create_backend(hass, entry.data)
    # Logs name the entry and its address (never credentials); speech only the kind.
    label = f"{entry.title} ({address(entry.data[CONF_BASE_URL])})"
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            models = await backend.list_models()
    except BackendAuthError as err:
        raise ConfigEntryAuthFailed(f"{label} rejected the API key") from err
    except (BackendError, TimeoutError) as err:
        raise ConfigEntryNotReady(f"{label} is not reachable: {err}") from err

    entry.runtime_data = ToolbeltRuntime(backend=backend, label=label, models=models)
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
    """Subentry or connection changes take effect through a reload."""
    await hass.config_entries.async_reload(entry.entry_id)
