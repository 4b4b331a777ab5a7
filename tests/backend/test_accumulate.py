"""ToolCallAccumulator joins fragments the way servers really send them."""

from __future__ import annotations

from custom_components.toolbelt.backend.accumulate import ToolCallAccumulator
from custom_components.toolbelt.backend.base import ToolCallDelta


def _acc(*deltas: ToolCallDelta) -> list[tuple[str | None, str, str]]:
    acc = ToolCallAccumulator()
    for delta in deltas:
        acc.add(delta)
    return [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in acc.calls()
    ]


def test_name_first_then_arguments_in_pieces_give_an_openai_tool_call() -> None:
    acc = ToolCallAccumulator()
    acc.add(ToolCallDelta(0, "call_1", "HassTurnOn", ""))
    acc.add(ToolCallDelta(0, None, None, '{"na'))
    acc.add(ToolCallDelta(0, None, None, 'me": "x"}'))
    # The shape the native parse reads as it is (no reshaping on the way).
    assert acc.calls() == [
        {
            "id": "call_1",
            "function": {"name": "HassTurnOn", "arguments": '{"name": "x"}'},
        }
    ]


def test_calls_come_out_in_index_order_even_when_interleaved() -> None:
    assert _acc(
        ToolCallDelta(1, "b", "Second", "{"),
        ToolCallDelta(0, "a", "First", "{"),
        ToolCallDelta(1, None, None, "}"),
        ToolCallDelta(0, None, None, "}"),
    ) == [("a", "First", "{}"), ("b", "Second", "{}")]


def test_repeated_name_and_id_are_not_doubled_but_split_name_is_joined() -> None:
    assert _acc(
        ToolCallDelta(0, "a", "HassTurnOn", '{"x":'),
        ToolCallDelta(0, "a", "HassTurnOn", "1}"),
        ToolCallDelta(1, None, "Hass", None),
        ToolCallDelta(1, None, "TurnOff", "{}"),
    ) == [("a", "HassTurnOn", '{"x":1}'), (None, "HassTurnOff", "{}")]


def test_missing_name_and_arguments_give_empty_strings() -> None:
    acc = ToolCallAccumulator()
    assert not acc
    acc.add(ToolCallDelta(0, None, None, None))
    assert len(acc) == 1
    assert acc.calls() == [{"id": None, "function": {"name": "", "arguments": ""}}]
