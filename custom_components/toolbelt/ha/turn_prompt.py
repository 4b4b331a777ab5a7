"""A turn's prompt and tools from HA's ChatLog: built here, for turns and the check.

HA renders the system prompt and the API's tools (``async_provide_llm_data``);
Toolbelt says them shorter (``assist_prompt.py``) and, in a large home, puts
the index and ``find_devices`` in place of the device list (``large_home.py``).
An AI task's answer format joins the system prompt here as well. Both
entities' turns (``entity.py``) and the agent check build their prompt here,
so a task and an agent send the same tools for the same API, and the check's
context warning is about what a turn sends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant

from ..loop import Executor
from ..loop.transcript import History
from ..tools.api import drop_redundant_time
from . import compat
from .assist_prompt import compact_system_prompt, compact_tool, described_as_sent
from .history import chat_log_messages
from .large_home import FIND_DEVICES_TOOL, ExposedDevice, HomeShape, LargeHome


@dataclass(slots=True)
class TurnPrompt:
    """The messages and tools a turn starts from, and the tools it runs itself."""

    messages: History
    tools: list[dict[str, Any]]
    own: dict[str, Executor] = field(default_factory=dict)


def turn_prompt(
    hass: HomeAssistant,
    chat_log: conversation.ChatLog,
    large_home_mode: str,
    devices: list[ExposedDevice],
    extra: Sequence[tuple[str, dict[str, Any], Executor]] = (),
    *,
    images: Mapping[Path, dict[str, Any]] | None = None,
    instructions: str = "",
) -> TurnPrompt:
    """The turn's prompt; ``extra`` tools (name, schema, executor) follow HA's.

    ``images``: an AI task's attachments as the model gets them (see
    ``history.chat_log_messages``); ``instructions``: its answer's format,
    added to the system prompt for this run only (the ChatLog keeps HA's).
    """
    llm_api = chat_log.llm_api
    # The home first: what HA's intent tools can match, and its index if large.
    shape = HomeShape.of(devices)
    large_home = LargeHome.for_turn(hass, large_home_mode, devices)
    index = large_home.index if large_home else None
    # Our 'time' tool gives way to Assist's GetDateTime when both are offered.
    api_tools = drop_redundant_time(llm_api.tools) if llm_api else []
    serializer = llm_api.custom_serializer if llm_api else None
    openai_tools = [compat.tool_to_openai(tool, serializer) for tool in api_tools]
    messages = chat_log_messages(chat_log.content, images)
    # Then all said as sent, in one place: HA's tools shorter, and every tool
    # a prompt or a description names named as it is sent.
    tools = [compact_tool(tool, shape) for tool in openai_tools]
    own: dict[str, Executor] = {}
    for name, schema, executor in extra:
        tools.append(schema)
        own[name] = executor
    names = tuple(tool["function"]["name"] for tool in tools)
    tools = described_as_sent(tools, names)
    if messages and messages[0].get("role") == "system":
        system = compact_system_prompt(
            messages[0]["content"],
            llm_api.api_prompt if llm_api else "",
            names,
            index,
        )
        messages[0] = {**messages[0], "content": system}
        # The lookup comes with the index, where HA's device list was found.
        if large_home and index and index in system:
            tools.append(large_home.openai_tool())
            own[FIND_DEVICES_TOOL] = large_home
    return TurnPrompt(_with_instructions(messages, instructions), tools, own)


def _with_instructions(messages: History, instructions: str) -> History:
    """The system prompt with the answer's format added."""
    if not instructions:
        return messages
    first = messages[0] if messages else None
    if isinstance(first, dict) and first.get("role") == "system":
        system = {**first, "content": f"{first['content']}\n\n{instructions}"}
        return [system, *messages[1:]]
    return [{"role": "system", "content": instructions}, *messages]
