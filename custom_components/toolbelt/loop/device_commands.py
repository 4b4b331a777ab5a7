"""Which HA tools change devices, for HA versions whose tools carry no annotations."""

from __future__ import annotations

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


def plain_name(name: str) -> str:
    """``intent__HassTurnOn`` and ``light__HassLightSet`` both become the plain name."""
    return name.rpartition("__")[2]


def is_device_command_name(name: str) -> bool:
    """Name-based fallback: plain and namespaced names count the same."""
    return plain_name(name) in DEVICE_COMMAND_TOOLS


def is_read_only_name(name: str) -> bool:
    """Name-based fallback for read-only tools."""
    return plain_name(name) in READ_ONLY_TOOLS
