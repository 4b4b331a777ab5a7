"""How one turn's exchanges are written back into the request messages.

Two shapes exist. With the ``tool`` role (native calls, or a server whose chat
template renders tool messages), the assistant message carries structured
``tool_calls`` and each result is a ``tool`` message. In fallback mode (a text
dialect driven by the prompt, or a server that rejects the tool role), the
assistant message is the raw reply cut after its last call, and the results go
back as one synthetic user message in the dialect's own words (``Observation:``
for ReAct).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import json
from typing import Any

from ..toolcalls.dialects.base import Dialect
from ..toolcalls.model import ToolCall


@dataclass(frozen=True, slots=True)
class Exchange:
    """One hop that ran tools: what the model said and what the tools answered."""

    raw: str  # the reply, already cut after its last call
    content: str  # the user-visible part of the reply
    calls: tuple[ToolCall, ...]
    results: tuple[str, ...]  # one text per call, in call order


# A result is cut to at most this many characters when the model's context
# overflows; shorter results are left alone (cutting them frees too little).
TRIMMED_RESULT_CHARS = 2000


def trim_largest_result(exchanges: list[Exchange]) -> str | None:
    """Cut the longest tool result of the turn, in place, saying so in it.

    Returns what was done, for the log, or None when no result is long enough
    to be worth cutting (then the overflow is not ours to fix).
    """
    found = max(
        (
            (len(text), i, j)
            for i, exchange in enumerate(exchanges)
            for j, text in enumerate(exchange.results)
        ),
        default=None,
    )
    if found is None or found[0] <= TRIMMED_RESULT_CHARS:
        return None
    length, i, j = found
    exchange = exchanges[i]
    kept = exchange.results[j][:TRIMMED_RESULT_CHARS]
    note = (
        f"\n[Toolbelt cut this result from {length} to {len(kept)} characters "
        "to fit the model's context.]"
    )
    results = list(exchange.results)
    results[j] = kept + note
    exchanges[i] = replace(exchange, results=tuple(results))
    return f"cut the result of {exchange.calls[j].name} from {length} characters"


def result_text(data: Any) -> str:
    """A tool result as the text the model reads."""
    if isinstance(data, str):
        return data
    return json.dumps(data, ensure_ascii=False, default=str)


def openai_tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict:
    """One entry of an assistant message's ``tool_calls``, as OpenAI writes it."""
    return {
        "id": call_id,
        "type": "function",
        "function": {
            "name": name,
            "arguments": json.dumps(arguments, ensure_ascii=False),
        },
    }


def tool_role_messages(exchange: Exchange) -> list[dict[str, Any]]:
    """Assistant ``tool_calls`` plus one ``tool`` message per result."""
    assistant: dict[str, Any] = {
        "role": "assistant",
        "content": exchange.content or None,
        "tool_calls": [
            openai_tool_call(call.id, call.name, call.arguments)
            for call in exchange.calls
        ],
    }
    results = [
        {"role": "tool", "tool_call_id": call.id, "content": text}
        for call, text in zip(exchange.calls, exchange.results, strict=True)
    ]
    return [assistant, *results]


def fallback_messages(exchange: Exchange, dialect: Dialect) -> list[dict[str, Any]]:
    """The raw reply, then the results as a user message in the dialect's words."""
    rendered = "\n".join(
        dialect.format_result(call, text)
        for call, text in zip(exchange.calls, exchange.results, strict=True)
    )
    # Structured calls leave no raw text; write them down so the model sees them.
    said = exchange.raw.strip() or "\n".join(
        _called(call.name, json.dumps(call.arguments, ensure_ascii=False))
        for call in exchange.calls
    )
    return [
        {"role": "assistant", "content": said},
        {"role": "user", "content": rendered},
    ]


def render(
    exchanges: list[Exchange], dialect: Dialect, *, fallback: bool
) -> list[dict[str, Any]]:
    """All exchanges of this turn, in the chosen shape."""
    messages: list[dict[str, Any]] = []
    for exchange in exchanges:
        if fallback:
            messages.extend(fallback_messages(exchange, dialect))
        else:
            messages.extend(tool_role_messages(exchange))
    return messages


def to_fallback_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rewrite earlier turns' tool messages for a server without the tool role."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "tool":
            text = f"Tool result: {message.get('content', '')}"
            if out and out[-1]["role"] == "user":
                out[-1] = {**out[-1], "content": f"{out[-1]['content']}\n{text}"}
            else:
                out.append({"role": "user", "content": text})
        elif message.get("role") == "assistant" and message.get("tool_calls"):
            said = [message.get("content") or ""] + [
                _called(c["function"]["name"], c["function"]["arguments"])
                for c in message["tool_calls"]
            ]
            out.append({"role": "assistant", "content": "\n".join(said).strip()})
        else:
            out.append(message)
    return out


def _called(name: str, arguments_json: str) -> str:
    """How a call is written down for a model that cannot see structured calls."""
    return f"[called {name}({arguments_json})]"
