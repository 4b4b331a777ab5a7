"""Replies the parser refuses still end the turn with an answer, never an error."""

from __future__ import annotations

import pytest

from tests.loop.conftest import Harness


@pytest.mark.parametrize(
    ("tool_format", "reply", "refused"),
    [
        ("pythonic", "[HassTurnOn(name=" + "[" * 600 + "]" * 600 + ")]", True),
        ("pythonic", f"[HassLightSet(brightness={'9' * 4301})]", True),
        ("auto", "functions." * 1000 + "HassTurnOn({})", False),
        ("auto", "[" * 16_000, False),
    ],
    ids=["600 nested lists", "4301 digits", "functions x1000", "16000 brackets"],
)
async def test_a_hostile_reply_ends_the_turn_with_an_answer(
    harness: Harness, tool_format: str, reply: str, refused: bool
) -> None:
    harness.server.reply_text(reply)
    harness.server.reply_text("Sorry, I could not do that.")

    turn = await harness.turn(tool_format=tool_format)

    assert harness.house.log == []
    if refused:
        # The model reads why its call was refused, and answers.
        assert len(harness.server.requests) == 2
        told = harness.server.requests[1].messages[-1]["content"]
        assert told.count("ERROR: InvalidToolCall") == 1
        assert turn.text == "Sorry, I could not do that."
    else:
        # Markup-free text is the answer.
        assert len(harness.server.requests) == 1
        assert turn.text == reply
