"""ReplyReader: one hop's reply, what is spoken as it streams and what it means.

The reader is driven here with the deltas a backend yields (whole native calls
on the closing ``Finish``); the loop tests drive it through a real HTTP server.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
import json
from typing import Any

import pytest

from custom_components.toolbelt.backend.base import (
    CompletionRequest,
    Delta,
    Finish,
    ReasoningDelta,
    TextDelta,
)
from custom_components.toolbelt.backend.errors import BackendConnectionError
from custom_components.toolbelt.loop.events import ReasoningOut, TextOut
from custom_components.toolbelt.loop.format_choice import choose_format
from custom_components.toolbelt.loop.reply_reader import ReplyReader
from custom_components.toolbelt.loop.tool_choice import HopConstraint
from custom_components.toolbelt.toolcalls import Catalog
from custom_components.toolbelt.toolcalls.prompting.constraint import Shape

from .conftest import TOOLS, hermes

CATALOG = Catalog.from_openai(TOOLS)
KITCHEN = {"name": "kitchen"}
GRAMMAR = HopConstraint(
    kind="grammar", shape=Shape.ANY_CALL, grammar="root ::= call", frame="hermes"
)


async def _deltas(
    *pieces: str, calls: Sequence[dict[str, Any]] = (), fail: bool = False
) -> AsyncGenerator[Delta]:
    for piece in pieces:
        yield TextDelta(piece)
    if fail:
        raise BackendConnectionError("Test server", detail="the stream broke")
    yield Finish("tool_calls" if calls else "stop", None, tuple(calls))


def _request(**constraint: Any) -> CompletionRequest:
    return CompletionRequest(model="test-model", messages=[], **constraint)


def _reader(
    tool_format: str, constraint: HopConstraint | None = None, **options: Any
) -> tuple[ReplyReader, list[str]]:
    warnings: list[str] = []
    choice = choose_format(tool_format, "test-model", has_tools=True)
    reader = ReplyReader(
        choice, CATALOG, constraint, warn_once=warnings.append, **options
    )
    return reader, warnings


async def _spoken(
    reader: ReplyReader, request: CompletionRequest, deltas: AsyncGenerator[Delta]
) -> str:
    events = [event async for event in reader.read(request, deltas)]
    assert all(isinstance(e, TextOut | ReasoningOut) for e in events)
    return "".join(e.text for e in events if isinstance(e, TextOut))


async def test_a_native_reply_with_a_leaked_text_call_runs_it_and_never_says_it() -> (
    None
):
    reader, warnings = _reader("native")
    call = hermes(("HassTurnOn", KITCHEN))

    spoken = await _spoken(
        reader, _request(), _deltas("Sure.\n", call[:7], call[7:30], call[30:])
    )

    assert spoken == "Sure.\n"
    assert reader.reply is not None
    assert [(c.name, c.arguments) for c in reader.reply.parse.calls] == [
        ("HassTurnOn", KITCHEN)
    ]
    assert reader.reply.parse.dialect == "hermes"
    assert warnings == [
        "The model answered in the hermes tool-call format although the agent is"
        " set to native; Toolbelt read it anyway"
    ]


async def test_whole_native_calls_come_first_and_the_text_beside_them_is_said() -> None:
    reader, warnings = _reader("auto")
    call = {
        "id": "call_7",
        "function": {"name": "HassTurnOn", "arguments": json.dumps(KITCHEN)},
    }

    spoken = await _spoken(reader, _request(), _deltas("One moment.", calls=[call]))

    assert spoken == "One moment."
    assert reader.reply is not None
    assert [(c.id, c.name, c.arguments) for c in reader.reply.parse.calls] == [
        ("call_7", "HassTurnOn", KITCHEN)
    ]
    assert reader.reply.parse.content == "One moment."
    assert warnings == []


async def test_a_constrained_hop_is_read_in_its_frame_and_says_no_markup() -> None:
    """A mistral agent whose hop a grammar framed in hermes: hermes reads it."""
    reader, warnings = _reader("mistral", GRAMMAR)
    request = _request(grammar=GRAMMAR.grammar)
    call = hermes(("HassTurnOn", KITCHEN))

    spoken = await _spoken(reader, request, _deltas(call[:9], call[9:]))

    assert spoken == ""
    assert reader.reading_dialect(request)[0] == "hermes"
    assert reader.reply is not None
    assert [(c.name, c.arguments) for c in reader.reply.parse.calls] == [
        ("HassTurnOn", KITCHEN)
    ]
    assert warnings == []


def test_a_hop_whose_constraint_was_dropped_is_read_in_the_agents_format() -> None:
    reader, _ = _reader("mistral", GRAMMAR)

    # The retry after the server refused the grammar carries none.
    assert reader.reading_dialect(_request())[0] == "mistral"


async def test_a_json_schema_hop_says_nothing_until_its_answer_is_whole() -> None:
    frame = {"type": "json_schema", "json_schema": {"name": "reply", "schema": {}}}
    constraint = HopConstraint(
        kind="json_schema", shape=Shape.ANSWER_OR_CALL, response_format=frame
    )
    reader, _ = _reader("hermes", constraint)

    spoken = await _spoken(
        reader,
        _request(response_format=frame),
        _deltas('{"answer": "The kitchen', ' light is on."}'),
    )

    assert spoken == ""
    assert reader.reply is not None
    assert reader.reply.parse.calls == []
    # Said as the turn's answer: the prose, never the JSON around it.
    assert reader.reply.rest == "The kitchen light is on."


async def test_final_text_shorter_than_the_stream_adds_nothing_to_what_was_said() -> (
    None
):
    """The stream let "Done " out; the final parse calls the reply "Done" and
    drops the markup that followed: nothing is repeated or contradicted."""
    reader, _ = _reader("mistral")

    spoken = await _spoken(reader, _request(), _deltas("Done [TOOL_CALLS", "]"))

    assert spoken == "Done "
    assert reader.reply is not None
    assert reader.reply.parse.content == "Done"
    assert (reader.reply.streamed, reader.reply.rest) == ("Done ", "")


async def test_a_held_tail_the_final_text_keeps_is_said_at_the_replys_end() -> None:
    """ "<" may open a call while the reply streams; the reply ends there, the
    final parse keeps it as words, so it is said after all."""
    reader, _ = _reader("hermes")

    spoken = await _spoken(
        reader, _request(), _deltas("<think>hm</think>", "Hello there", "<")
    )

    assert spoken == "Hello there<"
    assert reader.reply is not None
    assert reader.reply.parse.reasoning == "hm"
    assert reader.reply.rest == ""


async def test_a_reply_retried_after_a_broken_stream_is_not_said_twice() -> None:
    reader, _ = _reader("hermes")

    with pytest.raises(BackendConnectionError):
        await _spoken(
            reader, _request(), _deltas("The kitchen light ", "is", fail=True)
        )
    again = await _spoken(
        reader, _request(), _deltas("The kitchen light ", "is on now.")
    )

    assert reader.reply is not None
    assert again == " on now."
    assert reader.reply.rest == ""


async def test_reasoning_the_server_split_off_is_never_spoken() -> None:
    async def deltas() -> AsyncGenerator[Delta]:
        yield ReasoningDelta("The user wants light.")
        yield TextDelta("On it.")
        yield Finish("stop")

    reader, _ = _reader("hermes", opens_reasoning=True)
    events = [event async for event in reader.read(_request(), deltas())]

    assert events == [ReasoningOut("The user wants light."), TextOut("On it.")]


# vLLM's Qwen3 reasoning parser test ``tool_call_no_think_end`` (its tool renamed):
# the template opened the reasoning, and the call starts before any closer.
_NO_THINK_END = (
    "I need to turn on the light.\n\n<tool_call>\n<function=HassTurnOn>\n"
    "<parameter=name>\nkitchen\n</parameter>\n</function>\n</tool_call>"
)


@pytest.mark.parametrize(
    "reply",
    [
        _NO_THINK_END,
        # vLLM's DeepSeek V4 test_tool_call_start_implicitly_ends_reasoning.
        "Let me search.\n\n<｜DSML｜tool_calls>\n"
        '<｜DSML｜invoke name="HassTurnOn">\n'
        '<｜DSML｜parameter name="name" string="true">kitchen</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        # vLLM's Kimi K2.5 tool_call_during_think, the opener in the prompt.
        "I should turn on the light<|tool_calls_section_begin|><|tool_call_begin|>"
        'functions.HassTurnOn:0<|tool_call_argument_begin|>{"name": "kitchen"}'
        "<|tool_call_end|><|tool_calls_section_end|>",
    ],
    ids=["qwen3", "deepseek_v4", "kimi_k25"],
)
async def test_reasoning_a_call_ends_without_a_closer_is_never_said(
    reply: str,
) -> None:
    """Engines end template-opened reasoning where the call starts: the words
    before it are the model's thinking, never the answer."""
    reader, _ = _reader("auto", opens_reasoning=True)
    thought = reply.split("<", 1)[0].strip()

    spoken = await _spoken(reader, _request(), _deltas(*reply.partition("<")))

    assert reader.reply is not None
    assert [(c.name, c.arguments) for c in reader.reply.parse.calls] == [
        ("HassTurnOn", KITCHEN)
    ]
    assert spoken == ""
    assert reader.reply.parse.content == ""
    assert reader.reply.rest == ""
    assert reader.reply.parse.reasoning == thought


async def test_words_before_a_call_are_said_when_no_reasoning_was_opened() -> None:
    reader, _ = _reader("auto")

    await _spoken(reader, _request(), _deltas(_NO_THINK_END))

    assert reader.reply is not None
    assert reader.reply.parse.content == "I need to turn on the light."


async def test_words_after_the_closer_stay_the_answer_before_a_call() -> None:
    reader, _ = _reader("auto", opens_reasoning=True)
    reply = "Kitchen it is.</think>Turning it on.\n" + hermes(("HassTurnOn", KITCHEN))

    spoken = await _spoken(reader, _request(), _deltas(reply))

    assert reader.reply is not None
    assert reader.reply.parse.content == "Turning it on."
    assert reader.reply.parse.reasoning == "Kitchen it is."
    assert spoken == "Turning it on.\n"
