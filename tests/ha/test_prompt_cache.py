"""Prompts a local server can cache: each request starts with the previous one.

llama.cpp, vLLM and Ollama skip prompt processing only for a prefix they have
already seen, so across hops and turns of one conversation every request must
repeat the previous request's messages exactly, in the same key order.
"""

from __future__ import annotations

from itertools import pairwise
import json

from homeassistant.core import HomeAssistant
import pytest

from tests.ha.conftest import async_add_toolbelt, async_converse, speech
from tests.openai_server import OpenAIServer

TURNS = (
    ("turn on the kitchen light", "HassTurnOn", "Kitchen light"),
    ("turn on the porch light", "HassTurnOn", "Porch light"),
    ("turn off the kitchen light", "HassTurnOff", "Kitchen light"),
)


def _script(server: OpenAIServer, mode: str, turn: int, tool: str, name: str) -> None:
    """One call, then a short answer; turn 2 says something before its call."""
    call = {"name": tool, "arguments": {"name": name}}
    said = "One moment." if turn == 1 else None
    if mode in ("native", "fallback"):
        server.reply_tool_calls([call], content=said)
    elif mode == "hermes":
        text = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
        server.reply_text(f"{said}\n{text}" if said else text)
    else:
        server.reply_text(
            f"Thought: {said or 'I act.'}\nAction: {tool}\n"
            f"Action Input: {json.dumps(call['arguments'])}"
        )
    answer = f"Done with the {name.lower()}."
    server.reply_text(f"Final Answer: {answer}" if mode == "react" else answer)


def _wire(messages: list[dict]) -> list[str]:
    """Each message as it went over the wire: key order and bytes count."""
    return [json.dumps(m, ensure_ascii=False) for m in messages]


AGENTS = {
    "native": {"tool_format": "native"},
    "hermes": {"tool_format": "hermes"},
    "react": {"tool_format": "react"},
    # A server without the tool role: native calls, results as user messages.
    "fallback": {"tool_format": "native", "server_kind": "other"},
}


@pytest.mark.parametrize("mode", sorted(AGENTS))
async def test_each_request_starts_with_the_previous_one(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, mode: str
) -> None:
    """Three turns with a call in each: six requests, each a prefix of the next."""
    await async_add_toolbelt(hass, openai_server, **AGENTS[mode])
    conversation_id = None
    for turn, (text, tool, name) in enumerate(TURNS):
        _script(openai_server, mode, turn, tool, name)
        result = await async_converse(hass, text, conversation_id)
        conversation_id = result.conversation_id
        assert speech(result) == f"Done with the {name.lower()}."
    assert hass.states.get("light.kitchen_light").state == "off"
    assert hass.states.get("light.porch_light").state == "on"

    requests = openai_server.requests
    assert len(requests) == 6
    for before, after in pairwise(requests):
        sent = _wire(before.messages)
        assert _wire(after.messages)[: len(sent)] == sent
        assert after.tools == before.tools or after.tools is None
    # The debug view's durations stay out of what the model reads.
    assert "duration_ms" not in json.dumps(requests[-1].messages)

    # A new conversation in an unchanged home starts with the same prompt.
    _script(openai_server, mode, 0, "HassTurnOn", "Kitchen light")
    await async_converse(hass, "turn on the kitchen light")
    fresh, first = openai_server.requests[6], requests[0]
    assert _wire(fresh.messages[:1]) == _wire(first.messages[:1])
    assert json.dumps(fresh.tools) == json.dumps(first.tools)
