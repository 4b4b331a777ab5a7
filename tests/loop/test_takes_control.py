"""Seed 003 in the HA-free loop: after each round the results may end the turn."""

from __future__ import annotations

from collections.abc import Sequence

from custom_components.toolbelt.loop import ToolOutcome
from custom_components.toolbelt.loop.events import ControlOut, ResultOut, TextOut
from custom_components.toolbelt.loop.takes_control import InstantConfirmation
from custom_components.toolbelt.toolcalls import ToolCall
from tests.loop.conftest import TOOLS, Harness, House

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


async def test_a_failed_call_beside_the_answer_still_hands_over(
    harness: Harness,
) -> None:
    harness.server.reply_tool_calls(
        [
            {"name": "Explode", "arguments": {}},
            {"name": "delegate", "arguments": {"who": "x"}},
        ]
    )
    explode = {
        "type": "function",
        "function": {"name": "Explode", "parameters": {"type": "object"}},
    }

    events = (
        await harness.turn(house=Delegating(), tools=[*TOOLS, DELEGATE, explode])
    ).events

    assert events[-1] == ControlOut("It is sunny.", "tool")
    assert len(harness.server.requests) == 1


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
