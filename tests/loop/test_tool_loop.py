"""The tool loop against a real HTTP model server: caps, guards, formats, streaming."""

from __future__ import annotations

import json

import pytest

from custom_components.toolbelt.loop.events import CallsOut, HopStart, TextOut
from tests.loop.conftest import PAGE_TEXT, TOOLS, Harness

MARKUP = ("<tool_call", "</tool_call", "[TOOL_CALLS]", "Action:", "<think", '{"name"')


def hermes(*calls: tuple[str, dict]) -> str:
    return "\n".join(
        f"<tool_call>\n{json.dumps({'name': n, 'arguments': a})}\n</tool_call>"
        for n, a in calls
    )


async def test_total_cap_is_exact_twenty_run_twenty_first_refused(
    harness: Harness,
) -> None:
    areas = [f"room {i}" for i in range(21)]
    for chunk in (areas[:7], areas[7:14], areas[14:]):
        harness.server.reply_tool_calls(
            [
                {"name": "HassClimateGetTemperature", "arguments": {"area": a}}
                for a in chunk
            ]
        )
    harness.server.reply_text("Here are the temperatures.")

    turn = await harness.turn(max_device_commands=100)

    assert [args["area"] for _name, args in harness.house.log] == areas[:20]
    last = turn.results[-1]
    assert last.call.arguments == {"area": "room 20"}
    assert last.data.startswith("ERROR: LimitReached")
    assert turn.text == "Here are the temperatures."
    # After the cap the model is asked to answer without tools.
    assert harness.server.requests[-1].tools is None
    assert harness.server.requests[0].tools


async def test_four_device_commands_run_exactly_three(harness: Harness) -> None:
    names = ["kitchen", "porch", "hallway", "garage"]
    harness.server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": n}} for n in names]
    )
    harness.server.reply_text("Three lights are on; the garage was not changed.")

    turn = await harness.turn()

    assert harness.house.states == {"kitchen": "on", "porch": "on", "hallway": "on"}
    refused = turn.results[3]
    assert refused.call.arguments == {"name": "garage"}
    assert "device commands" in refused.data
    assert "not run" in refused.data
    tool_messages = [
        m for m in harness.server.requests[1].messages if m["role"] == "tool"
    ]
    assert len(tool_messages) == 4
    assert "LimitReached" in tool_messages[3]["content"]
    assert turn.text.startswith("Three lights")


async def test_namespaced_device_commands_count_too(harness: Harness) -> None:
    tools = [
        {
            "type": "function",
            "function": {**t["function"], "name": f"intent__{t['function']['name']}"},
        }
        for t in TOOLS
    ]
    harness.server.reply_tool_calls(
        [{"name": "intent__HassTurnOff", "arguments": {"name": n}} for n in "abcd"]
    )
    harness.server.reply_text("Done with three.")
    await harness.turn(tools=tools)
    assert len(harness.house.log) == 3


async def test_repeated_identical_call_is_not_rerun(harness: Harness) -> None:
    call = {"name": "HassTurnOn", "arguments": {"name": "kitchen"}}
    harness.server.reply_tool_calls([call])
    harness.server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}]
    )
    harness.server.reply_text("The kitchen light is on.")

    turn = await harness.turn()

    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]
    repeat = turn.results[1]
    assert repeat.data.startswith("NOTE: this exact call")
    assert '"success": true' in repeat.data


async def test_bad_argument_gets_readable_error_and_retry_succeeds(
    harness: Harness,
) -> None:
    harness.server.reply_tool_calls(
        [
            {
                "name": "HassSetPosition",
                "arguments": {"name": "blinds", "position": "half"},
            }
        ]
    )
    harness.server.reply_tool_calls(
        [{"name": "HassSetPosition", "arguments": {"name": "blinds", "position": 50}}]
    )
    harness.server.reply_text("The blinds are half open.")

    turn = await harness.turn()

    error = turn.results[0].data
    assert error.startswith("ERROR: ArgumentError: ")
    assert "position" in error
    assert harness.house.states == {"blinds": "50"}
    assert harness.server.requests[1].messages[-1]["content"] == error
    assert turn.text == "The blinds are half open."


async def test_tool_exception_is_fed_back_and_turn_goes_on(harness: Harness) -> None:
    tools = [
        *TOOLS,
        {
            "type": "function",
            "function": {
                "name": "Explode",
                "parameters": {"type": "object", "properties": {}},
            },
        },
    ]
    harness.server.reply_tool_calls([{"name": "Explode", "arguments": {}}])
    harness.server.reply_text("That tool is broken.")
    turn = await harness.turn(tools=tools)
    assert turn.results[0].data == "ERROR: RuntimeError: the tool broke"
    assert turn.text == "That tool is broken."


async def test_reads_run_concurrently_writes_in_order(harness: Harness) -> None:
    harness.house.delay = 0.2
    harness.server.reply_tool_calls(
        [
            {"name": "HassClimateGetTemperature", "arguments": {"area": "a"}},
            {"name": "HassClimateGetTemperature", "arguments": {"area": "b"}},
            {"name": "HassClimateGetTemperature", "arguments": {"area": "c"}},
        ]
    )
    harness.server.reply_tool_calls(
        [
            {"name": "HassTurnOn", "arguments": {"name": "first"}},
            {"name": "HassTurnOff", "arguments": {"name": "second"}},
        ]
    )
    harness.server.reply_text("Done.")
    turn = await harness.turn()
    # The three reads were in flight together (no timing bound, so no flakes).
    assert harness.house.max_active == 3
    assert [e.call.arguments for e in turn.results] == [
        {"area": "a"},
        {"area": "b"},
        {"area": "c"},
        {"name": "first"},
        {"name": "second"},
    ]
    assert [name for name, _ in harness.house.log[3:]] == ["HassTurnOn", "HassTurnOff"]


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


async def test_server_rejecting_tool_role_gets_fallback_messages(
    harness: Harness,
) -> None:
    """A 400 on the tool-role request is retried once in fallback mode."""
    harness.server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "k"}}]
    )
    harness.server.reply_error(400, message="Unsupported role: tool")
    harness.server.reply_text("The light is on.")
    assert (await harness.turn("k on")).text == "The light is on."
    assert harness.state.tool_role is False  # later turns start in fallback mode
    retry = harness.server.requests[2].messages
    assert all(m["role"] != "tool" and not m.get("tool_calls") for m in retry)
    assistant, results = retry[-2:]
    assert assistant == {
        "role": "assistant",
        "content": '[called HassTurnOn({"name": "k"})]',
    }
    assert results["role"] == "user"
    assert '"success": true' in results["content"]
    assert harness.house.log == [("HassTurnOn", {"name": "k"})]  # not run twice


# -- a busy server is not a broken one -------------------------------------------

TURN_ON = [{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}]


async def test_429_waits_as_asked_then_answers_and_keeps_the_tool_role(
    harness: Harness,
) -> None:
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_error(
        429, message="Too many requests", headers={"Retry-After": "0.2"}
    )
    harness.server.reply_text("The light is on.")

    events = (await harness.turn("kitchen on")).events

    assert "".join(e.text for e in events if isinstance(e, TextOut)) == (
        "The light is on."
    )
    assert harness.state.tool_role  # a busy server says nothing about the tool role
    first_try, retry = harness.server.requests[1:]
    assert retry.messages == first_try.messages
    assert retry.messages[-1]["role"] == "tool"
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]


@pytest.mark.parametrize(
    "headers",
    [{"Retry-After": "0.1"}, {}, {"Retry-After": "3600"}],
    ids=["busy-twice", "no-retry-after", "wait-beyond-timeout"],
)
async def test_429_that_will_not_clear_is_a_busy_error(
    harness: Harness, headers: dict[str, str]
) -> None:
    from custom_components.toolbelt.backend.errors import BackendBusyError

    harness.server.reply_tool_calls(TURN_ON)
    for _ in range(2):
        harness.server.reply_error(429, message="slow down", headers=headers)

    with pytest.raises(BackendBusyError) as err:
        await harness.turn("kitchen on")

    assert err.value.reason == "is busy right now; please try again in a moment"
    assert harness.state.tool_role
    # Retried once only when the wait it asked for fits in the request timeout.
    assert len(harness.server.requests) == (
        3 if headers == {"Retry-After": "0.1"} else 2
    )


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "the request exceeds the available context size, try increasing it"),
        (400, "This model's maximum context length is 8192 tokens."),
        (413, "Payload Too Large"),
        (500, "the request exceeds the available context size, try increasing it"),
    ],
    ids=["llama.cpp", "vllm", "413", "as-500"],
)
async def test_context_overflow_trims_the_largest_result_once(
    harness: Harness, status: int, message: str
) -> None:
    harness.server.reply_tool_calls(
        [
            {"name": "web_fetch", "arguments": {"url": "https://example.org/eclipse"}},
            {"name": "HassTurnOn", "arguments": {"name": "kitchen"}},
        ]
    )
    harness.server.reply_error(status, message=message)
    harness.server.reply_text("It crosses Spain.")

    events = (await harness.turn("read it")).events

    assert "".join(e.text for e in events if isinstance(e, TextOut)) == (
        "It crosses Spain."
    )
    assert harness.state.tool_role
    too_long, retry = harness.server.requests[1:]
    page, light = (m["content"] for m in retry.messages if m["role"] == "tool")
    assert len(too_long.messages[-2]["content"]) > 50_000
    assert page.startswith("The eclipse crosses Spain.")
    assert page.endswith(
        f"[Toolbelt cut this result from {len(PAGE_TEXT)} to 2000 characters "
        "to fit the model's context.]"
    )
    assert len(page) < 2200
    assert "kitchen" in light  # the short result is left whole


async def test_context_overflow_with_nothing_to_trim_is_spoken(
    harness: Harness,
) -> None:
    """The history alone is too long: no retry, a clear error for the user."""
    from custom_components.toolbelt.backend.errors import (
        BackendContextOverflowError,
    )

    harness.server.reply_error(400, message="prompt is too long: 9000 > 8192")
    with pytest.raises(BackendContextOverflowError) as err:
        await harness.turn("kitchen on")
    assert "context" in err.value.reason
    assert len(harness.server.requests) == 1


async def test_a_400_the_fallback_retry_does_not_cure_does_not_demote(
    harness: Harness,
) -> None:
    """Only a fallback retry that works proves the server refuses the tool role."""
    from custom_components.toolbelt.backend.errors import BackendBadRequestError

    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_error(400, message="Unknown field: foo")
    harness.server.reply_error(400, message="Unknown field: foo")

    with pytest.raises(BackendBadRequestError):
        await harness.turn("kitchen on")

    assert harness.state.tool_role
    tool_role, fallback = harness.server.requests[1:]
    assert tool_role.messages[-1]["role"] == "tool"
    assert all(m["role"] != "tool" for m in fallback.messages)


async def test_refused_call_counts_against_the_cap(harness: Harness) -> None:
    harness.server.reply_text(hermes(("HassTeleport", {"name": "kitchen"})))
    harness.server.reply_text("I cannot do that.")

    turn = await harness.turn(max_tool_calls=1)

    assert harness.house.log == []
    (refused,) = turn.results
    assert refused.text.startswith("ERROR: InvalidToolCall: unknown tool")
    # The refusal used the one call: the model is told and gets no tools.
    assert "NOTE: that was tool call 1 of 1" in refused.text
    assert harness.server.requests[1].tools is None
    assert turn.text == "I cannot do that."


async def test_template_thinking_model_holds_until_the_closer(
    harness: Harness,
) -> None:
    reply = "Let me think.\n</think>\nIt is on."
    harness.server.reply_text(reply, chunks=list(reply))

    turn = await harness.turn(model="deepseek-r1-distill-qwen-7b")

    assert turn.text == "It is on."
