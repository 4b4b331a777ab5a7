"""Gemma calls: ``tool_code`` fences, Gemma 4 ``<|tool_call>call:``, FunctionGemma.

Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (Gemma 4 template),
vllm-project/vllm tests/tool_parsers/test_gemma4_tool_parser.py,
test_gemma4_regex_and_bare_calls.py and test_functiongemma_tool_parser.py;
names renamed to the corpus catalog, wire format kept.
"""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls.registry import get_dialect
from tests.toolcalls.dialect_helpers import (
    calls,
    catalog,
    check_corpus_case,
    corpus_cases,
    expect,
    parse,
    parse_auto,
    stream,
    ws,
)

Q = '<|"|>'


@pytest.mark.parametrize("case", corpus_cases("gemma"), ids=lambda c: c["id"])
def test_dev_corpus(case):
    check_corpus_case("gemma", case)


ENGINE_CASES = [
    # llama.cpp Gemma 4: string argument
    (
        f"<|tool_call>call:HassGetWeather{{name:{Q}London{Q}}}<tool_call|>",
        expect(("HassGetWeather", {"name": "London"})),
        "",
    ),
    # llama.cpp Gemma 4: empty args
    ("<|tool_call>call:GetDateTime{}<tool_call|>", expect(("GetDateTime", {})), ""),
    # llama.cpp Gemma 4: content before the call
    (
        f"Hello, world!\nWhat's up?<|tool_call>call:HassGetWeather{{name:{Q}Paris{Q}}}<tool_call|>",
        expect(("HassGetWeather", {"name": "Paris"})),
        "Hello, world!\nWhat's up?",
    ),
    # llama.cpp Gemma 4: negative integer, decimal, scientific, booleans, null
    (
        "<|tool_call>call:HassSetVolume{volume_level:-7}<tool_call|>",
        expect(("HassSetVolume", {"volume_level": -7})),
        "",
    ),
    (
        "<|tool_call>call:HassClimateSetTemperature{temperature:3.14}<tool_call|>",
        expect(("HassClimateSetTemperature", {"temperature": 3.14})),
        "",
    ),
    (
        "<|tool_call>call:HassClimateSetTemperature{temperature:1.5e10}<tool_call|>",
        expect(("HassClimateSetTemperature", {"temperature": 1.5e10})),
        "",
    ),
    (
        f"<|tool_call>call:memory_store{{content:{Q}x{Q},pinned:true,expires:null}}<tool_call|>",
        expect(("memory_store", {"content": "x", "pinned": True, "expires": None})),
        "",
    ),
    # llama.cpp Gemma 4: arrays, nested dicts, empty containers
    (
        f"<|tool_call>call:memory_store{{content:{Q}x{Q},tags:[{Q}buy milk{Q},{Q}walk dog{Q}]}}"
        "<tool_call|>",
        expect(("memory_store", {"content": "x", "tags": ["buy milk", "walk dog"]})),
        "",
    ),
    (
        f"<|tool_call>call:memory_store{{content:{Q}x{Q},metadata:{{theme:{Q}dark{Q},count:3}}}}"
        "<tool_call|>",
        expect(
            (
                "memory_store",
                {"content": "x", "metadata": {"theme": "dark", "count": 3}},
            )
        ),
        "",
    ),
    (
        f"<|tool_call>call:memory_store{{content:{Q}x{Q},tags:[],metadata:{{}}}}<tool_call|>",
        expect(("memory_store", {"content": "x", "tags": [], "metadata": {}})),
        "",
    ),
    # vLLM: string-delimited dict keys, commas inside strings
    (
        f"<|tool_call>call:memory_store{{content:{Q}Paris, France{Q},metadata:{{{Q}3{Q}:{Q}new{Q}}}}}"
        "<tool_call|>",
        expect(
            ("memory_store", {"content": "Paris, France", "metadata": {"3": "new"}})
        ),
        "",
    ),
    # llama.cpp Gemma 4: parallel calls
    (
        f"<|tool_call>call:HassTurnOff{{area:{Q}kitchen{Q}}}<tool_call|>"
        f"<|tool_call>call:HassTurnOn{{area:{Q}hall{Q}}}<tool_call|>",
        expect(("HassTurnOff", {"area": "kitchen"}), ("HassTurnOn", {"area": "hall"})),
        "",
    ),
    # vLLM: <turn|> as the closer, and a stray colon after the opener
    (
        f"<|tool_call>call:web_search{{query:{Q}-batch run{Q}}}<turn|>",
        expect(("web_search", {"query": "-batch run"})),
        "",
    ),
    (
        f"<|tool_call>:call:web_search{{query:{Q}pytest{Q}}}",
        expect(("web_search", {"query": "pytest"})),
        "",
    ),
    # vLLM: bare call right after the thought channel (catalog name only)
    (
        "<|channel>thought\nI need to read the state.\n<channel|>"
        f"call:HassClimateGetTemperature{{area:{Q}office{Q}}}",
        expect(("HassClimateGetTemperature", {"area": "office"})),
        "",
    ),
    # vLLM: fragmented <call> tag
    (
        f"<call>HassGetWeather{{name:{Q}Paris{Q}}}",
        expect(("HassGetWeather", {"name": "Paris"})),
        "",
    ),
    # vLLM FunctionGemma: single, multiple arguments, text before, two calls
    (
        "<start_function_call>call:HassGetWeather{name:<escape>London<escape>}<end_function_call>",
        expect(("HassGetWeather", {"name": "London"})),
        "",
    ),
    (
        "Let me check the weather for you. <start_function_call>call:HassLightSet{"
        "area:<escape>San Francisco<escape>,color:<escape>red<escape>}<end_function_call>",
        expect(("HassLightSet", {"area": "San Francisco", "color": "red"})),
        "Let me check the weather for you.",
    ),
    (
        "<start_function_call>call:HassGetWeather{name:<escape>London<escape>}<end_function_call>"
        "<start_function_call>call:GetDateTime{}<end_function_call>",
        expect(("HassGetWeather", {"name": "London"}), ("GetDateTime", {})),
        "",
    ),
    # Gemma 3 tool_code with print(default_api...)
    (
        "```tool_code\nprint(default_api.HassTurnOn(name='desk lamp'))\n```",
        expect(("HassTurnOn", {"name": "desk lamp"})),
        "",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content"), ENGINE_CASES)
def test_engine_cases(raw, expected, content):
    for result in (parse("gemma", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)


@pytest.mark.parametrize("separator", [",", ", ", ",\n", " ,\n  "])
def test_comma_between_entries_of_one_block(separator):
    """mlx-lm reads every ``call:`` of a block: a comma between two entries
    does not drop the second call into the spoken text."""
    raw = (
        f"<|tool_call>call:HassTurnOn{{name:{Q}a{Q}}}{separator}"
        f"call:HassTurnOff{{name:{Q}b{Q}}}<tool_call|>"
    )
    for result in (parse("gemma", raw), parse_auto(raw)):
        assert calls(result) == expect(
            ("HassTurnOn", {"name": "a"}), ("HassTurnOff", {"name": "b"})
        )
        assert result.content == ""
        assert result.rejected == []


def test_values_are_typed_from_the_schema():
    """FunctionGemma quotes every value; the schema decides: integer vs string."""
    raw = (
        "<start_function_call>call:play_media{media_id:<escape>5123123<escape>,"
        "area:<escape>den<escape>}<end_function_call>"
        "<start_function_call>call:HassSetVolume{volume_level:<escape>42<escape>}"
        "<end_function_call>"
    )
    result = parse("gemma", raw)
    assert result.calls[0].arguments == {"media_id": "5123123", "area": "den"}
    assert result.calls[1].arguments == {"volume_level": 42}


@pytest.mark.parametrize(
    ("raw", "reasoning", "content"),
    [
        # llama.cpp Gemma 4 reasoning and content
        (
            "<|channel>thought\nI'm\nthinking<channel|>Hello, world!",
            "I'm\nthinking",
            "Hello, world!",
        ),
        # llama.cpp edge cases: stray channel tokens never reach the content
        (
            "<|channel>thought\n<channel|>Hello, world!\nWhat's up?<channel|>",
            "",
            "Hello, world!\nWhat's up?",
        ),
        ("<|channel><|channel>thought\n<channel|>Hello, world!", "", "Hello, world!"),
    ],
)
def test_reasoning_never_reaches_content(raw, reasoning, content):
    for result in (parse("gemma", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.reasoning == reasoning
        assert result.content == content


def test_call_after_reasoning():
    raw = (
        f"<|channel>thought\nI'm\nthinking<channel|><|tool_call>call:HassGetWeather{{name:{Q}Paris{Q}}}"
        "<tool_call|>"
    )
    result = parse("gemma", raw)
    assert calls(result) == expect(("HassGetWeather", {"name": "Paris"}))
    assert result.reasoning == "I'm\nthinking"
    assert result.content == ""


@pytest.mark.parametrize(
    "raw",
    [
        # Example code in a python fence is not a call
        "Here is how:\n```python\nHassTurnOn(name='kitchen light')\n```",
        # A bare call: in prose with an unknown name
        f"You could write call:do_something{{x:{Q}y{Q}}} in your template.",
        "Gemma 4 wraps calls in <|tool_call> tokens; I did not need one.",
        "Hello, how can I help you today?",
    ],
)
def test_prose_and_examples_are_not_calls(raw):
    for result in (parse("gemma", raw), parse_auto(raw)):
        assert result.calls == []


@pytest.mark.parametrize("size", [1, 3, 1000])
@pytest.mark.parametrize(
    ("raw", "visible"),
    [
        (
            f"Sure! <|tool_call>call:HassGetWeather{{name:{Q}Paris{Q}}}<tool_call|>",
            "Sure! ",
        ),
        ("Ok.\n```tool_code\nGetDateTime()\n```", "Ok.\n"),
        ("<start_function_call>call:GetDateTime{}<end_function_call>", ""),
        (
            "<|channel>thought\nsecret<channel|><|tool_call>call:GetDateTime{}<tool_call|>",
            "",
        ),
    ],
)
def test_streaming_holds_on_markers(raw, visible, size):
    released, holding = stream("gemma", raw, size=size)
    assert holding
    assert released == visible


def test_prompt_and_result_format():
    dialect = get_dialect("gemma")
    assert "```tool_code" in dialect.system_prompt(catalog())
    result = parse("gemma", "```tool_code\nGetDateTime()\n```")
    assert dialect.format_result(result.calls[0], {"time": "12:00"}).startswith(
        "```tool_output\n"
    )
