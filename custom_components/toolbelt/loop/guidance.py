"""The short device-control block added to the system prompt when HA tools exist.

Every token costs prefill time on small hardware, so the block names only the
tools this agent really has, spelled as its catalog spells them (plain
``HassTurnOn`` or namespaced ``intent__HassTurnOn``).
"""

from __future__ import annotations

from collections.abc import Iterable

from .device_commands import plain_name


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
        "Device rules: one tool call per device; never say a device changed"
        " unless a tool result confirms it."
    ]
    on, off, position = (
        tools.get("HassTurnOn"),
        tools.get("HassTurnOff"),
        tools.get("HassSetPosition"),
    )
    if on and off:
        cover = f"Covers: {on} opens, {off} closes"
        cover += f", {position} sets 0-100 (100 = open)." if position else "."
        lines.append(cover)
    return "\n".join(lines)
