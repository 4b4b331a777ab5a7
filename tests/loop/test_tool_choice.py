"""Tool-choice policies on the wire: what each hop's request carried, and fallbacks."""

from __future__ import annotations

import json

from custom_components.toolbelt.backend.servers import LLAMACPP
from custom_components.toolbelt.loop.tool_choice import hop_shape
from custom_components.toolbelt.toolcalls import Catalog
from custom_components.toolbelt.toolcalls.prompting.constraint import Shape
from tests.loop.conftest import TOOLS, TURN_ON, Harness

CALL_TEXT = json.dumps(TURN_ON[0])
# A call forced on the first hop by a grammar.
GRAMMAR_FIRST = {"tool_choice": "required_first", "constraints": ("grammar",)}


async def run(harness: Harness, **settings) -> str:
    """One turn's spoken text; what the agent learned stays in ``harness.state``."""
    return (await harness.turn("on", **settings)).text


def test_hop_shapes_per_policy() -> None:
    catalog = Catalog.from_openai(TOOLS)
    assert hop_shape("auto", False, 0, catalog) is None
    assert hop_shape("auto", True, 0, catalog) == (Shape.ANSWER_OR_CALL, None)
    assert hop_shape("required_first", False, 0, catalog) == (Shape.ANY_CALL, None)
    assert hop_shape("required_first", False, 1, catalog) is None
    assert hop_shape("required", False, 3, catalog) == (Shape.ANY_CALL, None)
    assert hop_shape("hass_turn_on", False, 0, catalog) == (
        Shape.ONE_CALL,
        "HassTurnOn",
    )
    assert hop_shape("NoSuchTool", False, 0, catalog) is None


async def test_required_first_natively_forces_hop_zero_only(harness: Harness) -> None:
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_text("The kitchen light is on.")
    spoken = await run(
        harness, tool_choice="required_first", constraints=("tool_choice",)
    )
    assert spoken == "The kitchen light is on."
    first, second = harness.server.requests
    assert first.body["tool_choice"] == "required"
    assert "tool_choice" not in second.body
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]


async def test_named_tool_on_llamacpp_sends_that_tool_alone(harness: Harness) -> None:
    """llama-server reads a named tool_choice as auto: send required + one tool."""
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_text("Done.")
    await run(
        harness,
        tool_choice="HassTurnOn",
        constraints=("tool_choice",),
        server=LLAMACPP,
    )
    first, second = harness.server.requests
    assert first.body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in first.tools] == ["HassTurnOn"]
    assert len(second.tools) == len(TOOLS)


async def test_named_tool_choice_object_where_the_server_takes_it(
    harness: Harness,
) -> None:
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_text("Done.")
    await run(harness, tool_choice="HassTurnOn", constraints=("tool_choice",))
    assert harness.server.requests[0].body["tool_choice"] == {
        "type": "function",
        "function": {"name": "HassTurnOn"},
    }


async def test_text_dialect_gets_a_grammar_then_free_decoding(harness: Harness) -> None:
    """The grammar imposes the format the prompt describes (ReAct), then frees it."""
    harness.server.reply_text(
        'Thought: turn it on\nAction: HassTurnOn\nAction Input: {"name": "kitchen"}'
    )
    harness.server.reply_text("Thought: I can answer now.\nFinal Answer: It is on.")
    assert (
        await run(
            harness,
            tool_format="react",
            tool_choice="required_first",
            constraints=("tool_choice", "grammar", "json_schema"),
        )
        == "It is on."
    )
    first, second = harness.server.requests
    assert '"Action: "' in first.body["grammar"]
    assert "<tool_call>" not in first.body["grammar"]
    assert "Action:" in first.body["messages"][0]["content"]
    assert "tools" not in first.body
    assert "tool_choice" not in first.body
    assert "grammar" not in second.body
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]


async def test_format_without_a_frame_gets_hermes_and_is_read_so(
    harness: Harness,
) -> None:
    """Pythonic has no grammar frame: the hermes frame stands in and is read."""
    harness.server.reply_text(f"<tool_call>{CALL_TEXT}</tool_call>")
    harness.server.reply_text("The kitchen light is on.")
    spoken = await run(harness, tool_format="pythonic", **GRAMMAR_FIRST)
    assert spoken == "The kitchen light is on."
    assert '"<tool_call>"' in harness.server.requests[0].body["grammar"]
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]


async def test_native_without_tool_choice_forces_the_call_by_schema(
    harness: Harness,
) -> None:
    """Ollama ignores tool_choice but honours a schema: the call comes as text."""
    harness.server.reply_text(CALL_TEXT)
    harness.server.reply_text("The kitchen light is on.")
    spoken = await run(
        harness, tool_choice="required_first", constraints=("json_schema",)
    )
    assert spoken == "The kitchen light is on."
    first, second = harness.server.requests
    assert first.body["response_format"]["type"] == "json_schema"
    assert "tool_choice" not in first.body
    assert [t["function"]["name"] for t in first.body["tools"]] == [
        t["function"]["name"] for t in second.body["tools"]
    ]
    assert "response_format" not in second.body
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]


async def test_a_thinking_model_may_reason_before_a_grammar_call(
    harness: Harness,
) -> None:
    """The grammar lets reasoning through; it is neither spoken nor a call."""
    harness.server.reply_text(
        f"<think>\nThe user wants light.\n</think>\n\n<tool_call>{CALL_TEXT}</tool_call>"
    )
    harness.server.reply_text("<think></think>\n\nThe kitchen light is on.")
    spoken = await run(harness, tool_format="hermes", **GRAMMAR_FIRST)
    assert spoken == "The kitchen light is on."
    assert '"<think>"' in harness.server.requests[0].body["grammar"]
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]


async def test_strict_calls_json_schema_answer_is_unwrapped(harness: Harness) -> None:
    harness.server.reply_text(CALL_TEXT)
    harness.server.reply_text(json.dumps({"answer": "It is on."}))
    assert (
        await run(
            harness,
            tool_format="hermes",
            strict_calls=True,
            constraints=("json_schema",),
        )
        == "It is on."
    )
    for request in harness.server.requests:
        schema = request.body["response_format"]["json_schema"]["schema"]
        assert schema["anyOf"][0]["required"] == ["answer"]


async def test_a_refused_constraint_falls_back_once_and_is_remembered(
    harness: Harness,
) -> None:
    harness.server.reply_error(400, message="Unknown field: grammar")
    harness.server.reply_text(f"<tool_call>{CALL_TEXT}</tool_call>")
    harness.server.reply_text("On.")
    assert (
        await run(
            harness,
            tool_format="hermes",
            tool_choice="required",
            constraints=("grammar",),
        )
        == "On."
    )
    refused, retry, answer = harness.server.requests
    assert "grammar" in refused.body
    assert "grammar" not in retry.body
    assert "grammar" not in answer.body  # not tried again in this turn
    assert harness.state.refused == {"grammar"}
    assert harness.state.tool_role  # a separate fact, untouched
    assert harness.state.warned == {
        "The server refused the grammar constraint; Toolbelt sends requests"
        " without it from now on"
    }
    harness.server.reply_text("Still on.")
    assert await run(harness, tool_format="hermes", constraints=("grammar",)) == (
        "Still on."
    )
    assert "grammar" not in harness.server.requests[-1].body  # nor in later turns


async def test_constraint_and_tool_role_stay_separate_facts(harness: Harness) -> None:
    """A 400 that only fallback mode cures is the tool role, not the constraint."""
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_error(400, message="Unsupported role: tool")
    harness.server.reply_error(400, message="Unsupported role: tool")
    harness.server.reply_text("On.")
    await run(harness, tool_choice="required", constraints=("tool_choice",))
    _first, constrained, bare, fallback = harness.server.requests
    assert constrained.body["tool_choice"] == "required"
    assert "tool_choice" not in bare.body
    assert bare.messages[-1]["role"] == "tool"
    assert fallback.messages[-1]["role"] == "user"
    assert harness.state.tool_role is False
    assert harness.state.refused == set()


async def test_unknown_tool_name_warns_and_decodes_freely(harness: Harness) -> None:
    harness.server.reply_text("Hello.")
    assert (
        await run(harness, tool_choice="Nope", constraints=("tool_choice",)) == "Hello."
    )
    assert "tool_choice" not in harness.server.requests[0].body
    (warning,) = harness.state.warned
    assert "names no tool" in warning
