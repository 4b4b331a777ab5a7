"""How one turn's exchanges are written back into the request messages.

Earlier turns' exchanges come back from the ChatLog as ``Exchange``s too and
are rendered by the same code, so each request starts with the previous one.
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

__all__ = [
    "Exchange",
    "History",
    "render",
    "render_history",
    "trim_largest_result",
]


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


def trim_largest_result(exchanges: list[Any]) -> str | None:
    """Cut the longest tool result of the turn, in place, saying so in it.

    Returns what was done, for the log, or None when no result is long enough
    to be worth cutting (then the overflow is not ours to fix).
    """
    found = max(
        (
            (len(text), i, j)
            for i, exchange in enumerate(exchanges)
            if isinstance(exchange, Exchange)
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


# Earlier turns as the loop receives them: plain chat messages, and the
# exchanges that ran tools, which are rendered like this turn's.
History = list[dict[str, Any] | Exchange]


def render_history(
    history: History, dialect: Dialect, *, fallback: bool
) -> list[dict[str, Any]]:
    """Earlier turns in the shape of this turn, so a request repeats the last one.

    An exchange of an earlier turn renders with the same code as it did then,
    byte for byte, as long as the mode is the same.
    """
    messages: list[dict[str, Any]] = []
    for item in history:
        if isinstance(item, Exchange):
            messages.extend(render([item], dialect, fallback=fallback))
        else:
            messages.append(item)
    return messages


def _called(name: str, arguments_json: str) -> str:
    """How a call is written down for a model that cannot see structured calls."""
    return f"[called {name}({arguments_json})]"
