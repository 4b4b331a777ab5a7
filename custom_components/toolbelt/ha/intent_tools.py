"""What Toolbelt knows of Home Assistant's own tools, kept out of the HA-free loop.

Which tools change a device or only read (by name, for HA versions whose tools
carry no annotations), their plain names, and the device rules for the system
prompt. The executor (executor.py) answers the loop's questions from here;
the loop itself knows no HA tool by name.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from ..toolcalls.aliases import Alias

# HA intents that change a device's state. HA 2026.10+ says this itself through
# ToolAnnotations.read_only; older versions only have names.
DEVICE_COMMAND_TOOLS = frozenset(
    {
        "HassTurnOn",
        "HassTurnOff",
        "HassToggle",
        "HassLightSet",
        "HassSetPosition",
        "HassOpenCover",
        "HassCloseCover",
        "HassClimateSetTemperature",
        "HassClimateSetMode",
        "HassHumidifierSetpoint",
        "HassHumidifierMode",
        "HassFanSetSpeed",
        "HassMediaPause",
        "HassMediaUnpause",
        "HassMediaNext",
        "HassMediaPrevious",
        "HassSetVolume",
        "HassSetVolumeRelative",
        "HassMediaPlayerMute",
        "HassMediaPlayerUnmute",
        "HassMediaSearchAndPlay",
        "HassVacuumStart",
        "HassVacuumReturnToBase",
        "HassLawnMowerStartMowing",
        "HassLawnMowerDock",
        "HassValveSetPosition",
        "HassLockSet",
    }
)

# Tools that only read; they may run concurrently with each other.
READ_ONLY_TOOLS = frozenset(
    {
        "GetLiveContext",
        "GetDateTime",
        "GetCurrentLocation",
        "HassGetState",
        "HassGetWeather",
        "HassClimateGetTemperature",
        "HassGetCurrentDate",
        "HassGetCurrentTime",
        "HassTimerStatus",
        "todo_get_items",
        "calendar_get_events",
    }
)

# HA's tools that mean one of Toolbelt's: a model may call either by the
# other's name, and reaches whichever the turn offers (HA's first).
HA_TOOL_ALIASES = (Alias("time", ("GetDateTime",)),)


def plain_name(name: str) -> str:
    """``intent__HassTurnOn`` and ``light__HassLightSet`` both become the plain name."""
    return name.rpartition("__")[2]


def is_device_command_name(name: str) -> bool:
    """Name-based fallback: plain and namespaced names count the same."""
    return plain_name(name) in DEVICE_COMMAND_TOOLS


def is_read_only_name(name: str) -> bool:
    """Name-based fallback for read-only tools."""
    return plain_name(name) in READ_ONLY_TOOLS


def is_intent_tool_name(name: str) -> bool:
    """One of HA's own intent tools: a device command or a read."""
    return is_device_command_name(name) or is_read_only_name(name)


def sent_name(
    name: str, sent: Collection[str], namespace: str | None = None
) -> str | None:
    """The name of the tool ``name`` means, as the tools sent to the model spell it.

    HA writes its tools' names into its prompts before an API is merged with
    another: HA 2026.10 then prefixes every tool (``assist__intent__HassTurnOn``
    for ``intent__HassTurnOn``), HA 2026.11 only a name two APIs share (with
    the API's id). ``namespace``: the API whose instructions mention the name,
    which settles a name two APIs share. None when no sent tool, or more than
    one, fits.
    """
    if name in sent:
        return name
    if namespace and (scoped := f"{namespace}__{name}") in sent:
        return scoped
    for fits in (
        [tool for tool in sent if tool.endswith(f"__{name}")],
        [tool for tool in sent if plain_name(tool) == plain_name(name)],
    ):
        if len(fits) == 1:
            return fits[0]
    return None


def _by_plain_name(names: Iterable[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in names:
        found.setdefault(plain_name(name), name)
    return found


def device_guidance(tool_names: Iterable[str]) -> str:
    """Return the guidance block, or "" when the agent has no HA device tools.

    Written once: it says only what neither HA's Assist prompt nor the tool
    descriptions say (HA already asks for GetLiveContext before answering about
    states, and for names over entity ids).
    """
    tools = _by_plain_name(tool_names)
    if not any(name.startswith("Hass") for name in tools):
        return ""
    lines = [
        "Device rules: one call per device; report a change only if a tool"
        " result confirms it."
    ]
    # HA offers HassSetPosition only when a cover or valve is exposed: without
    # one the line would say nothing the home needs. Positions are in the
    # tool's description (assist_prompt.py).
    on, off = tools.get("HassTurnOn"), tools.get("HassTurnOff")
    if on and off and "HassSetPosition" in tools:
        lines.append(f"Covers: {on} opens, {off} closes.")
    return "\n".join(lines)


# The agent check's stand-in when an agent has no turn-on tool of its own.
PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "HassTurnOn",
        "description": "Turns on a device or entity",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "area": {"type": "string"}},
        },
    },
}
