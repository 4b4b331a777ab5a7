"""The `model` tool: list the server's models, name the agent's, switch it for good.

A switch writes the agent's subentry (the agent's form and device then show the new
model) and applies from the next turn. It is allowed only to a model the server
lists, and only as the 'Model switching' setting says (off by default); every
refusal tells the model why in words it can pass on.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from ..backend.errors import BackendError
from ..const import CONF_MODEL, CONNECT_TIMEOUT, DOMAIN
from .agents import NOT_A_TOOLBELT_AGENT, AgentRef
from .const import MODEL_SWITCH_ADMINS, MODEL_SWITCH_ANYONE
from .context import ToolContext
from .errors import ToolError
from .tool import Tool

if TYPE_CHECKING:
    from homeassistant.config_entries import ConfigEntry, ConfigSubentry
    from homeassistant.core import HomeAssistant

ModelAction = Literal["list", "current", "switch"]

_SWITCH_OFF = (
    "Switching models is turned off in the Toolbelt tools settings ('Model "
    "switching'). Tell the user it was not changed; an administrator can allow it "
    "there, or change the model in the agent's settings."
)
_SWITCH_NO_USER = (
    "Only a Home Assistant administrator may switch models, and this conversation "
    "has no user (a voice satellite or an automation). Tell the user it was not "
    "changed; an administrator can do it from the Home Assistant app."
)
_SWITCH_NOT_ADMIN = (
    "Only a Home Assistant administrator may switch models, and this user is not "
    "one. Tell the user it was not changed."
)


async def model(ctx: ToolContext, action: ModelAction, model: str | None = None) -> str:
    """The language models on your server: list them, say which you run on, switch.

    Switch only when the user asks for another model; the change is saved in your
    settings and applies from the next turn.

    Args:
        action: list, current or switch.
        model: The model to switch to, as list shows it (switch).
    """
    ctx.backend = "config"
    hass = ctx.services.hass
    if action == "list":
        entry = _server_entry(hass, ctx.agent)
        models = await _list_models(entry)
        current = _agent_model(hass, ctx.agent) if ctx.agent else None
        mark = f" You run on {current}." if current else ""
        return f"{entry.title} lists {len(models)} models: {', '.join(models)}.{mark}"
    if ctx.agent is None:
        raise ToolError(NOT_A_TOOLBELT_AGENT)
    entry, subentry = _agent_entry(hass, ctx.agent)
    current = str(subentry.data.get(CONF_MODEL) or "")
    if action == "current":
        return f"You run on {current} (agent '{subentry.title}' on {entry.title})."
    if not (model or "").strip():
        raise ToolError("switch needs 'model': one of the names list shows.")
    _check_allowed(ctx)
    models = await _list_models(entry)
    target = _pick(model or "", models)
    if target is None:
        raise ToolError(
            f"'{model}' is not a model {entry.title} lists, so it was not switched. "
            f"It lists: {', '.join(models)}."
        )
    if target == current:
        return f"You already run on {target}; nothing changed."
    hass.config_entries.async_update_subentry(
        entry, subentry, data={**subentry.data, CONF_MODEL: target}
    )
    return (
        f"Switched agent '{subentry.title}' from {current} to {target}. It is saved "
        "in the agent's settings and applies from the next turn; this answer still "
        f"comes from {current}."
    )


def _check_allowed(ctx: ToolContext) -> None:
    rule = ctx.services.settings.model_switching
    if rule == MODEL_SWITCH_ANYONE:
        return
    if rule != MODEL_SWITCH_ADMINS:
        raise ToolError(_SWITCH_OFF)
    if ctx.user_id is None:
        raise ToolError(_SWITCH_NO_USER)
    if not ctx.is_admin:
        raise ToolError(_SWITCH_NOT_ADMIN)


def _pick(wanted: str, models: list[str]) -> str | None:
    """The listed model: exact name, else the one name equal ignoring case."""
    wanted = wanted.strip()
    if wanted in models:
        return wanted
    folded = [m for m in models if m.lower() == wanted.lower()]
    return folded[0] if len(folded) == 1 else None


def _server_entry(hass: HomeAssistant, agent: AgentRef | None) -> ConfigEntry:
    """The calling agent's server, or the only loaded Toolbelt server."""
    if agent is not None:
        return _agent_entry(hass, agent)[0]
    entries = hass.config_entries.async_loaded_entries(DOMAIN)
    if len(entries) == 1:
        return entries[0]
    if not entries:
        raise ToolError("No Toolbelt model server is set up and loaded.")
    names = ", ".join(sorted(e.title for e in entries))
    raise ToolError(
        f"There are {len(entries)} Toolbelt servers ({names}); listing models from "
        "another agent works only when there is one. " + NOT_A_TOOLBELT_AGENT
    )


def _agent_entry(
    hass: HomeAssistant, agent: AgentRef
) -> tuple[ConfigEntry, ConfigSubentry]:
    from homeassistant.config_entries import ConfigEntryState  # see definitions.py

    entry = hass.config_entries.async_get_entry(agent.entry_id)
    subentry = entry.subentries.get(agent.subentry_id) if entry else None
    if entry is None or subentry is None or entry.state is not ConfigEntryState.LOADED:
        raise ToolError("This agent's settings are being reloaded; try again.")
    return entry, subentry


def _agent_model(hass: HomeAssistant, agent: AgentRef) -> str:
    return str(_agent_entry(hass, agent)[1].data.get(CONF_MODEL) or "")


async def _list_models(entry: ConfigEntry) -> list[str]:
    backend: Any = entry.runtime_data.backend
    try:
        async with asyncio.timeout(CONNECT_TIMEOUT):
            models = await backend.list_models()
    except TimeoutError as err:
        raise ToolError(f"{entry.title} did not list its models in time.") from err
    except BackendError as err:
        raise ToolError(
            f"{entry.title} could not list its models: {err.reason}."
        ) from err
    if not models:
        raise ToolError(f"{entry.title} lists no models.")
    return list(models)


# Model names come from the agent's own model server, which writes every
# reply of the model anyway: nothing from outside the home.
MODEL_TOOL = Tool(
    model,
    reads={"list", "current"},
    arg_aliases={"name": "model", "model_name": "model", "model_id": "model"},
    personal=False,
    returns_outside_data=False,
    action_aliases={
        "list": ("list_models", "get_models", "available_models"),
        "current": ("get_current_model", "current_model"),
        "switch": ("switch_model", "change_model", "set_model"),
    },
)
