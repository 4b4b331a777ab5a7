"""HA's Assist prompt and tool texts, said in fewer characters.

A small local server reads every prompt character before it writes a word. HA
writes the same long texts for every agent: the live-context instructions,
the device overview as YAML, and wordy descriptions of a few built-in tools.
Toolbelt sends them shorter, with the same instructions. A rewrite applies
only where HA's own text is found as expected, so an HA that changes its
wording is sent unchanged, never half rewritten. Every rewrite is a pure
function of its input: the prompt stays byte-stable for the server's cache.
"""

from __future__ import annotations

from functools import lru_cache
import re
from typing import Any

import yaml

from . import compat
from .ha_tools import plain_name

_LIVE_CONTEXT = compat.live_context_prompt()
_LIVE_CONTEXT_SHORT = (
    "For the CURRENT state, value or mode of anything in the home (a lock, the"
    " outside temperature), call the live-context tool and answer from its"
    " result; never say you cannot. Which devices exist: see the {} below."
    " Answer general questions from your own knowledge.\n"
)
LIVE_CONTEXT_SHORT = _LIVE_CONTEXT_SHORT.format("list")
# In large-home mode (large_home.py) an index stands where the list stood.
LIVE_CONTEXT_INDEXED = _LIVE_CONTEXT_SHORT.format("index")
_OVERVIEW = (
    "Static Context: An overview of the areas and the devices in this smart home:\n"
)
OVERVIEW_SHORT = "Devices (names: domain, areas):\n"
# How HA's YAML list starts (yaml_util.dump of dicts whose first key is names).
_FIRST_DEVICE = "- names: "

# HA's sentences on controlling devices, as HA 2026.2 to 2026.11 write them.
_SENTENCES = (
    (
        re.compile(
            r"When controlling Home Assistant always call the intent tools\. "
            r"Use (\S+) to lock and (\S+) to unlock a lock\. "
            r"When controlling a device, prefer passing just name and domain\. "
            r"When controlling an area, prefer passing just area name and domain\."
        ),
        r"Control devices only by calling the tools, passing just name and domain,"
        r" or area and domain. \1 locks a lock, \2 unlocks it.",
    ),
    (
        re.compile(
            r"When a user asks to turn on all devices of a specific type, ask (?:the )?"
            r"user to specify an area, unless there is only one device of that type\."
        ),
        "For all devices of one type, ask which area, unless there is only one.",
    ),
)

# Descriptions of HA's built-in tools, by plain name, where HA's run long.
_DESCRIPTIONS = {
    "GetLiveContext": (
        "Current state, value or mode of devices, sensors and areas. Filter by"
        " name or alias, domain (best for several devices of one type) and area."
    ),
    "HassTurnOn": "Turns on, opens or presses a device (locks a lock).",
    "HassTurnOff": "Turns off or closes a device (unlocks a lock).",
}
# Argument descriptions, by tool and argument; None drops what the name says.
_ARGUMENTS: dict[tuple[str, str], str | None] = {
    ("GetLiveContext", "name"): None,
    ("GetLiveContext", "domain"): "Domain(s), e.g. light",
    ("GetLiveContext", "area"): None,
    ("HassLightSet", "brightness"): "Percent: 0 off, 100 full",
}


# libyaml when PyYAML was built with it: a big home's list reads 10x faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=16)
def compact_system_prompt(text: str, device_index: str | None = None) -> str:
    """The system prompt with HA's long Assist texts said shorter.

    ``device_index``: large-home mode's index, which takes the place of HA's
    device list (the caller checks that it did: HA's list may be missing).
    Cached: the prompt only changes when the home or the instructions do, so a
    turn pays one dictionary lookup, not a YAML read on the event loop.
    """
    if _LIVE_CONTEXT and _LIVE_CONTEXT in text:
        short = LIVE_CONTEXT_INDEXED if device_index else LIVE_CONTEXT_SHORT
        text = text.replace(_LIVE_CONTEXT, short, 1)
    for pattern, short in _SENTENCES:
        text = pattern.sub(short, text, count=1)
    return _compact_overview(text, device_index)


def compact_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI ``tools`` entry of HA's with its long descriptions shortened."""
    function = tool.get("function") or {}
    name = plain_name(str(function.get("name", "")))
    props = (function.get("parameters") or {}).get("properties")
    args = {
        key: text
        for (tool_name, key), text in _ARGUMENTS.items()
        if tool_name == name and isinstance(props, dict) and key in props
    }
    if name not in _DESCRIPTIONS and not args:
        return tool
    function = dict(function)
    if name in _DESCRIPTIONS and function.get("description"):
        function["description"] = _DESCRIPTIONS[name]
    if args:
        params = dict(function["parameters"])
        params["properties"] = {
            key: _described(prop, args[key]) if key in args else prop
            for key, prop in params["properties"].items()
        }
        function["parameters"] = params
    return {**tool, "function": function}


def _described(prop: Any, text: str | None) -> Any:
    """An argument schema with its description replaced (or dropped if None)."""
    if not isinstance(prop, dict) or "description" not in prop:
        return prop
    short = {k: v for k, v in prop.items() if k != "description"}
    return short if text is None else {**short, "description": text}


def _compact_overview(text: str, device_index: str | None) -> str:
    """HA's YAML device list as one line per device, or the index instead.

    The index needs no YAML read: a big home's list takes a YAML parser a
    noticeable time on the event loop, and the index replaces it whole.
    """
    start = text.find(_OVERVIEW)
    if start < 0:
        return text
    body_start = start + len(_OVERVIEW)
    end = text.find("\n\n", body_start)
    end = len(text) if end < 0 else end
    if device_index:
        if not text.startswith(_FIRST_DEVICE, body_start):
            return text
        return text[:start] + device_index + text[end:]
    try:
        devices = yaml.load(text[body_start:end], Loader=_LOADER)
    except yaml.YAMLError:
        return text
    if not isinstance(devices, list) or not all(
        isinstance(d, dict) and "names" in d for d in devices
    ):
        return text
    lines = [_device_line(device) for device in devices]
    return text[:start] + OVERVIEW_SHORT + "\n".join(lines) + text[end:]


def _device_line(device: dict[str, Any]) -> str:
    where = ", ".join(str(device[k]) for k in ("domain", "areas") if k in device)
    line = f"- {device['names']}: {where}"
    rest = {k: v for k, v in device.items() if k not in ("names", "domain", "areas")}
    for key, value in rest.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        line += f"; {key} {value}"
    return line
