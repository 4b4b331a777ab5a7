"""The tool loop, free of Home Assistant: driven through a backend and an executor."""

from .events import CallsOut, HopStart, LoopEvent, ReasoningOut, ResultOut, TextOut
from .executor import Executor, ToolOutcome
from .tool_loop import LoopSettings, ToolLoop

__all__ = [
    "CallsOut",
    "Executor",
    "HopStart",
    "LoopEvent",
    "LoopSettings",
    "ReasoningOut",
    "ResultOut",
    "TextOut",
    "ToolLoop",
    "ToolOutcome",
]
