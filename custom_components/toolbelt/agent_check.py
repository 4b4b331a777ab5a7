"""The capability check, run when an agent is created or changed: one place.

It probes with the agent's own turn-on tool, as the agent will send it (on
HA 2026.10+ that is ``intent__HassTurnOn``, further prefixed when APIs are
merged), so the check sees what a real turn sees. The server flow runs it for
the agent created with the server; the agent flow for every later one.
"""

from __future__ import annotations

from dataclasses import dataclass
import functools
from typing import Any

from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm

from . import compat
from .backend.openai_compat import OpenAICompatBackend
from .backend.servers import ServerKind
from .const import CONF_LLM_HASS_API, DOMAIN
from .entity import loop_settings
from .ha_tools import PROBE_TOOL, plain_name
from .loop.format_choice import NATIVE_FORMATS
from .loop.probe import (
    ConstraintReport,
    ProbeReport,
    async_probe_constraints,
    async_probe_tool_mode,
)
from .loop.tool_choice import TEXT_KINDS


@dataclass(frozen=True, slots=True)
class AgentCheck:
    """What the check found: the tool mode, and the constraints honoured."""

    report: ProbeReport
    constraints: ConstraintReport
    text_mode: bool


async def _async_agent_api(
    hass: HomeAssistant, options: dict[str, Any]
) -> llm.APIInstance | None:
    """The agent's LLM APIs as a turn gets them; None without any."""
    apis = options.get(CONF_LLM_HASS_API) or []
    if not apis:
        return None
    context = llm.LLMContext(
        platform=DOMAIN,
        context=Context(),
        language=hass.config.language,
        assistant="conversation",
        device_id=None,
    )
    try:
        return await llm.async_get_api(hass, apis, context)
    except HomeAssistantError:
        return None


async def async_probe_tool(
    hass: HomeAssistant, options: dict[str, Any]
) -> dict[str, Any]:
    """The agent's turn-on tool as OpenAI sees it, else ``PROBE_TOOL``."""
    api = await _async_agent_api(hass, options)
    tools = api.tools if api else []
    chosen = next(
        (t for t in tools if plain_name(t.name) == "HassTurnOn"),
        tools[0] if tools else None,
    )
    if api is None or chosen is None:
        return PROBE_TOOL
    return compat.tool_to_openai(chosen, api.custom_serializer)


async def async_tool_names(hass: HomeAssistant, options: dict[str, Any]) -> list[str]:
    """The agent's tools by their plain names, for the tool choice list."""
    api = await _async_agent_api(hass, options)
    return sorted({plain_name(t.name) for t in api.tools}) if api else []


async def async_check_agent(
    hass: HomeAssistant,
    backend: OpenAICompatBackend,
    kind: ServerKind,
    options: dict[str, Any],
) -> AgentCheck:
    """Probe the tool mode and the constraints this server kind may honour.

    Every probe is a turn's first request, with the agent's own settings.
    """
    settings = loop_settings(options, kind)
    tool = await async_probe_tool(hass, options)
    report = await async_probe_tool_mode(backend, settings, tool)
    text_mode = settings.tool_format not in NATIVE_FORMATS
    probe = functools.partial(async_probe_constraints, backend, settings, tool=tool)
    # Natively tool_choice forces a call; a text format needs a grammar or a
    # schema, and so does native mode on a server that ignores tool_choice
    # (Ollama): then they go with the tools, as a turn sends them.
    text_kinds = tuple(k for k in kind.constraints if k in TEXT_KINDS)
    if text_mode:
        constraints = await probe(kinds=text_kinds)
    else:
        native = tuple(k for k in kind.constraints if k not in TEXT_KINDS)
        constraints = await probe(kinds=native)
        if "tool_choice" not in constraints.honoured and text_kinds:
            constraints = constraints.merge(await probe(kinds=text_kinds))
    return AgentCheck(report=report, constraints=constraints, text_mode=text_mode)
