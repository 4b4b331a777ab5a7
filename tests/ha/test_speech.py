"""Only the answer is ever spoken: what reaches TTS while streaming and at the end.

Each test listens to ChatLog deltas as an Assist pipeline does and checks the
spoken text, the streamed text and what the server received.
"""

from __future__ import annotations

import asyncio
import json

from homeassistant.core import HomeAssistant
import pytest

from tests.ha.conftest import (
    async_add_toolbelt,
    async_converse_streamed,
    bare,
    speech,
    streamed_text,
)
from tests.openai_server import OpenAIServer

ANSWER = "The kitchen light is on."
THINKING_MODEL = "qwen3-4b-thinking-2507"
REASONING = "Okay, I should answer from the states I was given."


def thinking(deltas: list[dict]) -> str:
    return "".join(d.get("thinking_content") or "" for d in deltas)


# The honesty guard reads the user's words with HA's recognizer before a
# reply's first words are spoken (on a fresh HA's first turn about 0.2 s, 0.5 s
# on HA 2026.2; milliseconds after): a model that answers sooner is heard once
# the verdict is in. The replies that must stream early start ``after`` the
# verdict (the ``recognized`` fixture), not after a fixed delay that a busy
# machine may outlast.


def pieces_of(deltas: list[dict], text: str) -> int:
    """How many content deltas carried ``text``: many means it streamed early."""
    return sum(1 for d in deltas if d.get("content") and d["content"] in text)


async def test_template_opened_reasoning_is_never_spoken(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    recognized: asyncio.Event,
) -> None:
    await async_add_toolbelt(hass, openai_server, model=THINKING_MODEL)
    reply = f"{REASONING}\n</think>\n\n{ANSWER}"
    openai_server.reply_text(reply, chunks=list(reply), after=recognized)

    result, deltas = await async_converse_streamed(hass, "is the kitchen light on?")

    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    assert thinking(deltas) == REASONING
    # Once the closer has passed, the answer streams piece by piece.
    assert pieces_of(deltas, ANSWER) > len(ANSWER) // 2
    assert openai_server.requests[0].body["model"] == THINKING_MODEL


async def test_thinking_model_that_skips_reasoning_is_spoken_whole(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, model=THINKING_MODEL)
    openai_server.reply_text(ANSWER, chunks=list(ANSWER))

    result, deltas = await async_converse_streamed(hass, "is the kitchen light on?")

    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    assert thinking(deltas) == ""


async def test_thinking_model_streams_early_when_the_server_splits_reasoning(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    recognized: asyncio.Event,
) -> None:
    await async_add_toolbelt(hass, openai_server, model=THINKING_MODEL)
    openai_server.reply_reasoning(
        REASONING, ANSWER, chunks=list(ANSWER), after=recognized
    )

    result, deltas = await async_converse_streamed(hass, "is the kitchen light on?")

    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    assert pieces_of(deltas, ANSWER) > len(ANSWER) // 2
    assert REASONING in thinking(deltas)


async def test_normal_model_streams_its_answer_early(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    recognized: asyncio.Event,
) -> None:
    await async_add_toolbelt(hass, openai_server, model="llama-3.2-3b-instruct")
    openai_server.reply_text(ANSWER, chunks=list(ANSWER), after=recognized)

    result, deltas = await async_converse_streamed(hass, "is the kitchen light on?")

    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    assert pieces_of(deltas, ANSWER) > len(ANSWER) // 2


@pytest.mark.parametrize("chunked", [True, False])
async def test_reasoning_tags_are_thinking_only(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, chunked: bool
) -> None:
    await async_add_toolbelt(hass, openai_server)
    reply = f"<reasoning>{REASONING}</reasoning>\n{ANSWER}"
    openai_server.reply_text(reply, chunks=list(reply) if chunked else [reply])

    result, deltas = await async_converse_streamed(hass, "is the kitchen light on?")

    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    assert thinking(deltas) == REASONING


async def test_empty_think_block_leaves_no_blank_lines(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, model="qwen3:8b")
    reply = f"<think>\n\n</think>\n\n{ANSWER}"
    openai_server.reply_text(reply, chunks=list(reply))

    result, deltas = await async_converse_streamed(hass, "is the kitchen light on?")

    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER


PYTHONIC = '[HassTurnOn(name="Kitchen light")]'
CALL_REPLIES = {
    "functionary without >>>": ("", 'HassTurnOn\n{"name": "Kitchen light"}'),
    "bare pythonic": ("", 'HassTurnOn(name="Kitchen light")'),
    "prose then pythonic": ("Sure.\n", PYTHONIC),
    "BOM": ("", "\ufeff" + PYTHONIC),
    "zero-width space": ("", "\u200b" + PYTHONIC),
    "word joiner": ("", "\u2060" + PYTHONIC),
    "prose then fence": (
        "Sure.\n",
        '```json\n{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}\n```',
    ),
    "numbered ReAct labels": (
        "",
        "Thought 1: The user wants the light on.\nAction 1: HassTurnOn\n"
        'Action Input 1: {"name": "Kitchen light"}',
    ),
    "prose then recipient header": (
        "Sure.\n",
        'Assistant to=functions.HassTurnOn:\n{"name": "Kitchen light"}',
    ),
}


@pytest.mark.parametrize("case", CALL_REPLIES)
async def test_call_text_never_reaches_tts(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, case: str
) -> None:
    await async_add_toolbelt(hass, openai_server)
    prose, call = CALL_REPLIES[case]
    reply = prose + call
    openai_server.reply_text(reply, chunks=list(reply))
    openai_server.reply_text(ANSWER, chunks=list(ANSWER))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    assert streamed_text(deltas) == prose + ANSWER
    calls = [d["tool_calls"] for d in deltas if d.get("tool_calls")]
    assert [bare(c.tool_name) for c in calls[0]] == ["HassTurnOn"]
    assert len(openai_server.requests) == 2
    assert "HassTurnOn" in json.dumps(openai_server.requests[1].messages[-2:])


REFUSED = {
    "unknown tool": (
        '<tool_call>{"name": "HassTeleport", "arguments": {"name": "Kitchen light"}}'
        "</tool_call>",
        "unknown tool: HassTeleport",
    ),
    "truncated": (
        '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "Kitch',
        "truncated",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
async def test_refused_call_goes_back_to_the_model(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, case: str
) -> None:
    await async_add_toolbelt(hass, openai_server)
    bad, reason = REFUSED[case]
    good = (
        '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}'
        "</tool_call>"
    )
    openai_server.reply_text(bad, chunks=list(bad))
    openai_server.reply_text(good, chunks=list(good))
    openai_server.reply_text(ANSWER, chunks=list(ANSWER))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    told = openai_server.requests[1].messages[-1]
    assert told["role"] == "tool"
    assert told["content"].startswith("ERROR: InvalidToolCall: ")
    assert reason in told["content"]
    assert len(openai_server.requests) == 3


def react_call(name: str) -> str:
    return (
        f"Thought: I turn on the {name}.\nAction: HassTurnOn\n"
        f'Action Input: {{"name": "{name}"}}'
    )


async def test_text_mode_cap_is_told_and_catalog_withdrawn(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, tool_format="react", max_tool_calls=2)
    openai_server.reply_text(react_call("Kitchen light"))
    openai_server.reply_text(react_call("Porch light"))
    openai_server.reply_text("Thought: done.\nFinal Answer: Both lights are on.")

    result, deltas = await async_converse_streamed(hass, "kitchen and porch on")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert hass.states.get("light.porch_light").state == "on"
    assert speech(result) == "Both lights are on."
    assert streamed_text(deltas) == "Both lights are on."
    first, second, last = openai_server.requests
    assert "Action Input:" in first.messages[0]["content"]
    assert "Action Input:" in second.messages[0]["content"]
    assert "NOTE" not in second.messages[-1]["content"]
    # The catalog is gone; the last result says why, as an Observation.
    assert "Action Input:" not in last.messages[0]["content"]
    told = last.messages[-1]
    assert told["role"] == "user"
    assert told["content"].startswith("Observation:")
    assert "NOTE: that was tool call 2 of 2" in told["content"]


async def test_a_harmony_final_written_beside_a_call_is_never_spoken(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """gpt-oss may write a `final` channel after its call, before the result
    exists: that guess is not the answer. The answer after the result is."""
    await async_add_toolbelt(hass, openai_server, model="gpt-oss-20b")
    guess = "The kitchen light is already on."
    reply = (
        "<|channel|>analysis<|message|>The user wants the light on.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.HassTurnOn"
        ' <|constrain|>json<|message|>{"name": "Kitchen light"}<|call|>'
        f"<|start|>assistant<|channel|>final<|message|>{guess}<|return|>"
    )
    openai_server.reply_text(reply, chunks=list(reply))
    openai_server.reply_text(ANSWER, chunks=list(ANSWER))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    assert streamed_text(deltas) == ANSWER
    assert guess not in streamed_text(deltas)
    # The model reads its own result, not the guess it made before it.
    assert openai_server.requests[1].messages[-1]["role"] == "tool"


@pytest.mark.parametrize(
    ("reply", "before"),
    [
        ('Sure![HassTurnOn(name="Kitchen light")]It is on.', "Sure!"),
        (
            '# Too{\n"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}',
            "# Too",
        ),
    ],
)
async def test_a_call_after_prose_on_the_same_line_runs_and_is_never_spoken(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    reply: str,
    before: str,
) -> None:
    """TTS hears the prose before the call and the answer after it, never the call."""
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_text(reply, chunks=list(reply))
    openai_server.reply_text(ANSWER)

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    assert streamed_text(deltas) == before + ANSWER
    calls = openai_server.requests[1].messages[-2]["tool_calls"]
    assert [bare(c["function"]["name"]) for c in calls] == ["HassTurnOn"]


@pytest.mark.parametrize("chunked", [True, False])
@pytest.mark.parametrize(
    ("reply", "spoken"),
    [
        # Qwen and Hermes models sometimes close a call they never opened.
        (f"{ANSWER}</tool_call>", ANSWER),
        # The line goes; the newline before it is said, as after any answer
        # that ends in a blank line.
        (f"{ANSWER}\n</tool_call>\n", f"{ANSWER}\n"),
        (f"</tool_call>\n{ANSWER}", ANSWER),
        (
            f"{ANSWER}\n</tool_call>\nAnything else?",
            f"{ANSWER}\n\nAnything else?",
        ),
        # Mid-sentence it is what the model says, and is said.
        (
            "A call ends with </tool_call> in my prompt.",
            "A call ends with </tool_call> in my prompt.",
        ),
    ],
)
async def test_a_call_tag_with_no_call_is_never_spoken(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    reply: str,
    spoken: str,
    chunked: bool,
) -> None:
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_text(reply, chunks=list(reply) if chunked else [reply])

    result, deltas = await async_converse_streamed(hass, "is the kitchen light on?")

    assert speech(result) == spoken
    assert streamed_text(deltas) == spoken
