"""NVIDIA Nemotron ``<TOOLCALL>[..]</TOOLCALL>``.

Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (Nemotron-Nano-v2)
and vllm-project/vllm tests/tool_parsers/test_nemotron_json_tool_parser.py;
names renamed to the corpus catalog, wire format kept. Nemotron-3 writes the
Qwen3-Coder XML format, covered by the ``qwen3_coder_xml`` dialect.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import calls, expect, parse, parse_auto, stream, ws

ENGINE_CASES = [
    # llama.cpp: forced-open thinking then a call
    (
        'I\'m\nthinking\n</think>\n<TOOLCALL>[{"name": "HassSetVolume", "arguments": '
        '{"volume_level": 1}}]</TOOLCALL>',
        expect(("HassSetVolume", {"volume_level": 1})),
        "",
        "I'm\nthinking",
    ),
    # llama.cpp: content after the call
    (
        '<TOOLCALL>[{"name": "HassSetVolume", "arguments": {"volume_level": 1}}]</TOOLCALL>'
        "Hello, world!\nWhat's up?",
        expect(("HassSetVolume", {"volume_level": 1})),
        "Hello, world!\nWhat's up?",
        "",
    ),
    # vLLM: content before, two arguments
    (
        'Let me check that.<TOOLCALL>[{"name": "HassLightSet", '
        '"arguments": {"area": "Tokyo", "color": "red"}}]</TOOLCALL>',
        expect(("HassLightSet", {"area": "Tokyo", "color": "red"})),
        "Let me check that.",
        "",
    ),
    # vLLM: a single object instead of a list
    (
        '<TOOLCALL>{"name": "memory_search", "arguments": {"query": "vllm"}}</TOOLCALL>',
        expect(("memory_search", {"query": "vllm"})),
        "",
        "",
    ),
    # vLLM: arguments given as a JSON string are decoded once
    (
        '<TOOLCALL>[{"name": "web_search", "arguments": "{\\"query\\": \\"select 1\\"}"}]</TOOLCALL>',
        expect(("web_search", {"query": "select 1"})),
        "",
        "",
    ),
    # vLLM: nested arguments and two calls
    (
        '<TOOLCALL>[{"name": "memory_search", "arguments": {"query": "rain", '
        '"filters": {"city": "Tokyo", "items": [{"name": "rain", "value": true}]}}}, '
        '{"name": "GetDateTime", "arguments": {}}]</TOOLCALL>',
        expect(
            (
                "memory_search",
                {
                    "query": "rain",
                    "filters": {
                        "city": "Tokyo",
                        "items": [{"name": "rain", "value": True}],
                    },
                },
            ),
            ("GetDateTime", {}),
        ),
        "",
        "",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content", "reasoning"), ENGINE_CASES)
def test_engine_cases(raw, expected, content, reasoning):
    for result in (parse("nemotron", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)
        assert ws(result.reasoning) == ws(reasoning)


def test_think_block_is_reasoning_not_content():
    """vLLM keeps <think> as content; we never show reasoning."""
    raw = (
        "<think>\nI need the weather for Tokyo.\n</think>\n"
        '<TOOLCALL>[{"name": "HassGetWeather", "arguments": {"name": "Tokyo"}}]</TOOLCALL>'
    )
    result = parse("nemotron", raw)
    assert calls(result) == expect(("HassGetWeather", {"name": "Tokyo"}))
    assert result.content == ""
    assert result.reasoning == "I need the weather for Tokyo."


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_streaming_holds_on_the_tag(size):
    raw = 'Let me check.<TOOLCALL>[{"name": "GetDateTime", "arguments": {}}]</TOOLCALL>'
    released, holding = stream("nemotron", raw, size=size)
    assert holding
    assert released == "Let me check."
