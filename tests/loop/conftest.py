"""A loop wired to the scripted HTTP model server and a small in-memory house."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
import json
from pathlib import Path
from typing import Any

import openai
import pytest_asyncio

from custom_components.toolbelt.backend.openai_compat import (
    OpenAICompatBackend,
    warm_client,
)
from custom_components.toolbelt.backend.servers import get_server_kind
from custom_components.toolbelt.ha import intent_tools as ha_tools
from custom_components.toolbelt.loop import AgentState, LoopSettings, ToolLoop
from custom_components.toolbelt.loop.events import LoopEvent, ResultOut, TextOut
from custom_components.toolbelt.loop.executor import ToolOutcome
from custom_components.toolbelt.toolcalls import ToolCall
from tests.openai_server import OpenAIServer

TOOLS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "corpus" / "tools.json").read_text()
)


TURN_ON = [{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}]
# What must never be spoken: call markup or reasoning.
MARKUP = ("<tool_call", "</tool_call", "[TOOL_CALLS]", "Action:", "<think", '{"name"')


def hermes(*calls: tuple[str, dict]) -> str:
    """Calls as a hermes model writes them."""
    return "\n".join(
        f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>"
        for n, a in calls
    )


# What our House's web_fetch returns: a page far longer than a small context.
PAGE_TEXT = "The eclipse crosses Spain. " * 2000


@dataclass
class House:
    """Stands in for Home Assistant: devices with states, and a log of calls.

    It knows HA's tools as ``HAExecutor`` does without annotations: by name.
    """

    states: dict[str, str] = field(default_factory=dict)
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    delay: float = 0.0
    active: int = 0
    max_active: int = 0

    def is_read_only(self, call: ToolCall) -> bool:
        return ha_tools.is_read_only_name(call.name)

    def is_device_command(self, call: ToolCall) -> bool:
        return ha_tools.is_device_command_name(call.name)

    def validates_arguments(self, call: ToolCall) -> bool:
        return False

    async def run(self, call: ToolCall) -> ToolOutcome:
        self.log.append((call.name, call.arguments))
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self.active -= 1
        name = call.arguments.get("name") or call.arguments.get("area") or "?"
        if name == "Unavailable lamp":
            return ToolOutcome(
                "ERROR: HomeAssistantError: it is unavailable", failed=True
            )
        if call.name.endswith("HassTurnOn"):
            self.states[name] = "on"
        elif call.name.endswith("HassTurnOff"):
            self.states[name] = "off"
        elif call.name.endswith("HassSetPosition"):
            self.states[name] = str(call.arguments["position"])
        elif call.name == "Explode":
            raise RuntimeError("the tool broke")
        elif call.name == "web_fetch":
            return ToolOutcome(PAGE_TEXT)
        return ToolOutcome({"success": True, "name": name})


@dataclass
class Turn:
    """Everything one loop run produced."""

    events: list[LoopEvent]

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextOut))

    @property
    def results(self) -> list[ResultOut]:
        return [e for e in self.events if isinstance(e, ResultOut)]


class Harness:
    """Runs turns of a ToolLoop against the scripted server."""

    def __init__(self, server: OpenAIServer, backend: OpenAICompatBackend) -> None:
        self.server = server
        self.backend = backend
        self.house = House()
        # One agent's learned facts, kept across this harness's turns.
        self.state = AgentState(name="Test agent")

    async def turn(
        self,
        text: str = "do it",
        *,
        tools: list[dict[str, Any]] | None = None,
        house: House | None = None,
        takes_control: Any = (),
        recognizer: Any = None,
        confirm: Any = None,
        **settings: Any,
    ) -> Turn:
        tools = TOOLS if tools is None else tools
        loop = ToolLoop(
            self.backend,
            house or self.house,
            LoopSettings(**{"model": "test-model", "timeout": 5, **settings}),
            state=self.state,
            takes_control=takes_control,
            recognizer=recognizer,
            confirm=confirm,
        )
        messages = [
            {"role": "system", "content": "You are a test assistant."},
            {"role": "user", "content": text},
        ]
        guidance = ha_tools.device_guidance(t["function"]["name"] for t in tools)
        events = [e async for e in loop.run(messages, tools, guidance=guidance)]
        return Turn(events)


@pytest_asyncio.fixture
async def harness(openai_server: OpenAIServer) -> AsyncIterator[Harness]:
    client = openai.AsyncOpenAI(
        base_url=openai_server.base_url, api_key="sk-test", max_retries=0
    )
    # As the integration does: the SDK's first-use imports are no turn's time.
    await asyncio.to_thread(warm_client, client)
    try:
        yield Harness(
            openai_server,
            OpenAICompatBackend(
                client, kind=get_server_kind("llamacpp"), label="Test server"
            ),
        )
    finally:
        await client.close()
