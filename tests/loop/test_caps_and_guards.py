"""Caps and guards: every call counted, device commands capped, repeats and bad
arguments answered with a result the model can act on."""

from __future__ import annotations

from tests.loop.conftest import TOOLS, Harness, hermes


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
