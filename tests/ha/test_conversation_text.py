"""Text-parsed tool calls in a real HA: the lights change and no markup is spoken."""

from __future__ import annotations

import json

from homeassistant.core import HomeAssistant
import pytest

from tests.ha.conftest import (
    LIGHTS,
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    bare,
    speech,
    streamed_text,
)
from tests.openai_server import OpenAIServer
from tests.toolcalls.test_dialect_contract import TEXT_DIALECTS, WIRE

MARKUP = (
    "<tool_call",
    "[TOOL_CALLS]",
    "Action:",
    "Thought:",
    "<think",
    "</think",
    '"name"',
    "HassTurnOn",
    "<|",
)

CALL = {"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}
REPLIES = {
    "hermes": "Sure.\n<tool_call>\n" + json.dumps(CALL) + "\n</tool_call>",
    "qwen_think": "<think>The user wants light. I call HassTurnOn.</think>\n"
    "<tool_call>\n" + json.dumps(CALL) + "\n</tool_call>",
    "llama3_json": '{"name": "HassTurnOn", "parameters": {"name": "Kitchen light"}}',
    "mistral": '[TOOL_CALLS][{"name": "HassTurnOn", "arguments": '
    '{"name": "Kitchen light"}, "id": "a1B2c3D4e"}]',
    "pythonic": '[HassTurnOn(name="Kitchen light")]',
    "gpt_oss": "<|channel|>analysis<|message|>The user wants light.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.HassTurnOn "
    '<|constrain|>json<|message|>{"name": "Kitchen light"}<|call|>',
    "react": "Thought: The user wants the kitchen light on.\nAction: HassTurnOn\n"
    'Action Input: {"name": "Kitchen light"}',
}
FORMATS = {"react": "react"}
ANSWER = "The kitchen light is on now."


@pytest.mark.parametrize("chunked", [True, False], ids=["char_chunks", "one_chunk"])
@pytest.mark.parametrize("family", sorted(REPLIES))
async def test_text_call_turns_light_on_and_speech_is_clean(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    family: str,
    chunked: bool,
) -> None:
    await async_add_toolbelt(
        hass, openai_server, tool_format=FORMATS.get(family, "auto")
    )
    reply = REPLIES[family]
    openai_server.reply_text(reply, chunks=list(reply) if chunked else [reply])
    openai_server.reply_text(ANSWER, chunks=list(ANSWER) if chunked else [ANSWER])

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    spoken = streamed_text(deltas)
    assert spoken.endswith(ANSWER)
    for marker in MARKUP:
        assert marker not in spoken, (marker, spoken)
    if chunked and family != "react":
        # The answer reaches the ChatLog piece by piece as it streams, not at the end.
        # (ReAct holds a short plain answer to the end: it could be a thought.)
        last_result = max(i for i, d in enumerate(deltas) if d.get("tool_call_id"))
        pieces = [d for d in deltas[last_result:] if d.get("content")]
        assert len(pieces) > len(ANSWER) // 2
    # The tool call and its result are recorded for the debug view.
    calls = [d["tool_calls"] for d in deltas if d.get("tool_calls")]
    assert bare(calls[0][0].tool_name) == "HassTurnOn"
    assert any(d.get("tool_call_id") for d in deltas)
    if family == "qwen_think":
        thinking = "".join(d.get("thinking_content") or "" for d in deltas)
        assert "The user wants light" in thinking


async def test_mistral_ids_round_trip(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_text(REPLIES["mistral"])
    openai_server.reply_text(ANSWER)
    await async_converse_streamed(hass, "kitchen light on")
    assistant, tool = openai_server.requests[1].messages[-2:]
    assert assistant["tool_calls"][0]["id"] == "a1B2c3D4e"
    assert tool["tool_call_id"] == "a1B2c3D4e"


async def test_react_stop_sequences_and_fallback_messages(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, tool_format="react")
    openai_server.reply_text(
        REPLIES["react"] + "\nObservation: the light is on (invented by the model)"
    )
    openai_server.reply_text("Thought: done.\nFinal Answer: " + ANSWER)

    result, _deltas = await async_converse_streamed(hass, "kitchen light on")

    assert speech(result) == ANSWER
    first, second = openai_server.requests
    assert "Observation:" in first.body["stop"]
    assert not second.body.get("stop")
    assert first.tools is None  # the catalog is in the prompt instead
    assert "HassTurnOn" in first.messages[0]["content"]
    assistant, observation = second.messages[-2:]
    assert assistant == {
        "role": "assistant",
        "content": REPLIES["react"],
    }
    assert observation["role"] == "user"
    assert observation["content"].startswith("Observation:")
    assert "Kitchen light" in observation["content"]
    assert all(m["role"] != "tool" for m in second.messages)


async def test_four_device_commands_run_exactly_three(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server)
    names = list(LIGHTS.values())
    openai_server.reply_text(
        "\n".join(
            "<tool_call>"
            + json.dumps({"name": "HassTurnOn", "arguments": {"name": n}})
            + "</tool_call>"
            for n in names
        )
    )
    openai_server.reply_text("Three lights are on; the last one was not changed.")

    result, _deltas = await async_converse_streamed(hass, "all four lights on")

    states = [hass.states.get(f"light.{key}").state for key in LIGHTS]
    assert states == ["on", "on", "on", "off"]
    tool_messages = [
        m for m in openai_server.requests[1].messages if m["role"] == "tool"
    ]
    assert "LimitReached" in tool_messages[3]["content"]
    assert speech(result).startswith("Three lights are on")


async def test_twenty_one_calls_run_exactly_twenty(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, max_device_commands=50)
    for batch in range(3):
        openai_server.reply_tool_calls(
            [
                {"name": "HassTurnOn", "arguments": {"name": f"Lamp {batch * 7 + i}"}}
                for i in range(7)
            ]
        )
    openai_server.reply_text("None of those lamps exist.")

    result, _ = await async_converse_streamed(hass, "turn on 21 lamps")

    final = openai_server.requests[-1]
    tool_messages = [m for m in final.messages if m["role"] == "tool"]
    assert len(tool_messages) == 21
    refused = [m for m in tool_messages if "LimitReached" in m["content"]]
    assert len(refused) == 1
    assert tool_messages[-1] is refused[0]
    assert final.tools is None
    assert speech(result) == "None of those lamps exist."


async def test_malformed_call_gets_error_and_retry_succeeds(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server)
    bad = {"name": "HassTurnOn", "arguments": {"name": ["Kitchen light"]}}
    openai_server.reply_text("<tool_call>" + json.dumps(bad) + "</tool_call>")
    openai_server.reply_text("<tool_call>" + json.dumps(CALL) + "</tool_call>")
    openai_server.reply_text(ANSWER)

    result, _ = await async_converse_streamed(hass, "kitchen light on")

    error = openai_server.requests[1].messages[-1]
    assert error["role"] == "tool"
    assert error["content"].startswith("ERROR: ArgumentError: ")
    assert "name" in error["content"]
    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER


async def test_repeated_identical_call_is_not_rerun(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server)
    on = {"name": "HassTurnOn", "arguments": {"name": "Porch light"}}
    off = {"name": "HassTurnOff", "arguments": {"name": "Porch light"}}
    for call in (on, off, on):
        openai_server.reply_text("<tool_call>" + json.dumps(call) + "</tool_call>")
    openai_server.reply_text("The porch light is off.")

    await async_converse_streamed(hass, "porch light")

    # Had the third call (identical to the first) run, the light would be on.
    assert hass.states.get("light.porch_light").state == "off"
    repeat = openai_server.requests[3].messages[-1]
    assert repeat["content"].startswith("NOTE: this exact call")


@pytest.mark.parametrize("tool_format", TEXT_DIALECTS)
async def test_every_text_format_prompts_its_catalog_and_turns_light_on(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, tool_format: str
) -> None:
    """Each format the agent form offers: its catalog is in the system prompt
    (no ``tools`` field), lean, and a call in its wire format runs."""
    await async_add_toolbelt(hass, openai_server, tool_format=tool_format)
    openai_server.reply_text(WIRE[tool_format])
    openai_server.reply_text(ANSWER)

    result = await async_converse(hass, "turn on the kitchen light")

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == ANSWER
    first = openai_server.requests[0]
    assert first.tools is None
    system = first.messages[0]["content"]
    # The catalog is there (HA's own prompt never names HassLightSet), lean.
    assert "HassLightSet" in system
    assert "additionalProperties" not in system
