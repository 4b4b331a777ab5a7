"""HA's ChatLog as OpenAI chat messages: the one conversion, used every turn."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers.json import JSON_DUMP

from . import compat
from .loop.transcript import openai_tool_call

# Added to recorded tool results for the debug view; the model never needs it.
DURATION_KEY = "duration_ms"


def _result_text(data: Any) -> str:
    if isinstance(data, dict) and DURATION_KEY in data:
        data = {k: v for k, v in data.items() if k != DURATION_KEY}
    if isinstance(data, str):
        return data
    return JSON_DUMP(data)


def chat_log_messages(content: Iterable[conversation.Content]) -> list[dict[str, Any]]:
    """System, user, assistant (with tool calls) and tool messages, in order."""
    messages: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, conversation.SystemContent):
            messages.append({"role": "system", "content": item.content})
        elif isinstance(item, conversation.UserContent):
            messages.append({"role": "user", "content": item.content})
        elif isinstance(item, conversation.AssistantContent):
            message: dict[str, Any] = {"role": "assistant", "content": item.content}
            if item.tool_calls:
                message["tool_calls"] = [
                    openai_tool_call(call.id, call.tool_name, call.tool_args)
                    for call in item.tool_calls
                ]
            elif not item.content:
                continue
            messages.append(message)
        elif isinstance(item, conversation.ToolResultContent):
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": item.tool_call_id,
                    "content": _result_text(compat.tool_result_data(item)),
                }
            )
    return messages
