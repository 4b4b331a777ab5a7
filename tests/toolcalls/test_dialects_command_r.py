"""Cohere Command-R7B/A ``<|START_ACTION|>`` calls and Command-R+ ``Action: ```json``.

Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (Command R7B,
Cohere2 MoE and Command-R+ peg tests) and vllm-project/vllm
tests/tool_parsers/test_cohere_command_tool_parser.py; names renamed to the
corpus catalog, wire format kept.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import (
    calls,
    check_corpus_case,
    corpus_cases,
    expect,
    parse,
    parse_auto,
    stream,
    ws,
)


@pytest.mark.parametrize("case", corpus_cases("command_r"), ids=lambda c: c["id"])
def test_dev_corpus(case):
    check_corpus_case("command_r", case)


def test_r7b_call_keeps_tool_call_id_and_reasoning():
    """llama.cpp R7B: tool_call_id "0" is kept as the call id."""
    raw = (
        "<|START_THINKING|>I'm\nthinking<|END_THINKING|>"
        "<|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "HassTurnOn", "parameters": {"name": "desk lamp"}}\n'
        "]<|END_ACTION|>"
    )
    for result in (parse("command_r", raw), parse_auto(raw)):
        assert calls(result) == expect(("HassTurnOn", {"name": "desk lamp"}))
        assert [c.id for c in result.calls] == ["0"]
        assert result.reasoning == "I'm\nthinking"
        assert result.content == ""


def test_parallel_calls_keep_their_ids():
    """vLLM cmd3-multiple_tool_calls."""
    raw = (
        "<|START_THINKING|>first I think about it<|END_THINKING|><|START_ACTION|>\n[\n"
        '    {"tool_call_id": "0", "tool_name": "web_search", "parameters": {"query": "query1"}},\n'
        '    {"tool_call_id": "1", "tool_name": "HassSetVolume", "parameters": {"volume_level": 42}}\n'
        "]\n<|END_ACTION|>"
    )
    for result in (parse("command_r", raw), parse_auto(raw)):
        assert calls(result) == expect(
            ("web_search", {"query": "query1"}), ("HassSetVolume", {"volume_level": 42})
        )
        assert [c.id for c in result.calls] == ["0", "1"]
        assert result.reasoning == "first I think about it"


def test_forced_open_thinking_cohere2_moe():
    """llama.cpp Cohere2 MoE: output starts inside the thinking block."""
    raw = (
        "I'm\nthinking<|END_THINKING|><|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "memory_store", "parameters": '
        '{"content": "x", "tags": ["buy milk", "walk dog"]}}\n]<|END_ACTION|>'
    )
    result = parse("command_r", raw)
    assert calls(result) == expect(
        ("memory_store", {"content": "x", "tags": ["buy milk", "walk dog"]})
    )
    assert result.reasoning == "I'm\nthinking"


@pytest.mark.parametrize(
    ("raw", "content", "reasoning"),
    [
        (
            "<|START_RESPONSE|>Hello, world!\nWhat's up?<|END_RESPONSE|>",
            "Hello, world!\nWhat's up?",
            "",
        ),
        (
            "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_RESPONSE|>Hello!<|END_RESPONSE|>",
            "Hello!",
            "I'm\nthinking",
        ),
        (
            "I'm\nthinking<|END_THINKING|><|START_TEXT|>Hello, world!<|END_TEXT|>",
            "Hello, world!",
            "I'm\nthinking",
        ),
        # vLLM cmd3-citations_no_tool_calls: citation markup removed, text kept
        (
            "<|START_THINKING|>This is a rainbow <co>emoji: 🌈</co: 0:[1]><|END_THINKING|>\n"
            "<|START_RESPONSE|>foo <co>bar</co: 0:[1,2],1:[3,4]><|END_RESPONSE|>",
            "foo bar",
            "This is a rainbow emoji: 🌈",
        ),
        # vLLM cmd3-reasoning_only
        (
            "<|START_THINKING|>just think, no response<|END_THINKING|>",
            "",
            "just think, no response",
        ),
    ],
)
def test_content_and_reasoning(raw, content, reasoning):
    for result in (parse("command_r", raw), parse_auto(raw)):
        assert result.calls == []
        assert ws(result.content) == ws(content)
        assert ws(result.reasoning) == ws(reasoning)


def test_r_plus_action_block():
    """llama.cpp Command-R+: ``Action:`` then a fenced JSON list."""
    raw = 'Action:\n```json\n[{"tool_name": "HassTurnOn", "parameters": {"name": "desk lamp"}}]\n```'
    for result in (parse("command_r", raw), parse_auto(raw)):
        assert calls(result) == expect(("HassTurnOn", {"name": "desk lamp"}))
        assert result.content == ""


def test_r_plus_directly_answer_is_not_a_call():
    raw = (
        "Plan: I will answer directly.\n"
        'Action: ```json\n[{"tool_name": "directly-answer", "parameters": {}}]\n```'
    )
    result = parse("command_r", raw)
    assert result.calls == []
    assert result.rejected == []
    assert result.content == "Plan: I will answer directly."


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_streaming_hides_thinking_and_holds_actions(size):
    raw = (
        "<|START_THINKING|>secret<|END_THINKING|><|START_ACTION|>"
        '[{"tool_call_id": "0", "tool_name": "GetDateTime", "parameters": {}}]<|END_ACTION|>'
    )
    released, holding = stream("command_r", raw, size=size)
    assert holding
    assert released == ""


def test_r_plus_action_fence_on_the_same_line():
    """ollama/ollama tools/tools_test.go: command-r-plus "Action: ```json" block."""
    raw = (
        'Action: ```json\n\t\t[\n\t\t    {\n\t\t        "tool_name": "HassClimateGetTemperature",\n'
        '\t\t        "parameters": {\n\t\t            "area": "San Francisco"\n\t\t        }\n'
        '\t\t    },\n\t\t    {\n\t\t        "tool_name": "HassClimateGetTemperature",\n'
        '\t\t        "parameters": {\n\t\t            "area": "Toronto"\n\t\t        }\n'
        "\t\t    }\n\t\t]\n\t\t```"
    )
    for result in (parse("command_r", raw), parse_auto(raw)):
        assert calls(result) == expect(
            ("HassClimateGetTemperature", {"area": "San Francisco"}),
            ("HassClimateGetTemperature", {"area": "Toronto"}),
        )
        assert result.content == ""
