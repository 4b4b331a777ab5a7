"""Kimi K2 ``<|tool_call_begin|>functions.fn:0<|tool_call_argument_begin|>{..}``
and Kimi K3 XTML channels (engine cases in ``tests/fixtures/engine_families.jsonl``).

Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (Kimi-K2 and
Kimi-K2-Thinking peg tests), vllm-project/vllm
tests/tool_parsers/test_kimi_k2_tool_parser.py and sgl-project/sglang
test_function_call_parser.py (TestKimiK2Detector); names renamed to the corpus
catalog, wire format kept. Ids (``functions.fn:N``) must come back verbatim.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import calls, expect, parse, parse_auto, stream, ws

SB = "<|tool_calls_section_begin|>"
SE = "<|tool_calls_section_end|>"
TB = "<|tool_call_begin|>"
TE = "<|tool_call_end|>"
AB = "<|tool_call_argument_begin|>"


def _tool(call_id: str, args: str) -> str:
    return f"{TB}{call_id}{AB}{args}{TE}"


ENGINE_CASES = [
    # llama.cpp single call
    (
        f"{SB}{_tool('functions.HassSetVolume:0', '{"volume_level": 1}')}{SE}",
        expect(("HassSetVolume", {"volume_level": 1})),
        ["functions.HassSetVolume:0"],
        "",
        "",
    ),
    # llama.cpp reasoning then a call
    (
        f"<think>I'm thinking about this</think>{SB}{_tool('functions.GetDateTime:0', '{}')}{SE}",
        expect(("GetDateTime", {})),
        ["functions.GetDateTime:0"],
        "",
        "I'm thinking about this",
    ),
    # llama.cpp content before the call
    (
        f"Hello, world!\nWhat's up?{SB}{_tool('functions.HassTurnOn:0', '{"name": "a"}')}{SE}",
        expect(("HassTurnOn", {"name": "a"})),
        ["functions.HassTurnOn:0"],
        "Hello, world!\nWhat's up?",
        "",
    ),
    # llama.cpp three calls, counter increments
    (
        SB
        + _tool("functions.HassTurnOn:0", '{"name": "a"}')
        + _tool("functions.web_search:1", '{"query": "print(1)"}')
        + _tool("functions.send_notification:2", '{"message": "<p>test</p>"}')
        + SE,
        expect(
            ("HassTurnOn", {"name": "a"}),
            ("web_search", {"query": "print(1)"}),
            ("send_notification", {"message": "<p>test</p>"}),
        ),
        [
            "functions.HassTurnOn:0",
            "functions.web_search:1",
            "functions.send_notification:2",
        ],
        "",
        "",
    ),
    # llama.cpp Kimi-K2-Thinking: calls inside the thinking block, no closer
    (
        "<think>I need to call two functions"
        + SB
        + _tool("functions.HassTurnOn:0", '{"name": "a"}')
        + _tool("functions.GetDateTime:1", "{}")
        + SE,
        expect(("HassTurnOn", {"name": "a"}), ("GetDateTime", {})),
        ["functions.HassTurnOn:0", "functions.GetDateTime:1"],
        "",
        "I need to call two functions",
    ),
    # llama.cpp: inside thinking, without section or end tokens
    (
        f'<think>I need to call two functions{TB}functions.HassTurnOn:0{AB}{{"name": "a"}}'
        f"{TB}functions.GetDateTime:1{AB}{{}}",
        expect(("HassTurnOn", {"name": "a"}), ("GetDateTime", {})),
        ["functions.HassTurnOn:0", "functions.GetDateTime:1"],
        "",
        "I need to call two functions",
    ),
    # llama.cpp "real life" call without any end tokens
    (
        f'{TB}functions.web_fetch:0{AB}{{"url": "http://example.com", "max_chars": 10}}',
        expect(("web_fetch", {"url": "http://example.com", "max_chars": 10})),
        ["functions.web_fetch:0"],
        "",
        "",
    ),
    # vLLM: multi-line JSON, trailing space after the id, no "functions." prefix
    (
        f'Formatted. {SB}{TB}functions.HassSetVolume:0 {AB}{{\n  "area": "test",\n  "volume_level": 123\n}}{TE}{SE}',
        expect(("HassSetVolume", {"area": "test", "volume_level": 123})),
        ["functions.HassSetVolume:0"],
        "Formatted.",
        "",
    ),
    (
        f"No prefix. {SB}{_tool('HassGetWeather:0', '{"name": "Tokyo"}')}{SE}",
        expect(("HassGetWeather", {"name": "Tokyo"})),
        ["HassGetWeather:0"],
        "No prefix.",
        "",
    ),
    # vLLM: a bare counter id; the tool is inferred from the argument keys
    (
        f"Let me check. {SB}{_tool('0', '{"url": "http://example.com", "max_chars": 5}')}{SE}",
        expect(("web_fetch", {"url": "http://example.com", "max_chars": 5})),
        ["0"],
        "Let me check.",
        "",
    ),
]


@pytest.mark.parametrize(
    ("raw", "expected", "ids", "content", "reasoning"), ENGINE_CASES
)
def test_engine_cases(raw, expected, ids, content, reasoning):
    for result in (parse("kimi_k2", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert [c.id for c in result.calls] == ids
        assert ws(result.content) == ws(content)
        assert ws(result.reasoning) == ws(reasoning)


def test_ambiguous_bare_counter_is_refused():
    """vLLM: a bare counter whose arguments fit several tools names no tool."""
    result = parse("kimi_k2", f"{SB}{_tool('0', '{"name": "x"}')}{SE}")
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["the call names no tool"]


def test_a_bad_call_does_not_drop_its_sibling():
    raw = (
        SB
        + _tool("functions.HassTurnOn:0", '{"name": "a"')
        + _tool("functions.GetDateTime:1", "{}")
        + SE
    )
    result = parse("kimi_k2", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "a"}), ("GetDateTime", {}))


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_streaming_holds_on_the_section(size):
    raw = f"I'll check. {SB}{_tool('functions.GetDateTime:0', '{}')}{SE}"
    released, holding = stream("kimi_k2", raw, size=size)
    assert holding
    assert released == "I'll check. "


# Kimi K3 XTML
RESPONSE = "<|open|>response<|sep|>{}<|close|>response<|sep|>"
TOOLS = "<|open|>tools<|sep|>{}<|close|>tools<|sep|>"
ON_CALL = (
    '<|open|>call tool="HassTurnOn" index="1"<|sep|>'
    '<|open|>argument key="name" type="string"<|sep|>kitchen light'
    "<|close|>argument<|sep|><|close|>call<|sep|>"
)


def test_k3_call_the_reasoning_only_mentions_leaves_the_answer():
    raw = (
        '<|open|>think<|sep|>I could use <|open|>call tool="HassTurnOn"<|sep|> '
        "but the light is on.<|close|>think<|sep|>" + RESPONSE.format("It is on.")
    )
    for result in (parse("kimi_k2", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.rejected == []
        assert ws(result.content) == "It is on."


def test_k3_spaces_inside_the_markers_are_read():
    """vLLM tolerates ``<|open|> tools <|sep|>`` (detokenizer spacing)."""
    raw = ON_CALL.replace("<|open|>", "<|open|> ").replace("<|close|>", "<|close|> ")
    result = parse_auto(f"<|open|> tools <|sep|>{raw}<|close|> tools <|sep|>")
    assert calls(result) == expect(("HassTurnOn", {"name": "kitchen light"}))
    assert result.content == ""


def test_k3_a_call_without_a_tool_is_refused():
    raw = TOOLS.format('<|open|>call index="1"<|sep|><|close|>call<|sep|>')
    result = parse("kimi_k2", raw)
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["the call names no tool"]
    assert result.content == ""


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_k3_streaming_shows_only_the_answer(size):
    raw = RESPONSE.format("Turning it on.") + TOOLS.format(ON_CALL)
    released, holding = stream("kimi_k2", raw, size=size)
    assert holding
    assert released == "Turning it on."


@pytest.mark.parametrize("size", [1, 4])
def test_k3_a_reply_ending_on_a_channel_token_does_not_speak_it(size):
    released, holding = stream("kimi_k2", "It is on.<|open|>", size=size)
    assert not holding
    assert released == "It is on."
