"""Which Toolbelt agent a turn belongs to, for the tools that act on an agent.

HA's LLMContext names the integration that handles the turn (``platform``) but not
the agent, so a Toolbelt agent marks its turn with ``calling_agent_turn`` around
the whole turn. The mark is a context variable: tasks the turn starts (parallel
tool calls) inherit it, and no other conversation sees it. It counts only when
the LLM context also says the platform is Toolbelt, so a turn of another agent
started from inside ours (a script calling conversation.process) is not taken
for ours.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .const import DOMAIN

if TYPE_CHECKING:
    from homeassistant.helpers import llm


@dataclass(frozen=True, slots=True)
class AgentRef:
    """A Toolbelt agent: its server entry and its agent subentry."""

    entry_id: str
    subentry_id: str
    title: str


_CALLING_AGENT: ContextVar[AgentRef | None] = ContextVar(
    "toolbelt_calling_agent", default=None
)


@contextmanager
def calling_agent_turn(agent: AgentRef) -> Iterator[None]:
    """Mark everything inside (and the tasks it starts) as this agent's turn."""
    token = _CALLING_AGENT.set(agent)
    try:
        yield
    finally:
        _CALLING_AGENT.reset(token)


def calling_agent(llm_context: llm.LLMContext | None) -> AgentRef | None:
    """The Toolbelt agent running this turn, or None for any other caller."""
    if llm_context is None or llm_context.platform != DOMAIN:
        return None
    return _CALLING_AGENT.get()


NOT_A_TOOLBELT_AGENT = (
    "This works only for a Toolbelt conversation agent, and this conversation is "
    "handled by another agent. Tell the user to ask a Toolbelt agent."
)
