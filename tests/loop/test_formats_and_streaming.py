"""Tool-call formats on the wire and in the stream: what is sent, read and spoken."""

from __future__ import annotations

import pytest

from custom_components.toolbelt.loop.events import CallsOut, HopStart, TextOut
from tests.loop.conftest import MARKUP, Harness, hermes


async def test_text_calls_in_auto_mode_use_tool_role(harness: Harness) -> None:
    harness.server.reply_text("Sure!\n" + hermes(("HassTurnOn", {"name": "kitchen"})))
    harness.server.reply_text("It's on.")

    turn = await harness.turn()

    assert harness.house.states == {"kitchen": "on"}
    assert turn.text.startswith("Sure!")
    assert turn.text.endswith("It's on.")
    assert not any(marker in turn.text for marker in MARKUP)
    assistant, tool = harness.server.requests[1].messages[-2:]
    assert assistant["tool_calls"][0]["function"]["name"] == "HassTurnOn"
    assert tool["role"] == "tool"


@pytest.mark.parametrize("stream", [True, False])
async def test_react_stops_then_fallback_messages(
    harness: Harness, stream: bool
) -> None:
    harness.server.reply_text(
        "Thought: I should turn on the light.\nAction: HassTurnOn\n"
        'Action Input: {"name": "kitchen"}\nObservation: it is on (invented)'
    )
    harness.server.reply_text(
        "Thought: It worked.\nFinal Answer: The kitchen light is on."
    )

    turn = await harness.turn(tool_format="react", stream=stream)

    assert harness.house.states == {"kitchen": "on"}
    first, second = harness.server.requests
    assert first.tools is None
    assert second.tools is None
    assert "Observation:" in first.body["stop"]
    assert "stop" not in second.body or not second.body["stop"]
    assert "HassTurnOn" in first.messages[0]["content"]  # the catalog is in the prompt
    assistant, user = second.messages[-2:]
    assert assistant["role"] == "assistant"
    assert assistant["content"].rstrip().endswith('Action Input: {"name": "kitchen"}')
    assert "invented" not in assistant["content"]
    assert user["role"] == "user"
    assert user["content"].startswith("Observation:")
    assert '"success": true' in user["content"]
    assert turn.text == "The kitchen light is on."


async def test_streaming_never_releases_markup_and_releases_prose_early(
    harness: Harness,
) -> None:
    reply = "Let me check.\n" + hermes(("GetLiveContext", {}))
    harness.server.reply_text(reply, chunks=list(reply))  # one character per chunk
    answer = "The kitchen light is off and the porch light is on."
    harness.server.reply_text(answer, chunks=list(answer))

    turn = await harness.turn()

    texts = [e.text for e in turn.events if isinstance(e, TextOut)]
    spoken = "".join(texts)
    assert spoken.startswith("Let me check.")
    assert spoken.endswith(answer)
    assert spoken.replace("Let me check.", "", 1).strip() == answer
    assert not any(m in spoken for m in MARKUP)
    # Prose goes out as it arrives: many small deltas, not one at the end.
    assert len(texts) > 20
    hop_starts = [i for i, e in enumerate(turn.events) if isinstance(e, HopStart)]
    first_call = next(i for i, e in enumerate(turn.events) if isinstance(e, CallsOut))
    assert hop_starts[0] < first_call < hop_starts[1]


async def test_leaked_format_is_read_and_warned_once(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    for _ in range(2):
        harness.server.reply_text(hermes(("HassTurnOn", {"name": "kitchen"})))
        harness.server.reply_text("On.")
        assert (await harness.turn("kitchen on", tool_format="react")).text == "On."
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})] * 2
    (warning,) = [r.getMessage() for r in caplog.records if "hermes" in r.getMessage()]
    assert warning.startswith("Test agent: The model answered in the hermes")


async def test_template_thinking_model_holds_until_the_closer(
    harness: Harness,
) -> None:
    reply = "Let me think.\n</think>\nIt is on."
    harness.server.reply_text(reply, chunks=list(reply))

    turn = await harness.turn(model="deepseek-r1-distill-qwen-7b")

    assert turn.text == "It is on."


async def test_a_thinking_models_call_before_its_closer_ends_the_reasoning(
    harness: Harness,
) -> None:
    """vLLM's Qwen3 test ``tool_call_no_think_end``: the template opened the
    reasoning and the call came before any closer. The words before the call
    were thinking: not said, and not the assistant's words the next request
    repeats."""
    reply = (
        "I need to turn on the light.\n\n<tool_call>\n<function=HassTurnOn>\n"
        "<parameter=name>\nkitchen\n</parameter>\n</function>\n</tool_call>"
    )
    harness.server.reply_text(reply, chunks=list(reply))
    harness.server.reply_text("Done.</think>It is on.")

    turn = await harness.turn(model="Qwen/Qwen3-4B-Thinking-2507")

    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]
    assert turn.text == "It is on."
    (calls,) = [e for e in turn.events if isinstance(e, CallsOut)]
    assert calls.content == ""
    sent = [m for m in harness.server.requests[-1].messages if m["role"] == "assistant"]
    assert all("I need to" not in (m.get("content") or "") for m in sent)
