"""Diagnostics: the configuration with secrets redacted, and what the server offers."""

from __future__ import annotations

from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from .const import CONF_API_KEY
from .entry import ToolbeltConfigEntry
from .tools.api import async_get_tools_diagnostics

TO_REDACT = {CONF_API_KEY, "token", "password", "authorization"}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: ToolbeltConfigEntry
) -> dict[str, Any]:
    """Everything needed to debug a setup, nothing that unlocks it."""
    runtime = getattr(entry, "runtime_data", None)
    return {
        "entry": async_redact_data(
            {"title": entry.title, "data": dict(entry.data)}, TO_REDACT
        ),
        "subentries": [
            async_redact_data(
                {
                    "type": subentry.subentry_type,
                    "title": subentry.title,
                    "data": dict(subentry.data),
                },
                TO_REDACT,
            )
            for subentry in entry.subentries.values()
        ],
        "server": {
            "label": runtime.label if runtime else None,
            "models": runtime.models if runtime else [],
            "agent_state": {
                agent: {k: sorted(v) if isinstance(v, set) else v for k, v in s.items()}
                for agent, s in (runtime.agent_state.items() if runtime else [])
            },
        },
        "tools": async_get_tools_diagnostics(hass),
    }
