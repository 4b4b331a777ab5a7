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

from collections.abc import Collection
from functools import lru_cache
import re
from typing import Any

import yaml

from . import compat
from .intent_tools import plain_name, sent_name
from .large_home import HomeShape

_LIVE_CONTEXT = compat.live_context_prompt()
_LIVE_CONTEXT_SHORT = (
    "For the CURRENT state of anything in the home (a lock, the weather), call"
    " GetLiveContext and answer from its result; never say you cannot."
    " Which devices exist: see the {} below. Answer other questions from your"
    " own knowledge.\n"
)
LIVE_CONTEXT_SHORT = _LIVE_CONTEXT_SHORT.format("list")
# In large-home mode (large_home.py) an index stands where the list stood.
LIVE_CONTEXT_INDEXED = _LIVE_CONTEXT_SHORT.format("index")
_OVERVIEW = (
    "Static Context: An overview of the areas and the devices in this smart home:\n"
)
OVERVIEW_SHORT = "Devices (domain in area: names; next device):\n"
# A device list HA wrote with more than names, domain and areas (states).
OVERVIEW_LINES = "Devices (names: domain, areas):\n"
# How HA's YAML list starts (yaml_util.dump of dicts whose first key is names).
_FIRST_DEVICE = "- names: "

# HA's sentences on controlling devices, as HA 2026.2 to 2026.11 write them.
_SENTENCES = (
    (
        re.compile(
            r"When controlling Home Assistant always call the intent tools\. "
            r"Use \S+ to lock and \S+ to unlock a lock\. "
            r"When controlling a device, prefer passing just name and domain\. "
            r"When controlling an area, prefer passing just area name and domain\."
        ),
        # Locks: the turn-on and turn-off tools' descriptions say it.
        "Control devices only with the tools, passing just name and domain, or"
        " area and domain.",
    ),
    (
        re.compile(r"This device is not able to start timers\."),
        "This device cannot start timers.",
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
    "GetLiveContext": "Current state or value of devices and sensors.",
    "HassTurnOn": "Turns on, opens or presses a device (locks a lock).",
    "HassTurnOff": "Turns off or closes a device (unlocks a lock).",
    "HassSetPosition": "Sets a cover's or valve's position (100 = open).",
    "HassStopMoving": "Stops a moving cover or valve.",
    "HassLightSet": "Sets a light's brightness or color.",
    "GetDateTime": "Current date and time.",
}
# GetLiveContext has filters from HA 2026.10; they are named where it has them.
_LIVE_FILTERS = " Filter by name, area or domain (best for several of one type)."
# Argument descriptions, by tool and argument; None drops what the name says.
_ARGUMENTS: dict[tuple[str, str], str | None] = {
    ("GetLiveContext", "name"): None,
    ("GetLiveContext", "domain"): "e.g. light",
    ("GetLiveContext", "area"): None,
    ("HassLightSet", "brightness"): "Percent: 0 off, 100 full",
}


# libyaml when PyYAML was built with it: a big home's list reads 10x faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=16)
def compact_system_prompt(
    text: str,
    api_prompt: str = "",
    tool_names: tuple[str, ...] = (),
    device_index: str | None = None,
) -> str:
    """The system prompt with HA's long Assist texts said shorter.

    ``api_prompt``: the LLM API's part of the prompt, as HA wrote it into
    ``text``; only that part is rewritten, and every tool it names is named
    as ``tool_names`` (the tools sent) spell it. Without it, the whole text is
    shortened and no name is touched. ``device_index``: large-home mode's
    index, which takes the place of HA's device list (the caller checks that
    it did: HA's list may be missing).

    Cached: the prompt only changes when the home or the instructions do, so a
    turn pays one dictionary lookup, not a YAML read on the event loop.
    """
    start = text.find(api_prompt) if api_prompt else -1
    if start < 0:
        return _compact(text, device_index)
    end = start + len(api_prompt)
    shorter = tools_as_sent(_compact(api_prompt, device_index), tool_names)
    return text[:start] + shorter + text[end:]


def _compact(text: str, device_index: str | None = None) -> str:
    """HA's live-data rules, device sentences and device list, said shorter."""
    if _LIVE_CONTEXT and _LIVE_CONTEXT in text:
        short = LIVE_CONTEXT_INDEXED if device_index else LIVE_CONTEXT_SHORT
        text = text.replace(_LIVE_CONTEXT, short, 1)
    for pattern, short in _SENTENCES:
        text = pattern.sub(short, text, count=1)
    return _compact_overview(text, device_index)


# HA's heading of each API's instructions in a merged API; HA 2026.11 lists
# the API's tools after it.
_SECTION = re.compile(
    r'^Follow these instructions for tools from "([^"]+)"(?: \(([^)\n]*)\))?:$', re.M
)
# What names a tool in a prompt: a `quoted` word, a namespaced name, one of
# HA's intent-style names, "the NAME tool", or a snake_case word.
_TOOL_WORD = re.compile(
    r"`(?P<quoted>[\w.-]+)`"
    r"|\bthe (?P<called>\w+) tool\b"
    r"|\b(?P<word>(?:[A-Za-z0-9-]+__)+\w+|(?:Hass|Get)[A-Z]\w*|[a-z0-9]+(?:_[a-z0-9]+)+)\b"
)


def tools_as_sent(text: str, names: Collection[str]) -> str:
    """``text`` with every tool it names spelled as the tools sent spell it.

    A word is only taken for a tool when a sent tool has that name (plain or
    namespaced), so prose stays prose. The tool lists HA 2026.11 writes into a
    merged API's headings keep only the tools sent (Toolbelt drops its own
    ``time`` beside Assist's ``GetDateTime``).
    """
    if not names:
        return text
    names = frozenset(names)
    parts: list[str] = []
    last, namespace = 0, None
    for heading in _SECTION.finditer(text):
        parts.append(_named(text[last : heading.start()], names, namespace))
        namespace = heading[1]
        parts.append(_heading(heading, names))
        last = heading.end()
    parts.append(_named(text[last:], names, namespace))
    return "".join(parts)


def _heading(heading: re.Match[str], names: frozenset[str]) -> str:
    """An API's heading, listing only the tools sent, as they are spelled."""
    if heading[2] is None:
        return heading[0]
    listed = (sent_name(n.strip(), names, heading[1]) for n in heading[2].split(","))
    kept = ", ".join(dict.fromkeys(name for name in listed if name))
    head = f'Follow these instructions for tools from "{heading[1]}"'
    return f"{head} ({kept}):" if kept else f"{head}:"


def _named(text: str, names: frozenset[str], namespace: str | None) -> str:
    def spelled(word: re.Match[str]) -> str:
        name = word["quoted"] or word["called"] or word["word"]
        sent = sent_name(name, names, namespace)
        if sent is None or sent == name:
            return word[0]
        return word[0].replace(name, sent, 1)

    return _TOOL_WORD.sub(spelled, text)


def described_as_sent(
    tools: list[dict[str, Any]], names: Collection[str]
) -> list[dict[str, Any]]:
    """OpenAI ``tools`` whose descriptions name other tools as they are sent."""
    described = []
    for tool in tools:
        function = tool.get("function") or {}
        text = function.get("description")
        if isinstance(text, str) and (named := tools_as_sent(text, names)) != text:
            tool = {**tool, "function": {**function, "description": named}}
        described.append(tool)
    return described


def compact_tool(tool: dict[str, Any], home: HomeShape | None = None) -> dict[str, Any]:
    """An OpenAI ``tools`` entry of HA's with its long descriptions shortened.

    HA's intent tools also lose what can match nothing in ``home``: device
    classes no exposed entity has, the floor when no exposed entity is on one,
    and a domain filter with one allowed value (the tool's own domain).
    """
    function = tool.get("function") or {}
    name = plain_name(str(function.get("name", "")))
    params = function.get("parameters") or {}
    props = params.get("properties")
    if not isinstance(props, dict):
        props = {}
    short = {
        key: _described(prop, _ARGUMENTS[name, key])
        if (name, key) in _ARGUMENTS
        else prop
        for key, prop in props.items()
    }
    if name.startswith("Hass"):
        short = _matchable(short, home)
    describe = name in _DESCRIPTIONS and bool(function.get("description"))
    if not describe and short == props:
        return tool
    function = dict(function)
    if describe:
        filters = name == "GetLiveContext" and "domain" in props
        function["description"] = _DESCRIPTIONS[name] + (
            _LIVE_FILTERS if filters else ""
        )
    if short != props:
        function["parameters"] = {**params, "properties": short}
    return {**tool, "function": function}


def _matchable(props: dict[str, Any], home: HomeShape | None) -> dict[str, Any]:
    """An intent tool's arguments without values that can match nothing."""
    kept: dict[str, Any] = {}
    for key, prop in props.items():
        values = _item_enum(prop)
        if key == "domain" and values is not None and len(values) == 1:
            continue
        if home is not None and key == "floor" and not home.has_floors:
            continue
        if home is not None and key == "device_class" and values is not None:
            values = [v for v in values if v in home.device_classes]
            if not values:
                continue
            prop = {**prop, "items": {**prop["items"], "enum": values}}
        kept[key] = _whole_number(prop)
    return kept


def _item_enum(prop: Any) -> list[Any] | None:
    """The allowed values of an array argument's items, if it lists them."""
    items = prop.get("items") if isinstance(prop, dict) else None
    values = items.get("enum") if isinstance(items, dict) else None
    return values if isinstance(values, list) else None


def _whole_number(prop: Any) -> Any:
    """``allOf: [integer, number with bounds]`` (HA's percentages) as one schema."""
    parts = prop.get("allOf") if isinstance(prop, dict) else None
    if not (
        isinstance(parts, list)
        and len(parts) == 2
        and parts[0] == {"type": "integer"}
        and isinstance(parts[1], dict)
        and parts[1].get("type") == "number"
    ):
        return prop
    rest = {k: v for k, v in prop.items() if k != "allOf"}
    return {**rest, **parts[1], "type": "integer"}


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
    if all(set(device) <= _GROUPED_KEYS for device in devices):
        listed = OVERVIEW_SHORT + _grouped(devices)
    else:
        listed = OVERVIEW_LINES + "\n".join(_device_line(d) for d in devices)
    return text[:start] + listed + text[end:]


_GROUPED_KEYS = frozenset({"names", "domain", "areas"})


def _grouped(devices: list[dict[str, Any]]) -> str:
    """One line per area and domain: ``light in Kitchen: Kitchen light; Spots``.

    A device's own names stay as HA joins them (with commas); devices are
    joined by semicolons. Areas in name order, devices with no area last.
    """
    groups: dict[tuple[bool, str, str, str], list[str]] = {}
    for device in devices:
        area = str(device.get("areas") or "")
        domain = str(device.get("domain", ""))
        key = (not area, area.casefold(), area, domain)
        groups.setdefault(key, []).append(str(device["names"]))
    lines = []
    for (_no_area, _folded, area, domain), names in sorted(groups.items()):
        where = f"{domain} in {area}" if area else domain
        lines.append(f"{where}: {'; '.join(names)}")
    return "\n".join(lines)


def _device_line(device: dict[str, Any]) -> str:
    where = ", ".join(str(device[k]) for k in ("domain", "areas") if k in device)
    line = f"- {device['names']}: {where}"
    rest = {k: v for k, v in device.items() if k not in ("names", "domain", "areas")}
    for key, value in rest.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        line += f"; {key} {value}"
    return line
