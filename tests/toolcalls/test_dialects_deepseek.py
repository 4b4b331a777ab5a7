"""DeepSeek R1/V3/V3.1 fullwidth tool tokens and V3.2/V4 DSML.

Cases adapted from vllm-project/vllm tests/tool_parsers/test_deepseekv3_tool_parser.py,
test_deepseekv31_tool_parser.py, ggml-org/llama.cpp tests/test-chat.cpp (DeepSeek
R1, V3.1, V3.2, V4) and sgl-project/sglang test_function_call_parser.py
(TestDeepSeekV32Detector); names renamed to the corpus catalog, wire format kept.
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

BEGIN = "<｜tool▁calls▁begin｜>"
CALL = "<｜tool▁call▁begin｜>"
SEP = "<｜tool▁sep｜>"
CALL_END = "<｜tool▁call▁end｜>"
END = "<｜tool▁calls▁end｜>"


@pytest.mark.parametrize("case", corpus_cases("deepseek"), ids=lambda c: c["id"])
def test_dev_corpus(case):
    check_corpus_case("deepseek", case)


ENGINE_CASES = [
    # vLLM V3 single_tool_call_output
    (
        f'{BEGIN}{CALL}function{SEP}HassLightSet\n```json\n{{"area": "Tokyo", "color": "red"}}\n'
        f"```{CALL_END}{END}",
        expect(("HassLightSet", {"area": "Tokyo", "color": "red"})),
        "",
    ),
    # vLLM V3 parallel_tool_calls_output
    (
        f'{BEGIN}{CALL}function{SEP}HassGetWeather\n```json\n{{"name": "Tokyo"}}\n```{CALL_END}'
        f'{CALL}function{SEP}web_search\n```json\n{{"query": "hotels in Tokyo"}}\n```{CALL_END}{END}',
        expect(
            ("HassGetWeather", {"name": "Tokyo"}),
            ("web_search", {"query": "hotels in Tokyo"}),
        ),
        "",
    ),
    # vLLM V3 surrounding_text_output and empty arguments
    (
        f"Let me check the weather for you.{BEGIN}{CALL}function{SEP}HassGetWeather\n```json\n"
        f'{{"name": "Paris"}}\n```{CALL_END}{END}',
        expect(("HassGetWeather", {"name": "Paris"})),
        "Let me check the weather for you.",
    ),
    (
        f"{BEGIN}{CALL}function{SEP}GetDateTime\n```json\n{{}}\n```{CALL_END}{END}",
        expect(("GetDateTime", {})),
        "",
    ),
    # llama.cpp R1 template: closing fence glued to the JSON
    (
        f'</think>{BEGIN}{CALL}function{SEP}HassTurnOn\n```json\n{{"name": "a"}}```{CALL_END}{END}',
        expect(("HassTurnOn", {"name": "a"})),
        "",
    ),
    # vLLM V3.1: content before, two calls, content after
    (
        f'some prefix text{BEGIN}{CALL}HassTurnOn{SEP}{{"name": "a"}}{CALL_END}'
        f'{CALL}HassTurnOff{SEP}{{"name": "b"}}{CALL_END}{END} some suffix text',
        expect(("HassTurnOn", {"name": "a"}), ("HassTurnOff", {"name": "b"})),
        "some prefix text some suffix text",
    ),
    # llama.cpp V3.1 with reasoning before (forced-open thinking)
    (
        f'REASONING</think>CONTENT{BEGIN}{CALL}HassGetWeather{SEP}{{"name": "Paris"}}{CALL_END}'
        f'{CALL}HassClimateGetTemperature{SEP}{{"area": "Paris"}}{CALL_END}{END}',
        expect(
            ("HassGetWeather", {"name": "Paris"}),
            ("HassClimateGetTemperature", {"area": "Paris"}),
        ),
        "CONTENT",
    ),
    # llama.cpp V3.2 DSML: string and non-string parameters
    (
        "Let me check the time</think>\n\n<｜DSML｜function_calls>\n"
        '<｜DSML｜invoke name="HassSetVolume">\n'
        '<｜DSML｜parameter name="area" string="true">Tokyo</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="volume_level" string="false">-14</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        expect(("HassSetVolume", {"area": "Tokyo", "volume_level": -14})),
        "",
    ),
    # llama.cpp V4 DSML (tool_calls block), array and object parameters
    (
        "<｜DSML｜tool_calls>\n"
        '<｜DSML｜invoke name="memory_store">\n'
        '<｜DSML｜parameter name="content" string="true">milk</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="tags" string="false">["buy milk","walk dog"]</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="metadata" string="false">{"theme":"dark","level":2}</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
        expect(
            (
                "memory_store",
                {
                    "content": "milk",
                    "tags": ["buy milk", "walk dog"],
                    "metadata": {"theme": "dark", "level": 2},
                },
            )
        ),
        "",
    ),
    # SGLang V3.2: JSON body inside invoke, text before
    (
        "I'll get it for you.\n\n<｜DSML｜function_calls>\n"
        '<｜DSML｜invoke name="web_search">\n{\n  "query": "WebNav benchmark",\n'
        '  "max_results": 10\n}\n</｜DSML｜invoke>\n</｜DSML｜function_calls>\n',
        expect(("web_search", {"query": "WebNav benchmark", "max_results": 10})),
        "I'll get it for you.",
    ),
    # ASCII look-alike tokens (server without the special tokens)
    (
        "<|tool_calls_begin|><|tool_call_begin|>function<|tool_sep|>HassTurnOn\n```json\n"
        '{"name": "a"}\n```<|tool_call_end|><|tool_calls_end|>',
        expect(("HassTurnOn", {"name": "a"})),
        "",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content"), ENGINE_CASES)
def test_engine_cases(raw, expected, content):
    for result in (parse("deepseek", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)


def test_reasoning_split_and_calls_in_reasoning_prefer_real_ones():
    """llama.cpp V3.1: a call written inside the reasoning is not dispatched when
    the real call follows the closing </think>."""
    raw = (
        f'REASONING{BEGIN}{CALL}HassTurnOn{SEP}{{"name": "fake"}}{CALL_END}{END}REASONING'
        f'</think>{BEGIN}{CALL}HassTurnOn{SEP}{{"name": "real"}}{CALL_END}{END}'
    )
    result = parse("deepseek", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "real"}))
    assert result.content == ""
    assert result.reasoning.startswith("REASONING")


def test_call_inside_reasoning_counts_when_alone():
    raw = f'REASONING{BEGIN}{CALL}HassTurnOn{SEP}{{"name": "a"}}{CALL_END}{END}'
    result = parse("deepseek", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "a"}))


@pytest.mark.parametrize("size", [1, 3, 1000])
@pytest.mark.parametrize(
    ("raw", "visible"),
    [
        (f'Sure.{BEGIN}{CALL}HassTurnOn{SEP}{{"name": "a"}}{CALL_END}{END}', "Sure."),
        (
            '<｜DSML｜function_calls>\n<｜DSML｜invoke name="GetDateTime">\n</｜DSML｜invoke>',
            "",
        ),
        (f"<think>secret</think>{BEGIN}{CALL}GetDateTime{SEP}{{}}{CALL_END}{END}", ""),
    ],
)
def test_streaming_holds_on_markers(raw, visible, size):
    released, holding = stream("deepseek", raw, size=size)
    assert holding
    assert released == visible


def test_a_dsml_block_naming_no_call_is_not_spoken():
    raw = "Sure.<｜DSML｜function_calls></｜DSML｜function_calls>"
    for result in (parse("deepseek", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.rejected == []
        assert result.content == "Sure."


def test_v41_spaced_dsml_cut_off_is_refused_not_spoken():
    """DeepSeek V4.1 (SGLang's deepseekv41 detector): a space after the token;
    a call cut off inside it is refused, never spoken."""
    raw = (
        'Checking.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name="HassTurnOn">\n'
        '<｜DSML｜ parameter name="name" string="true">lamp'
    )
    result = parse_auto(raw)
    assert result.calls == []
    assert result.rejected
    assert result.content == "Checking."


def test_v41_block_is_closed_by_its_own_spelling():
    raw = (
        '<｜DSML｜ calls>\n<｜DSML｜ invoke name="HassTurnOn">\n'
        '<｜DSML｜ parameter name="name" string="true">lamp</｜DSML｜ parameter>\n'
        "</｜DSML｜ invoke>\n</｜DSML｜ calls>\nDone."
    )
    result = parse("deepseek", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "lamp"}))
    assert result.content == "Done."


def _wrapped(key: str, value: str, more: str = "") -> str:
    return (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="HassTurnOn">\n'
        f'<｜DSML｜parameter name="{key}" string="false">{value}</｜DSML｜parameter>\n'
        f"{more}</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    )


def test_v32_arguments_wrapper_is_unwrapped():
    """vLLM's DeepSeek V3.2 parser: a lone ``arguments``/``input`` wrapper."""
    for key in ("arguments", "input"):
        result = parse("deepseek", _wrapped(key, '{"name": "lamp", "area": "hall"}'))
        assert calls(result) == expect(("HassTurnOn", {"name": "lamp", "area": "hall"}))


def test_v32_wrapper_is_kept_when_it_is_not_the_only_parameter_or_not_the_schema():
    two = _wrapped(
        "arguments",
        '{"area": "hall"}',
        '<｜DSML｜parameter name="name" string="true">lamp</｜DSML｜parameter>\n',
    )
    (call,) = parse("deepseek", two).calls
    assert call.arguments == {"name": "lamp", "arguments": '{"area": "hall"}'}
    # Keys that are not the tool's parameters: no unwrapping.
    (call,) = parse("deepseek", _wrapped("arguments", '{"colour": "red"}')).calls
    assert call.arguments == {"arguments": '{"colour": "red"}'}
