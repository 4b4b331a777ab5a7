"""Toolbelt: an LLM tool loop for Assist on any OpenAI-compatible server.

This module imports nothing from Home Assistant at import time: importing the
package must stay cheap and HA-free so that the dialect CLI
(``python -m custom_components.toolbelt.toolcalls``) runs on a bare Python.
The HA side of the config entry lives in ``ha/entry.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .const import DOMAIN

if TYPE_CHECKING:
    from homeassistant.core import HomeAssistant

    from .ha.entry import ToolbeltConfigEntry

__all__ = ["DOMAIN", "async_remove_entry", "async_setup_entry", "async_unload_entry"]


async def async_setup_entry(hass: HomeAssistant, entry: ToolbeltConfigEntry) -> bool:
    """Connect to the model server and start the agents."""
    from .ha.entry import async_setup_entry as setup_entry

    return await setup_entry(hass, entry)


async def async_unload_entry(hass: HomeAssistant, entry: ToolbeltConfigEntry) -> bool:
    """Stop the agents and release the model-server client."""
    from .ha.entry import async_unload_entry as unload_entry

    return await unload_entry(hass, entry)


async def async_remove_entry(hass: HomeAssistant, entry: ToolbeltConfigEntry) -> None:
    """Toolbelt removed: what it kept in memory for diagnostics goes too."""
    from .tools.api import async_drop_traces

    async_drop_traces(hass)
