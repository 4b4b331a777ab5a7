"""The HA-free loop and backend against a real llama-server, streamed and not."""

from __future__ import annotations

import json

import pytest

from custom_components.toolbelt.backend.base import Finish, TextDelta
from custom_components.toolbelt.backend.errors import BackendToolParseError
from custom_components.toolbelt.loop.events import CallsOut
from tests.backend.common import ask, collect, collect_until_error, open_backend
from tests.llama.model import Recipe
from tests.llama.server import LlamaServers

from .conftest import Harness

pytestmark = pytest.mark.usefixtures("socket_enabled")

TURN_ON = {"name": "HassTurnOn", "arguments": {"name": "kitchen"}}
TOOL = {
    "type": "function",
    "function": {
        "name": "HassTurnOn",
        "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}
DONE = "The kitchen is lit."
ACTS = Recipe(
    reply=("<tool_call>", f"\n{json.dumps(TURN_ON)}\n", "</tool_call>"),
    after_tool=(DONE,),
)
# Single quotes: llama-server's lazy tool-call grammar rejects the piece.
SINGLE_QUOTED = Recipe(
    reply=("<tool_call>", f"\n{TURN_ON}\n", "</tool_call>"), after_tool=(DONE,)
)
GRAMMAR_STACK = "Unexpected empty grammar stack after accepting piece"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_a_native_turn(llama: LlamaServers, stream: bool) -> None:
    async with open_backend(llama.serve(ACTS).base_url) as backend:
        turn = await Harness(None, backend).turn(
            "turn on the kitchen", tools=[TOOL], stream=stream, timeout=30
        )

    (calls,) = [e for e in turn.events if isinstance(e, CallsOut)]
    assert [(c.name, c.arguments) for c in calls.calls] == [
        ("HassTurnOn", {"name": "kitchen"})
    ]
    assert turn.text == DONE


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_llama_cpp_losing_a_reply_to_its_parser_is_a_typed_error(
    llama: LlamaServers, stream: bool
) -> None:
    """Whole: HTTP 500. Streamed: a role chunk, then ``data: {"error": ...}``
    and no ``[DONE]``. Asked again raw (tool_choice "none"), the markup comes
    back as the model wrote it, from the same cached prompt."""
    async with open_backend(llama.serve(SINGLE_QUOTED).base_url) as backend:
        request = ask(tools=[TOOL], stream=stream, timeout=30)
        received, err = await collect_until_error(backend, request)
        request.raw_text = True
        raw = await collect(backend, request)

    assert isinstance(err, BackendToolParseError)
    assert err.status == (None if stream else 500)
    assert GRAMMAR_STACK in str(err)
    assert received == []  # the role chunk carries nothing
    text = "".join(d.text for d in raw if isinstance(d, TextDelta))
    assert text == f"<tool_call>\n{TURN_ON}\n</tool_call>"
    assert isinstance(raw[-1], Finish)
    assert raw[-1].tool_calls == ()


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_the_loop_reads_the_lost_call_itself(
    llama: LlamaServers, stream: bool
) -> None:
    async with open_backend(llama.serve(SINGLE_QUOTED).base_url) as backend:
        harness = Harness(None, backend)
        turn = await harness.turn(
            "turn on the kitchen", tools=[TOOL], stream=stream, timeout=30
        )

    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]
    assert turn.text == DONE
