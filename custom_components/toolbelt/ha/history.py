"""HA's ChatLog as the loop's history, and tool results as the ChatLog keeps them.

A local server only skips the prompt prefix it has already seen, so each
request must start with the previous one byte for byte. The ChatLog's records
cannot promise that by themselves: HA fills an intent response's speech after
the turn, and re-serialising a result may change its spacing. So a hop that ran
tools is recorded with what the model was sent (the reply in ``native``, each
result's text on the result), and read back as an ``Exchange`` that the loop
renders with the same code as in the turn it ran.

A turn that ended without an answer is shown to the model as a request that
failed, never as an answer it gave or an error to repeat: our own spoken error
(marked ``FailedTurn``), and what HA 2026.11 writes for a turn that raised
(``"Error: …"``, with error results for its unanswered calls) or added nothing
(``"(no response)"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers import llm

from ..loop import CallsOut, ResultOut
from ..loop.transcript import Exchange, History
from ..toolcalls.model import ToolCall
from ..toolcalls.prompting.render import result_text
from . import compat

# Shown in the debug view beside a recorded result; the model never reads it.
DURATION_KEY = "duration_ms"

# A call whose result never reached the ChatLog (a turn cancelled mid-call).
NO_RESULT_TEXT = "ERROR: the call did not finish."
# What the model reads in place of a failed turn's last words.
FAILED_TURN_TEXT = "(This request failed before it was answered.)"
# What HA 2026.11's ChatLog writes for a turn that raised or added nothing.
HA_NO_RESPONSE = "(no response)"
HA_ERROR_PREFIX = "Error: "
HA_ERROR_RESULT_KEYS = frozenset({"error", "error_text"})


class FailedTurn:
    """``AssistantContent.native`` of our spoken error: the turn failed."""


class RecordedResult(dict):
    """A tool result as the ChatLog keeps it: data, duration, and the sent text."""

    sent: str | None = None


class RecordedIntentResult(llm.IntentResponseDict):
    """An intent result: HA reads the matched entities from ``original``."""

    sent: str | None = None


def recorded_result(event: ResultOut) -> dict[str, Any]:
    """A copy of the result for the ChatLog; the loop's data is never changed.

    The copy carries ``duration_ms`` for the debug view and ``sent``, the exact
    text the model read, which later turns send again.
    """
    duration = round(event.duration * 1000, 1)
    data = event.data
    record: RecordedResult | RecordedIntentResult
    if isinstance(data, dict):
        if isinstance(data, llm.IntentResponseDict) and hasattr(data, "original"):
            record = RecordedIntentResult({**data, DURATION_KEY: duration})
            record.original = data.original
        else:
            record = RecordedResult({**data, DURATION_KEY: duration})
    else:
        record = RecordedResult({"result": data, DURATION_KEY: duration})
    record.sent = event.text
    return record


def _sent_text(item: conversation.ToolResultContent) -> str:
    data = compat.tool_result_data(item)
    sent = getattr(data, "sent", None)
    if isinstance(sent, str):
        return sent
    if isinstance(data, dict) and data.keys() == HA_ERROR_RESULT_KEYS:
        # HA 2026.11 answers the calls of a turn that raised: they never finished.
        return NO_RESULT_TEXT
    # A result another agent recorded: the loop's serializer, the one there is.
    return result_text(data)


def _failed_answer(content: list[conversation.Content], index: int) -> bool:
    """Whether this item is the last words of a turn that gave no answer."""
    item = content[index]
    if not isinstance(item, conversation.AssistantContent) or item.tool_calls:
        return False
    if isinstance(item.native, FailedTurn):
        return True
    ends_turn = index + 1 == len(content) or isinstance(
        content[index + 1], conversation.UserContent
    )
    text = item.content or ""
    return ends_turn and (text == HA_NO_RESPONSE or text.startswith(HA_ERROR_PREFIX))


def chat_log_messages(
    content: Iterable[conversation.Content],
    images: Mapping[Path, dict[str, Any]] | None = None,
) -> History:
    """System, user and assistant messages, with hops that ran tools as exchanges.

    ``images``: the content part of each attachment that goes to the model, by
    its file's path (an AI task's, read by ``attachments.async_image_parts``);
    a user message with one of them becomes its text followed by the images.
    """
    items = list(content)
    history: History = []
    pending: conversation.AssistantContent | None = None
    results: dict[str, str] = {}

    def flush() -> None:
        nonlocal pending
        if pending is None:
            return
        history.append(_exchange(pending, results))
        pending = None
        results.clear()

    for index, item in enumerate(items):
        if isinstance(item, conversation.ToolResultContent):
            if pending is not None:
                results[item.tool_call_id] = _sent_text(item)
            continue
        flush()
        if isinstance(item, conversation.SystemContent):
            history.append({"role": "system", "content": item.content})
        elif isinstance(item, conversation.UserContent):
            history.append({"role": "user", "content": _user_content(item, images)})
        elif isinstance(item, conversation.AssistantContent):
            if item.tool_calls:
                pending = item
            elif _failed_answer(items, index):
                last = history[-1] if history else None
                if isinstance(last, dict) and last.get("role") == "assistant":
                    history.pop()  # words streamed before the failure
                history.append({"role": "assistant", "content": FAILED_TURN_TEXT})
            elif item.content:
                history.append({"role": "assistant", "content": item.content})
    flush()
    return history


def _user_content(
    item: conversation.UserContent, images: Mapping[Path, dict[str, Any]] | None
) -> str | list[dict[str, Any]]:
    """The user's text, and the images attached to it when there are any."""
    parts = [
        images[attachment.path]
        for attachment in item.attachments or ()
        if images and attachment.path in images
    ]
    if not parts:
        return item.content
    return [{"type": "text", "text": item.content}, *parts]


def _exchange(item: conversation.AssistantContent, results: dict[str, str]) -> Exchange:
    """One recorded hop, as the loop had it when it ran."""
    calls = tuple(
        ToolCall(call.id, call.tool_name, call.tool_args)
        for call in item.tool_calls or ()
    )
    sent = item.native if isinstance(item.native, CallsOut) else None
    return Exchange(
        raw=sent.raw if sent else "",
        content=sent.content if sent else (item.content or "").strip(),
        calls=calls,
        results=tuple(results.get(call.id, NO_RESULT_TEXT) for call in calls),
    )
