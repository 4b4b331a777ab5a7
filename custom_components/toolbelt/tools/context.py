"""What a tool function gets besides the model's arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from .agents import AgentRef
    from .services import ToolServices
    from .trace import TurnRecord


@dataclass(slots=True)
class ToolContext:
    """Per-call context, injected by the Tool object (never in the schema)."""

    __tool_injected__: ClassVar[bool] = True

    services: ToolServices
    turn: TurnRecord
    user_id: str | None = None
    """HA user of the conversation; None means shared memories."""
    may_change_shared: bool = True
    """Whether this conversation may update or delete shared memories."""
    is_admin: bool = False
    """Whether the conversation's HA user is an administrator."""
    read_outside_data: bool = False
    """Whether this conversation has read web pages, search results or past turns."""
    agent: AgentRef | None = None
    """The Toolbelt agent running the turn; None when another HA agent calls."""
    backend: str | None = None
    """Set by the tool to the backend it used, for the trace."""
