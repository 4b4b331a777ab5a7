"""The honesty guard: an answer never claims a device command that did not run.

The recognizer stands in for HA's (tests/ha/test_honesty.py drives the real
one): it says whether the user's words were a device command. The model
server is the real HTTP test server; what it received is asserted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from custom_components.toolbelt.loop.events import (
    CallsOut,
    ControlOut,
    ResultOut,
    TextOut,
)
from custom_components.toolbelt.loop.honesty import NOTHING_CHANGED_NOTE, Recognized
from custom_components.toolbelt.toolcalls import ToolCall
from tests.loop.conftest import TURN_ON, Harness, hermes

CLAIM = "The kitchen light should be on now."
ANSWER = "The kitchen light is on."
UNCHANGED = "Sorry, I did not do that: nothing was changed."
COMMAND = Recognized(intent="HassTurnOn", unchanged=UNCHANGED, tool="HassTurnOn")


class Recognizer:
    """Recognizes after ``delay`` seconds; counts its calls."""

    def __init__(
        self,
        verdict: Recognized | None,
        delay: float = 0.0,
        fail: bool = False,
        warm: bool = False,
    ) -> None:
        self.verdict = verdict
        self.delay = delay
        self.fail = fail
        self.warm = warm
        self.calls = 0

    async def recognize(self) -> Recognized | None:
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("the recognizer broke")
        return self.verdict


async def confirm(outcomes: Sequence[ResultOut]) -> str:
    return "Turned on the light."


async def test_a_false_claim_is_never_said_and_the_reminded_model_acts(
    harness: Harness,
) -> None:
    server = harness.server
    server.reply_text(CLAIM, chunks=list(CLAIM))
    server.reply_tool_calls(TURN_ON)
    server.reply_text(ANSWER, chunks=list(ANSWER))

    turn = await harness.turn(
        "turn on the kitchen light", recognizer=Recognizer(COMMAND)
    )

    assert CLAIM not in turn.text
    assert turn.text == ANSWER
    assert harness.house.states == {"kitchen": "on"}
    reminder = server.requests[1].messages
    assert reminder[-2:] == [
        {"role": "assistant", "content": CLAIM},
        {"role": "user", "content": NOTHING_CHANGED_NOTE},
    ]
    # The answer after the call streams as always.
    assert len([e for e in turn.events if isinstance(e, TextOut)]) > 1
    assert len(server.requests) == 3


async def test_a_model_that_still_calls_nothing_is_corrected(harness: Harness) -> None:
    harness.server.reply_text(CLAIM)
    harness.server.reply_text("Done, it is on.")

    turn = await harness.turn(
        "turn on the kitchen light", recognizer=Recognizer(COMMAND), confirm=confirm
    )

    assert turn.text == UNCHANGED
    assert harness.house.log == []
    assert len(harness.server.requests) == 2


async def test_the_host_runs_the_command_where_the_agent_allows_it(
    harness: Harness,
) -> None:
    call = ToolCall(id="call_1", name="HassTurnOn", arguments={"name": "kitchen"})
    allowed = Recognized(
        intent="HassTurnOn", unchanged=UNCHANGED, tool="HassTurnOn", call=call
    )
    harness.server.reply_text(CLAIM)
    harness.server.reply_text(CLAIM)

    turn = await harness.turn(
        "turn on the kitchen light", recognizer=Recognizer(allowed), confirm=confirm
    )

    assert harness.house.states == {"kitchen": "on"}
    assert [e.calls for e in turn.events if isinstance(e, CallsOut)] == [(call,)]
    assert [e for e in turn.events if isinstance(e, ControlOut)] == [
        ControlOut("Turned on the light.", "recognized_command")
    ]
    assert CLAIM not in turn.text
    assert len(harness.server.requests) == 2


async def test_questions_and_chat_stream_untouched(harness: Harness) -> None:
    """Words wait only while recognition runs (here a few milliseconds);
    the server's stream is read on meanwhile, and the rest streams as it comes."""
    text = "It is a lovely day for it."
    harness.server.reply_text(text, chunks=list(text), chunk_delay=0.01)

    recognizer = Recognizer(None, delay=0.03)
    turn = await harness.turn("tell me a joke", recognizer=recognizer)

    assert turn.text == text
    assert len([e for e in turn.events if isinstance(e, TextOut)]) > len(text) // 2
    assert len(harness.server.requests) == 1
    assert recognizer.calls == 1


async def test_words_before_a_real_call_are_said(harness: Harness) -> None:
    harness.server.reply_text("Sure.\n" + hermes(("HassTurnOn", {"name": "kitchen"})))
    harness.server.reply_text(ANSWER)

    turn = await harness.turn(
        "turn on the kitchen light",
        recognizer=Recognizer(COMMAND),
        tool_format="hermes",
    )

    kinds = [type(e).__name__ for e in turn.events if isinstance(e, TextOut | CallsOut)]
    assert kinds[:2] == ["TextOut", "CallsOut"]
    assert turn.text == "Sure.\n" + ANSWER
    assert len(harness.server.requests) == 2


async def test_a_command_that_ran_ends_the_turn_without_waiting(
    harness: Harness,
) -> None:
    """Recognition started with the turn (the host's sentences are loaded) and
    still running when the turn ends is stopped, not awaited."""
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_text(ANSWER)

    recognizer = Recognizer(COMMAND, delay=30, warm=True)
    turn = await asyncio.wait_for(
        harness.turn("turn on the kitchen light", recognizer=recognizer), 5
    )

    assert turn.text == ANSWER
    assert harness.house.states == {"kitchen": "on"}
    assert recognizer.calls == 1


async def test_recognition_that_is_not_cheap_waits_until_needed(
    harness: Harness,
) -> None:
    """A model that calls the device at once and answers after it: no
    recognition at all while the host's sentences are not loaded."""
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_text(ANSWER)

    recognizer = Recognizer(COMMAND)
    turn = await harness.turn("turn on the kitchen light", recognizer=recognizer)

    assert turn.text == ANSWER
    assert recognizer.calls == 0


async def test_a_broken_recognizer_lets_the_answer_stand(harness: Harness) -> None:
    harness.server.reply_text(CLAIM)

    turn = await harness.turn(
        "turn on the kitchen light", recognizer=Recognizer(COMMAND, fail=True)
    )

    assert turn.text == CLAIM


async def test_the_reminder_forces_the_command_where_the_server_can(
    harness: Harness,
) -> None:
    harness.server.reply_text(CLAIM)
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_text(ANSWER)

    await harness.turn(
        "turn on the kitchen light",
        recognizer=Recognizer(COMMAND),
        constraints=("tool_choice",),
    )

    first, reminder, last = harness.server.requests
    assert "tool_choice" not in first.body
    assert reminder.body["tool_choice"] == {
        "type": "function",
        "function": {"name": "HassTurnOn"},
    }
    assert "tool_choice" not in last.body


async def test_a_command_that_failed_is_the_models_to_explain(harness: Harness) -> None:
    """The model tried the command and it failed: its reason is heard, not
    "nothing was changed", and it is not told that it called no tool."""
    harness.server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "Unavailable lamp"}}]
    )
    reason = "I could not turn on the lamp: it is unavailable."
    harness.server.reply_text(reason, chunks=list(reason))

    turn = await harness.turn(
        "turn on the unavailable lamp", recognizer=Recognizer(COMMAND)
    )

    assert turn.text == reason
    assert len(harness.server.requests) == 2
    assert all(
        m.get("content") != NOTHING_CHANGED_NOTE
        for m in harness.server.requests[1].messages
    )
