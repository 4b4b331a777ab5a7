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
from .ha_tools import plain_name, sent_name

_LIVE_CONTEXT = compat.live_context_prompt()
LIVE_CONTEXT_SHORT = (
    "For the CURRENT state, value or mode of anything in the home (a lock, the"
    " outside temperature), call GetLiveContext and answer from its"
    " result; never say you cannot. Which devices exist: see the list below."
    " Answer general questions from your own knowledge.\n"
)
_OVERVIEW = (
    "Static Context: An overview of the areas and the devices in this smart home:\n"
)
OVERVIEW_SHORT = "Devices (names: domain, areas):\n"

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
def compact_system_prompt(
    text: str, api_prompt: str = "", tool_names: tuple[str, ...] = ()
) -> str:
    """The system prompt with HA's long Assist texts said shorter.

    ``api_prompt``: the LLM API's part of the prompt, as HA wrote it into
    ``text``; only that part is rewritten, and every tool it names is named
    as ``tool_names`` (the tools sent) spell it. Without it, the whole text is
    shortened and no name is touched.

    Cached: the prompt only changes when the home or the instructions do, so a
    turn pays one dictionary lookup, not a YAML read on the event loop.
    """
    start = text.find(api_prompt) if api_prompt else -1
    if start < 0:
        return _compact(text)
    end = start + len(api_prompt)
    shorter = tools_as_sent(_compact(api_prompt), tool_names)
    return text[:start] + shorter + text[end:]


def _compact(text: str) -> str:
    """HA's live-data rules, device sentences and device list, said shorter."""
    if _LIVE_CONTEXT and _LIVE_CONTEXT in text:
        text = text.replace(_LIVE_CONTEXT, LIVE_CONTEXT_SHORT, 1)
    for pattern, short in _SENTENCES:
        text = pattern.sub(short, text, count=1)
    return _compact_overview(text)


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


def _compact_overview(text: str) -> str:
    """HA's YAML device list as one line per device."""
    start = text.find(_OVERVIEW)
    if start < 0:
        return text
    body_start = start + len(_OVERVIEW)
    end = text.find("\n\n", body_start)
    end = len(text) if end < 0 else end
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
