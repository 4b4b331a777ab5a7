"""The tool loop, free of Home Assistant: driven through a backend and an executor."""

from .agent_state import AgentState
from .events import (
    CallsOut,
    ControlOut,
    HopStart,
    LoopEvent,
    ReasoningOut,
    ResultOut,
    TextOut,
)
from .executor import Executor, ToolOutcome
from .phrasebook import Phrasebook
from .tool_loop import LoopSettings, ToolLoop

__all__ = [
    "AgentState",
    "CallsOut",
    "ControlOut",
    "Executor",
    "HopStart",
    "LoopEvent",
    "LoopSettings",
    "Phrasebook",
    "ReasoningOut",
    "ResultOut",
    "TextOut",
    "ToolLoop",
    "ToolOutcome",
]
