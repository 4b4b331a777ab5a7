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
    """Return the guidance block, or "" when the agent has no HA device tools."""
    tools = _by_plain_name(tool_names)
    if not any(name.startswith("Hass") or name == "GetLiveContext" for name in tools):
        return ""
    lines = [
        "Device control rules:",
        "- To change a device, call a tool. Never say an action happened unless a"
        " tool result confirms it.",
        "- One call per device. Target devices by name and area or floor, not by"
        " entity id.",
    ]
    on, off, position = (
        tools.get("HassTurnOn"),
        tools.get("HassTurnOff"),
        tools.get("HassSetPosition"),
    )
    if on and off:
        cover = f"- Covers (blinds, garage doors): {on} opens, {off} closes"
        cover += f", {position} sets 0-100 (100 = open)." if position else "."
        lines.append(cover)
    if light := tools.get("HassLightSet"):
        lines.append(f"- {light} sets brightness (0-100) and colour.")
    if context := tools.get("GetLiveContext"):
        lines.append(f"- For questions about current states, call {context} first.")
    return "\n".join(lines)
