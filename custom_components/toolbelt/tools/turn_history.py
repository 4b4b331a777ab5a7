"""Recording a Toolbelt agent's finished turn in the history the `history` tool reads.

Only what the user said, the final answer and the names of the tools used are kept;
tool arguments and results never are. Turns are recorded only for agents that
offer our tools (so the user can search and forget them), and the write runs in
the background so the answer is not held up by the disk.

Not recorded: a turn that asked to erase something (history forget, memory
delete, profile delete), since its words name what the user wants gone; and the
turn of an agent that answers a hand-off, because the agent that handed off
records the turn once, with the final answer.
"""

from __future__ import annotations

from collections.abc import Iterable
import logging
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant, callback

from ..ha.handoff import handoff_in_progress
from .api import DATA_TOOLS, is_toolbelt_tool
from .definitions import TOOLS_BY_NAME
from .errors import ToolError
from .history_store import HistoryStore

_LOGGER = logging.getLogger(__name__)
_NOT_RECORDED = "Toolbelt could not record the turn in the history: %s"


@callback
def async_record_turn(
    hass: HomeAssistant,
    user_input: conversation.ConversationInput,
    chat_log: conversation.ChatLog,
) -> None:
    """Queue the turn that just ended for the user's history (see module doc)."""
    llm_api = chat_log.llm_api
    if llm_api is None or not any(is_toolbelt_tool(tool) for tool in llm_api.tools):
        return
    if handoff_in_progress():
        return
    if (hub := hass.data.get(DATA_TOOLS)) is None:
        _LOGGER.warning(_NOT_RECORDED, "Toolbelt was unloaded while the turn ran")
        return
    context = user_input.context
    record = hub.traces.get(context.id) if context else None
    if record is not None and any(
        (tool := TOOLS_BY_NAME.get(call.tool)) is not None
        and tool.erases_with(call.action)
        for call in record.calls
    ):
        return
    answer, tools = finished_turn(chat_log.content)
    owner = context.user_id if context else None
    hass.async_create_task(
        _record(
            hub.stores().history,
            owner,
            user_input.text,
            answer,
            tools,
            hub.settings().history_days,
        ),
        "toolbelt record turn",
        eager_start=True,  # queued on the database thread before any close
    )


def finished_turn(content: Iterable[Any]) -> tuple[str, list[str]]:
    """(final answer, names of the tools called) since the last user message."""
    items = list(content)
    start = max(
        (i for i, c in enumerate(items) if isinstance(c, conversation.UserContent)),
        default=-1,
    )
    answer = ""
    tools: list[str] = []
    for item in items[start + 1 :]:
        if not isinstance(item, conversation.AssistantContent):
            continue
        for call in item.tool_calls or ():
            tools.append(call.tool_name.rpartition("__")[2])
        if item.content:
            answer = item.content
    return answer, tools


async def _record(
    store: HistoryStore,
    owner: str | None,
    user_text: str,
    answer: str,
    tools: list[str],
    retention_days: int,
) -> None:
    try:
        await store.record(
            owner, user_text, answer, tools, retention_days=retention_days
        )
    except ToolError as err:
        _LOGGER.warning(_NOT_RECORDED, err)
