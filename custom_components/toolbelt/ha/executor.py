"""The loop's executor for Home Assistant: runs calls through the LLM API instance."""

from __future__ import annotations

from collections.abc import Mapping

from homeassistant.helpers import llm

from ..loop.executor import Executor, ToolOutcome
from ..toolcalls.model import ToolCall
from ..tools.api import is_toolbelt_tool
from . import compat
from .intent_tools import is_device_command_name, is_read_only_name


class HAExecutor:
    """Runs calls with ``APIInstance.async_call_tool`` (Assist, our tools, others).

    Whether a call reads or changes a device comes from HA's tool annotations
    where this HA has them, and from a name list otherwise. Our own tools say
    per call (``memory`` reads on search, writes on store). ``own`` are the
    agent's tools outside any LLM API (``handoff``), each its own executor.
    """

    def __init__(
        self, llm_api: llm.APIInstance | None, own: Mapping[str, Executor] | None = None
    ) -> None:
        """Index the API's tools by name."""
        self._api = llm_api
        self._tools = {tool.name: tool for tool in llm_api.tools} if llm_api else {}
        self._own = dict(own or {})

    def _tool(self, call: ToolCall) -> llm.Tool | None:
        tool = self._tools.get(call.name)
        # A merged API wraps each tool in a NamespacedTool; look at the real one.
        inner = getattr(tool, "tool", None)
        return inner if isinstance(inner, llm.Tool) else tool

    def traces_itself(self, call: ToolCall) -> bool:
        """Our own tools write their diagnostics trace; HA's tools don't."""
        return is_toolbelt_tool(self._tools.get(call.name))

    def validates_arguments(self, call: ToolCall) -> bool:
        """Our own tools check their arguments (and name what they accept)."""
        if (own := self._own.get(call.name)) is not None:
            return own.validates_arguments(call)
        return is_toolbelt_tool(self._tools.get(call.name))

    def is_read_only(self, call: ToolCall) -> bool:
        """Reads may run concurrently; anything else runs in emitted order."""
        if (own := self._own.get(call.name)) is not None:
            return own.is_read_only(call)
        tool = self._tool(call)
        per_call = getattr(tool, "is_read_only_call", None)
        if callable(per_call):
            return bool(per_call(call.arguments))
        annotated = compat.tool_read_only(tool)
        if annotated is not None:
            return annotated
        return is_read_only_name(call.name)

    def is_device_command(self, call: ToolCall) -> bool:
        """Device commands count toward the per-turn device cap."""
        if (own := self._own.get(call.name)) is not None:
            return own.is_device_command(call)
        tool = self._tool(call)
        if getattr(tool, "is_device_command", None) is False:
            return False
        annotated = compat.tool_read_only(tool)
        if annotated is not None:
            return not annotated
        return is_device_command_name(call.name)

    def offers_device_commands(self) -> bool:
        """Whether any of the API's tools changes a device (Assist is selected)."""
        return any(
            self.is_device_command(ToolCall(id="", name=name, arguments={}))
            for name in self._tools
        )

    async def run(self, call: ToolCall) -> ToolOutcome:
        """Call the tool; HA validates its own schema and raises readable errors."""
        if (own := self._own.get(call.name)) is not None:
            return await own.run(call)
        if self._api is None:
            raise LookupError(f"no tools are available, so {call.name} cannot run")
        data, failed = compat.unwrap_tool_result(
            await self._api.async_call_tool(tool_input(call))
        )
        # Our own tools answer {"error": "ERROR: ..."} instead of raising.
        failed = failed or (
            isinstance(data, dict) and isinstance(data.get("error"), str)
        )
        return ToolOutcome(data=data, failed=failed)


def tool_input(call: ToolCall, *, external: bool = False) -> llm.ToolInput:
    """A call as HA's LLM API takes it, and as the ChatLog records it.

    ``external``: the loop ran it already; the ChatLog only keeps it.
    """
    return llm.ToolInput(
        tool_name=call.name, tool_args=call.arguments, id=call.id, external=external
    )
