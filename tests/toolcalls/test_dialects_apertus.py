"""Apertus ``<|tools_prefix|>[{"fn": {args}}]<|tools_suffix|>``.

Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (Apertus-8B) and
vllm-project/vllm tests/tool_parsers/test_apertus_tool_parser.py; names
renamed to the corpus catalog, wire format kept.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import calls, expect, parse, parse_auto, stream, ws

ENGINE_CASES = [
    # llama.cpp: single call
    (
        '<|tools_prefix|>[{"HassSetVolume": {"volume_level": 1}}]<|tools_suffix|>',
        expect(("HassSetVolume", {"volume_level": 1})),
        "",
        "",
    ),
    # llama.cpp: reasoning, call and content after
    (
        "<|inner_prefix|>I'm\nthinking<|inner_suffix|>"
        '<|tools_prefix|>[{"HassSetVolume": {"volume_level": 1}}]<|tools_suffix|>'
        "Hello, world!\nWhat's up?",
        expect(("HassSetVolume", {"volume_level": 1})),
        "Hello, world!\nWhat's up?",
        "I'm\nthinking",
    ),
    # vLLM: text before, two arguments
    (
        "Let me check the weather for you. "
        '<|tools_prefix|>[{"HassLightSet": {"area": "San Francisco", "color": "red"}}]<|tools_suffix|>',
        expect(("HassLightSet", {"area": "San Francisco", "color": "red"})),
        "Let me check the weather for you.",
        "",
    ),
    # vLLM: two calls, nested arguments
    (
        '<|tools_prefix|>[{"HassGetWeather": {"name": "London"}}, '
        '{"memory_store": {"content": "x", "metadata": {"inner": "value"}, "tags": ["a", "b"]}}]'
        "<|tools_suffix|>",
        expect(
            ("HassGetWeather", {"name": "London"}),
            (
                "memory_store",
                {"content": "x", "metadata": {"inner": "value"}, "tags": ["a", "b"]},
            ),
        ),
        "",
        "",
    ),
    # vLLM: the suffix never comes
    (
        '<|tools_prefix|>[{"HassLightSet": {"area": "San Francisco", "color": "red"}}]',
        expect(("HassLightSet", {"area": "San Francisco", "color": "red"})),
        "",
        "",
    ),
    # vLLM test_incomplete_tool_call: the arguments are complete, the wrappers are not
    (
        '<|tools_prefix|>[{"HassGetWeather": {"name": "London"}',
        expect(("HassGetWeather", {"name": "London"})),
        "",
        "",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content", "reasoning"), ENGINE_CASES)
def test_engine_cases(raw, expected, content, reasoning):
    for result in (parse("apertus", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)
        assert ws(result.reasoning) == ws(reasoning)


def test_reasoning_only_reply():
    raw = "<|inner_prefix|>I'm\nthinking<|inner_suffix|>Hello, world!\nWhat's up?"
    for result in (parse("apertus", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.reasoning == "I'm\nthinking"
        assert result.content == "Hello, world!\nWhat's up?"


def test_cut_off_list_keeps_its_complete_calls():
    raw = '<|tools_prefix|>[{"HassTurnOn": {"name": "a"}}, {"HassTurnOff": {"na'
    result = parse("apertus", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "a"}))
    assert [r.reason for r in result.rejected] == ["call is truncated"]


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_streaming_holds_on_the_prefix(size):
    raw = 'Hi <|tools_prefix|>[{"GetDateTime": {}}]<|tools_suffix|> '
    released, holding = stream("apertus", raw, size=size)
    assert holding
    assert released == "Hi "
