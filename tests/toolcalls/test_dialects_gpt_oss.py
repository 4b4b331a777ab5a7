"""GPT-OSS harmony messages: calls via ``to=functions.X``, analysis as reasoning.

Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (GPT-OSS and
LLM-jp-4.1 peg tests, legacy ``common_chat_parse`` tests), vllm-project/vllm
tests/tool_parsers/test_openai_tool_parser.py (rendered with openai_harmony)
and sgl-project/sglang test_gpt_oss_detector.py; names renamed to the corpus
catalog, wire format kept.
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

ANALYSIS = "<|channel|>analysis<|message|>I'm\nthinking<|end|>"


@pytest.mark.parametrize("case", corpus_cases("gpt_oss"), ids=lambda c: c["id"])
def test_dev_corpus(case):
    check_corpus_case("gpt_oss", case)


ENGINE_CASES = [
    # recipient in the role header
    (
        ' to=functions.HassTurnOn<|channel|>analysis<|message|>{"name": "a"}',
        expect(("HassTurnOn", {"name": "a"})),
        "",
        "",
    ),
    # recipient in the channel header
    (
        '<|channel|>analysis to=functions.HassTurnOn<|message|>{"name": "a"}',
        expect(("HassTurnOn", {"name": "a"})),
        "",
        "",
    ),
    (
        ' to=functions.HassTurnOn<|channel|>commentary <|constrain|>json<|message|>{"name": "a"}',
        expect(("HassTurnOn", {"name": "a"})),
        "",
        "",
    ),
    (
        '<|channel|>commentary to=functions.HassTurnOn<|message|>{"name": "a"}',
        expect(("HassTurnOn", {"name": "a"})),
        "",
        "",
    ),
    # analysis first, then the call
    (
        f"{ANALYSIS}<|start|>assistant to=functions.HassTurnOn<|channel|>analysis<|message|>"
        '{"name": "a"}',
        expect(("HassTurnOn", {"name": "a"})),
        "",
        "I'm\nthinking",
    ),
    # llama.cpp complex tool calling (commentary, constrain json)
    (
        "<|channel|>analysis<|message|>Thinking about the note...<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.send_notification <|constrain|>json"
        '<|message|>{"message": "if (part < railCount - 1) {", "title": "if (part < 4) {", '
        '"critical": false}',
        expect(
            (
                "send_notification",
                {
                    "message": "if (part < railCount - 1) {",
                    "title": "if (part < 4) {",
                    "critical": False,
                },
            )
        ),
        "",
        "Thinking about the note...",
    ),
    # commentary content then a call (legacy llama.cpp test)
    (
        f"{ANALYSIS}<|start|>assistant<|channel|>commentary<|message|>Hello, world!\nWhat's up?<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.HassTurnOn <|constrain|>json"
        '<|message|>{"name": "a"}',
        expect(("HassTurnOn", {"name": "a"})),
        "Hello, world!\nWhat's up?",
        "I'm\nthinking",
    ),
    # vLLM multiple tools, <|call|> terminators
    (
        "<|channel|>analysis<|message|>Need two tools.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.HassClimateGetTemperature <|constrain|>json<|message|>{"area": "Tokyo"}<|call|>'
        "<|start|>assistant<|channel|>commentary to=functions.GetDateTime <|constrain|>json"
        "<|message|>{}<|call|>",
        expect(("HassClimateGetTemperature", {"area": "Tokyo"}), ("GetDateTime", {})),
        "",
        "Need two tools.",
    ),
    # LLM-jp-4.1: spaces after special tokens, parallel calls separated by <|end|>
    (
        "<|channel|> analysis<|message|> I'm\nthinking<|end|>"
        "<|start|> assistant to=functions.HassTurnOn<|channel|> commentary <|constrain|>  json"
        '<|message|> {"name": "a"}<|end|>'
        "<|start|> assistant to=functions.HassTurnOn<|channel|> commentary <|constrain|>  json"
        '<|message|> {"name": "b"}',
        expect(("HassTurnOn", {"name": "a"}), ("HassTurnOn", {"name": "b"})),
        "",
        "I'm\nthinking",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content", "reasoning"), ENGINE_CASES)
def test_engine_cases(raw, expected, content, reasoning):
    for result in (parse("gpt_oss", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)
        assert ws(result.reasoning) == ws(reasoning)


@pytest.mark.parametrize(
    ("raw", "content", "reasoning"),
    [
        (
            "<|channel|>final<|message|>Hello, world!\nWhat's up?",
            "Hello, world!\nWhat's up?",
            "",
        ),
        ("<|channel|>commentary<|message|>Hello, world!", "Hello, world!", ""),
        (
            f"{ANALYSIS}<|start|>assistant<|channel|>final<|message|>Hello, world!",
            "Hello, world!",
            "I'm\nthinking",
        ),
        # llama.cpp edge case: "commentary to=assistant" before the reasoning
        (
            "<|channel|>commentary to=assistant<|channel|>analysis<|message|>I'm\nthinking<|end|>"
            "<|start|>assistant<|channel|>final<|message|>Hello, world!",
            "Hello, world!",
            "I'm\nthinking",
        ),
        # Structured output in the final channel stays content
        (
            "<|channel|>analysis<|message|>I need JSON<|end|><|start|>assistant<|channel|>final "
            '<|constrain|>json<|message|>{"amount": 123.45}',
            '{"amount": 123.45}',
            "I need JSON",
        ),
        # Unfinished analysis: reasoning only
        ("<|channel|>analysis<|message|>I'm\nthink", "", "I'm\nthink"),
    ],
)
def test_channels_split_content_and_reasoning(raw, content, reasoning):
    for result in (parse("gpt_oss", raw), parse_auto(raw)):
        assert result.calls == []
        assert ws(result.content) == ws(content)
        assert ws(result.reasoning) == ws(reasoning)


def test_final_text_after_a_call_is_kept():
    """vLLM keeps final-channel text after a call (SGLang drops it; corpus follows vLLM)."""
    raw = (
        "<|channel|>analysis<|message|>Reasoning...<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.HassTurnOn <|constrain|>json<|message|>"
        '{\n  "name": "a"\n}<|call|>'
        "<|start|>assistant<|channel|>final<|message|>This turns it on."
    )
    result = parse("gpt_oss", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "a"}))
    assert result.content == "This turns it on."
    assert result.end == raw.index("<|call|>") + len("<|call|>")


@pytest.mark.parametrize(
    "raw",
    [
        # llama.cpp: unsolicited built-in tools (recipient in role / channel header)
        "<|channel|>analysis<|message|>I will execute python<|end|>"
        "<|start|>assistant to=container.exec<|channel|>commentary<|message|>python3 -c 'print(1)'",
        "<|channel|>analysis<|message|>I will execute python<|end|>"
        '<|start|>assistant<|channel|>commentary to=python <|constrain|>code<|message|>print("hi")',
    ],
)
def test_builtin_tools_are_neither_called_nor_shown(raw):
    for result in (parse("gpt_oss", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.content == ""
        assert result.reasoning == "I will execute python"


def test_prose_mentioning_recipients_is_not_a_call():
    raw = "In harmony a call looks like to=functions.name followed by JSON."
    for result in (parse("gpt_oss", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.content == raw


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_streaming_never_shows_analysis_or_headers(size):
    raw = (
        f"{ANALYSIS}<|start|>assistant<|channel|>commentary to=functions.HassTurnOn <|constrain|>json"
        '<|message|>{"name": "a"}<|call|>'
    )
    released, holding = stream("gpt_oss", raw, size=size)
    assert holding
    assert released == ""
