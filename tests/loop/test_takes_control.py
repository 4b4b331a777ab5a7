"""The HA-free loop: after each round the results may end the turn."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from custom_components.toolbelt.loop import ToolOutcome
from custom_components.toolbelt.loop.events import ControlOut, ResultOut, TextOut
from custom_components.toolbelt.loop.takes_control import (
    InstantConfirmation,
    RoundCall,
)
from custom_components.toolbelt.toolcalls import ToolCall
from tests.loop.conftest import TOOLS, TURN_ON, Harness, House

DELEGATE = {
    "type": "function",
    "function": {
        "name": "delegate",
        "description": "Let someone else answer.",
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}}},
    },
}


class Delegating(House):
    """A house with one tool that answers the user itself."""

    async def run(self, call: ToolCall) -> ToolOutcome:
        if call.name == "delegate":
            self.log.append((call.name, call.arguments))
            return ToolOutcome({"answer": "It is sunny."}, answer="It is sunny.")
        return await super().run(call)


async def confirm(outcomes: Sequence[ResultOut]) -> str:
    return " ".join(f"{o.call.arguments['name']} done." for o in outcomes)


async def test_a_result_with_an_answer_ends_the_turn(harness: Harness) -> None:
    harness.server.reply_tool_calls([{"name": "delegate", "arguments": {"who": "x"}}])

    events = (await harness.turn(house=Delegating(), tools=[*TOOLS, DELEGATE])).events

    assert len(harness.server.requests) == 1
    assert events[-1] == ControlOut("It is sunny.", "tool")
    assert not [e for e in events if isinstance(e, TextOut)]


EXPLODE = {
    "type": "function",
    "function": {"name": "Explode", "parameters": {"type": "object"}},
}


async def test_a_failed_call_beside_the_answer_leaves_it_to_the_model(
    harness: Harness,
) -> None:
    harness.server.reply_tool_calls(
        [
            {"name": "Explode", "arguments": {}},
            {"name": "delegate", "arguments": {"who": "x"}},
        ]
    )
    harness.server.reply_text("The tool broke, but it is sunny.")

    events = (
        await harness.turn(house=Delegating(), tools=[*TOOLS, DELEGATE, EXPLODE])
    ).events

    assert not [e for e in events if isinstance(e, ControlOut)]
    assert "".join(e.text for e in events if isinstance(e, TextOut)) == (
        "The tool broke, but it is sunny."
    )
    # The model read both results: the failure and the other agent's answer.
    tool_messages = [
        m["content"] for m in harness.server.requests[1].messages if m["role"] == "tool"
    ]
    assert len(tool_messages) == 2
    assert tool_messages[0].startswith("ERROR:")
    assert "It is sunny." in tool_messages[1]


async def test_a_refused_call_beside_the_answer_leaves_it_to_the_model(
    harness: Harness,
) -> None:
    harness.server.reply_tool_calls(
        [
            {"name": "HassTurnOn", "arguments": {"name": "a"}},
            {"name": "HassTurnOn", "arguments": {"name": "b"}},
            {"name": "delegate", "arguments": {"who": "x"}},
        ]
    )
    harness.server.reply_text("a is on; b was not changed. It is sunny.")

    events = (
        await harness.turn(
            house=Delegating(), tools=[*TOOLS, DELEGATE], max_device_commands=1
        )
    ).events

    assert [e.refused for e in events if isinstance(e, ResultOut)] == [
        False,
        True,
        False,
    ]
    assert not [e for e in events if isinstance(e, ControlOut)]
    assert len(harness.server.requests) == 2


class Broken:
    """A check whose own code fails (a missing language file, a bad template)."""

    name = "broken"

    async def answer(self, calls: Sequence[RoundCall]) -> str | None:
        raise KeyError("responses")


async def test_a_check_that_raises_leaves_the_answer_to_the_model(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_text("The kitchen light is on.")

    turn = await harness.turn(takes_control=(Broken(), InstantConfirmation(confirm)))

    assert turn.text == "The kitchen light is on."
    assert not [e for e in turn.events if isinstance(e, ControlOut)]
    assert len(harness.server.requests) == 2
    # The light was switched once, not again for the model's answer.
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]
    assert harness.house.states == {"kitchen": "on"}
    assert "The broken takes-control check failed" in caplog.text


async def test_instant_confirmation_only_when_every_command_worked(
    harness: Harness,
) -> None:
    checks = (InstantConfirmation(confirm),)
    harness.server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": n}} for n in ("a", "b")]
    )

    events = (await harness.turn(takes_control=checks)).events

    assert events[-1] == ControlOut("a done. b done.", "instant_confirmation")
    assert len(harness.server.requests) == 1


async def test_a_refused_command_leaves_the_answer_to_the_model(
    harness: Harness,
) -> None:
    checks = (InstantConfirmation(confirm),)
    harness.server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": n}} for n in ("a", "b")]
    )
    harness.server.reply_text("Turned a on; b was not changed.")

    events = (await harness.turn(takes_control=checks, max_device_commands=1)).events

    results = [e for e in events if isinstance(e, ResultOut)]
    assert [r.refused for r in results] == [False, True]
    assert not [e for e in events if isinstance(e, ControlOut)]
    assert "".join(e.text for e in events if isinstance(e, TextOut)) == (
        "Turned a on; b was not changed."
    )
    assert len(harness.server.requests) == 2


async def test_a_read_leaves_the_answer_to_the_model(harness: Harness) -> None:
    checks = (InstantConfirmation(confirm),)
    harness.server.reply_tool_calls(
        [
            {"name": "HassTurnOn", "arguments": {"name": "a"}},
            {"name": "GetLiveContext", "arguments": {}},
        ]
    )
    harness.server.reply_text("a is on.")

    events = (await harness.turn(takes_control=checks)).events

    assert not [e for e in events if isinstance(e, ControlOut)]
    assert len(harness.server.requests) == 2
