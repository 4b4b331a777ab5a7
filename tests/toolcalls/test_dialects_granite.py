"""IBM Granite calls: ``<|tool_call|>``, ``<tool_call> [..]``, granite-20b, Granite 4.

Cases adapted from vllm-project/vllm tests/tool_parsers/test_granite_tool_parser.py,
test_granite_20b_fc_tool_parser.py, ggml-org/llama.cpp tests/test-chat.cpp
(Granite 3.3) and nrl-ai/edgevox edgevox/llm/tool_parsers/detectors/granite.py
(Granite 4 Nano docstring); names renamed to the corpus catalog, wire format kept.
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


@pytest.mark.parametrize("case", corpus_cases("granite"), ids=lambda c: c["id"])
def test_dev_corpus(case):
    check_corpus_case("granite", case)


ENGINE_CASES = [
    # vLLM single_tool_call_output
    (
        '<|tool_call|> [{"name": "HassClimateGetTemperature", "arguments": {"area": "Tokyo"}}]',
        expect(("HassClimateGetTemperature", {"area": "Tokyo"})),
        "",
    ),
    # vLLM various_data_types_output (Granite 3.1 string prefix, multi-line)
    (
        '<tool_call> [{\n  "name": "memory_store",\n  "arguments": {\n    "content": "hello",\n'
        '    "pinned": true,\n    "expires": null,\n    "tags": ["a", "b", "c"],\n'
        '    "metadata": {"nested": "value"}\n  }\n}]',
        expect(
            (
                "memory_store",
                {
                    "content": "hello",
                    "pinned": True,
                    "expires": None,
                    "tags": ["a", "b", "c"],
                    "metadata": {"nested": "value"},
                },
            )
        ),
        "",
    ),
    # vLLM escaped_strings_output
    (
        '<tool_call> [{\n  "name": "send_notification",\n  "arguments": {\n'
        '    "message": "He said \\"hello\\"",\n    "title": "line1\\nline2",\n'
        '    "target": "emoji: 🎉"\n  }\n}]',
        expect(
            (
                "send_notification",
                {
                    "message": 'He said "hello"',
                    "title": "line1\nline2",
                    "target": "emoji: 🎉",
                },
            )
        ),
        "",
    ),
    # vLLM empty_arguments_output
    (
        '<|tool_call|> [{"name": "GetDateTime", "arguments": {}}]',
        expect(("GetDateTime", {})),
        "",
    ),
    # llama.cpp Granite 3.3: no space after the token
    (
        '<|tool_call|>[{"name": "HassTurnOn", "arguments": {"name": "desk lamp"}}]',
        expect(("HassTurnOn", {"name": "desk lamp"})),
        "",
    ),
    # vLLM granite-20b single and parallel <function_call>
    (
        '<function_call> {"name": "HassClimateGetTemperature", "arguments": {"area": "Tokyo"}}',
        expect(("HassClimateGetTemperature", {"area": "Tokyo"})),
        "",
    ),
    (
        '<function_call> {"name": "HassClimateGetTemperature", "arguments": {"area": "Tokyo"}}\n'
        '<function_call> {"name": "GetDateTime", "arguments": {}}',
        expect(("HassClimateGetTemperature", {"area": "Tokyo"}), ("GetDateTime", {})),
        "",
    ),
    # vLLM granite-20b surrounding_text_output
    (
        "Let me check the weather for you.\n"
        '<function_call> {"name": "HassGetWeather", "arguments": {"name": "Tokyo"}}',
        expect(("HassGetWeather", {"name": "Tokyo"})),
        "Let me check the weather for you.",
    ),
    # edgevox Granite 4 Nano: Python-dict syntax with a bare identifier
    (
        '<tool_call>\n{name: HassClimateGetTemperature, arguments: {"area": "Asia/Tokyo"}}',
        expect(("HassClimateGetTemperature", {"area": "Asia/Tokyo"})),
        "",
    ),
    # edgevox Granite 4 Nano: a Python call inside the tag
    (
        '<tool_call>HassClimateGetTemperature(area="Asia/Tokyo")</tool_call>',
        expect(("HassClimateGetTemperature", {"area": "Asia/Tokyo"})),
        "",
    ),
    # HTML-escaped tags from a server that escaped the special tokens
    (
        'Checking.\n&lt;tool_call&gt;[{"name": "HassTurnOff", "arguments": {"area": "garage"}}]'
        "&lt;/tool_call&gt;",
        expect(("HassTurnOff", {"area": "garage"})),
        "Checking.",
    ),
    (
        '&lt;|tool_call|&gt;[{"name": "GetDateTime", "arguments": {}}]',
        expect(("GetDateTime", {})),
        "",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content"), ENGINE_CASES)
def test_engine_cases(raw, expected, content):
    for result in (parse("granite", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)


def test_response_wrapper_and_reasoning_split():
    """llama.cpp Granite 3.3: <think> is reasoning, <response> tags are not content."""
    raw = "<think>I'm\nthinking</think><response>Hello, world!\nWhat's up?</response>"
    for result in (parse("granite", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.reasoning == "I'm\nthinking"
        assert result.content == "Hello, world!\nWhat's up?"


def test_call_after_reasoning():
    raw = '<think>I need the time</think><|tool_call|>[{"name": "GetDateTime", "arguments": {}}]'
    result = parse("granite", raw)
    assert calls(result) == expect(("GetDateTime", {}))
    assert result.reasoning == "I need the time"


def test_partial_list_keeps_complete_calls():
    raw = (
        '<|tool_call|>[{"name": "HassTurnOn", "arguments": {"name": "a"}}, '
        '{"name": "HassTurnOff", "arguments": {"na'
    )
    result = parse("granite", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "a"}))
    assert [r.reason for r in result.rejected] == ["call is truncated"]


@pytest.mark.parametrize("size", [1, 4, 1000])
@pytest.mark.parametrize(
    ("raw", "visible"),
    [
        (
            'Let me check.\n<|tool_call|> [{"name": "GetDateTime", "arguments": {}}]',
            "Let me check.\n",
        ),
        ('<function_call> {"name": "GetDateTime", "arguments": {}}', ""),
        ('Ok &lt;tool_call&gt;[{"name": "GetDateTime"}]', "Ok "),
    ],
)
def test_streaming_holds_on_markers(raw, visible, size):
    released, holding = stream("granite", raw, size=size)
    assert holding
    assert released == visible
