"""Diagnostics: the configuration with secrets redacted, and what the server offers.

Everything returned goes through ``redaction.redact``: secret fields by name,
and credentials or queries inside any URL (see redaction.py for why).
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant

from .ha.entry import ToolbeltConfigEntry
from .ha.redaction import redact
from .tools.api import async_get_store_counts, async_get_tools_diagnostics


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: ToolbeltConfigEntry
) -> dict[str, Any]:
    """Everything needed to debug a setup, nothing that unlocks it."""
    runtime = getattr(entry, "runtime_data", None)
    return redact(
        {
            "entry": {"title": entry.title, "data": dict(entry.data)},
            "subentries": [
                {
                    "type": subentry.subentry_type,
                    "title": subentry.title,
                    "data": dict(subentry.data),
                }
                for subentry in entry.subentries.values()
            ],
            "server": {
                "label": runtime.label if runtime else None,
                "models": runtime.models if runtime else [],
                "agent_state": {
                    agent: state.as_dict()
                    for agent, state in (runtime.agents.items() if runtime else [])
                },
            },
            "tools": async_get_tools_diagnostics(hass),
            "stored": await async_get_store_counts(hass),
        }
    )
