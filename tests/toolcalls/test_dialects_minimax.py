"""MiniMax M3 and M2 invokes and M1 ``<tool_calls>`` JSON lines.

M3 cases adapted from vllm-project/vllm tests/tool_parsers/
test_minimax_m3_tool_parser.py (more in tests/fixtures/engine_families.jsonl).
Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (MiniMax-M2),
sgl-project/sglang test/registered/function_call/test_minimax_m2_detector.py
and vllm-project/vllm tests/tool_parsers/test_minimax_tool_parser.py (M1);
names renamed to the corpus catalog, wire format kept.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import calls, expect, parse, parse_auto, stream, ws

ENGINE_CASES = [
    # llama.cpp M2: forced-open thinking, no arguments
    (
        "Let's call a tool:\n</think>\n\n<minimax:tool_call>\n"
        '<invoke name="GetDateTime">\n</invoke>\n</minimax:tool_call>',
        expect(("GetDateTime", {})),
        "",
        "Let's call a tool:",
    ),
    # llama.cpp M2: integer typed from the schema
    (
        '\n</think>\n\n<minimax:tool_call>\n<invoke name="HassSetVolume">\n<parameter '
        'name="volume_level">1</parameter>\n</invoke>\n</minimax:tool_call>',
        expect(("HassSetVolume", {"volume_level": 1})),
        "",
        "",
    ),
    # SGLang: text before and after a complete block
    (
        'Here is some text.<minimax:tool_call><invoke name="memory_search"><parameter '
        'name="query">porch</parameter></invoke></minimax:tool_call>More text after.',
        expect(("memory_search", {"query": "porch"})),
        "Here is some text. More text after.",
        "",
    ),
    # SGLang: a nullable string keeps "hi", an explicit null is None
    (
        '<minimax:tool_call><invoke name="memory_store"><parameter name="content">x</parameter>'
        '<parameter name="expires">hi</parameter></invoke></minimax:tool_call>',
        expect(("memory_store", {"content": "x", "expires": "hi"})),
        "",
        "",
    ),
    (
        '<minimax:tool_call><invoke name="memory_store"><parameter name="content">x</parameter>'
        '<parameter name="expires">null</parameter></invoke></minimax:tool_call>',
        expect(("memory_store", {"content": "x", "expires": None})),
        "",
        "",
    ),
    # SGLang: a value that contains "</parameter>" and one with HTML
    (
        '<minimax:tool_call><invoke name="send_notification"><parameter name="message">This '
        'text contains </parameter> in it</parameter><parameter name="title"><div>Hello</div>'
        "</parameter></invoke></minimax:tool_call>",
        expect(
            (
                "send_notification",
                {
                    "message": "This text contains </parameter> in it",
                    "title": "<div>Hello</div>",
                },
            )
        ),
        "",
        "",
    ),
    # SGLang: object and array values
    (
        '<minimax:tool_call><invoke name="memory_store"><parameter name="content">x</parameter>'
        '<parameter name="metadata">{"key": "value"}</parameter>'
        '<parameter name="tags">["1", "2", "four"]</parameter></invoke></minimax:tool_call>',
        expect(
            (
                "memory_store",
                {
                    "content": "x",
                    "metadata": {"key": "value"},
                    "tags": ["1", "2", "four"],
                },
            )
        ),
        "",
        "",
    ),
    # Two invokes in one block
    (
        '<minimax:tool_call>\n<invoke name="HassTurnOff">\n<parameter name="area">kitchen</parameter>\n'
        '</invoke>\n<invoke name="HassTurnOn">\n<parameter name="area">hall</parameter>\n</invoke>\n'
        "</minimax:tool_call>",
        expect(("HassTurnOff", {"area": "kitchen"}), ("HassTurnOn", {"area": "hall"})),
        "",
        "",
    ),
    # SGLang: the block closer is missing but the invoke is complete
    (
        '[Pasted ~4 lines]<minimax:tool_call><invoke name="memory_search"><parameter '
        'name="query">false</parameter></invoke>',
        expect(("memory_search", {"query": "false"})),
        "[Pasted ~4 lines]",
        "",
    ),
    # vLLM M1: one and two JSON lines, content before
    (
        '<tool_calls>\n{"name": "HassClimateGetTemperature", "arguments": {"area": "Dallas"}}\n'
        "</tool_calls>",
        expect(("HassClimateGetTemperature", {"area": "Dallas"})),
        "",
        "",
    ),
    (
        "I'll help you check the temperature. <tool_calls>\n"
        '{"name": "HassClimateGetTemperature", "arguments": {"area": "Dallas"}}\n'
        '{"name": "HassClimateGetTemperature", "arguments": {"area": "Orlando"}}\n'
        "</tool_calls>",
        expect(
            ("HassClimateGetTemperature", {"area": "Dallas"}),
            ("HassClimateGetTemperature", {"area": "Orlando"}),
        ),
        "I'll help you check the temperature.",
        "",
    ),
    # vLLM M1: incomplete closing tag
    (
        '<tool_calls>\n{"name": "HassClimateGetTemperature", "arguments": {"area": "Boston"}}',
        expect(("HassClimateGetTemperature", {"area": "Boston"})),
        "",
        "",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content", "reasoning"), ENGINE_CASES)
def test_engine_cases(raw, expected, content, reasoning):
    for result in (parse("minimax", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)
        assert ws(result.reasoning) == ws(reasoning)


def test_string_schema_keeps_digits_as_text():
    raw = (
        '<minimax:tool_call><invoke name="play_media"><parameter name="media_id">5123123'
        "</parameter></invoke></minimax:tool_call>"
    )
    assert parse("minimax", raw).calls[0].arguments == {"media_id": "5123123"}


def test_calls_quoted_in_thinking_are_ignored_when_a_real_one_follows():
    """vLLM M1 test_extract_tool_calls_with_thinking_tags."""
    raw = (
        '<think>I should use a tool. <tool_calls>\n{"name": "HassTurnOff", "arguments": '
        '{"area": "x"}}\n</tool_calls></think>\n\nLet me help you. <tool_calls>\n'
        '{"name": "HassGetWeather", "arguments": {"name": "Miami"}}\n</tool_calls>'
    )
    result = parse("minimax", raw)
    assert calls(result) == expect(("HassGetWeather", {"name": "Miami"}))
    assert result.content == "Let me help you."


def test_invalid_lines_do_not_drop_valid_calls():
    """vLLM M1 test_extract_tool_calls_invalid_json."""
    raw = (
        '<tool_calls>\n{"name": "HassTurnOn", "arguments": {"name": "a"}}\n{invalid json here}\n'
        '{"name": "HassTurnOff", "arguments": {"name": "b"}}\n</tool_calls>'
    )
    result = parse("minimax", raw)
    assert calls(result) == expect(
        ("HassTurnOn", {"name": "a"}), ("HassTurnOff", {"name": "b"})
    )


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_streaming_holds_on_the_block(size):
    raw = 'Text before <minimax:tool_call><invoke name="GetDateTime"></invoke></minimax:tool_call>'
    released, holding = stream("minimax", raw, size=size)
    assert holding
    assert released == "Text before "


NS = "]<]minimax[>["


def _m3(*invokes: str) -> str:
    return f"{NS}<tool_call>\n" + "\n".join(invokes) + f"\n{NS}</tool_call>"


def _invoke(name: str, *params: str) -> str:
    return f'{NS}<invoke name="{name}">' + "".join(params) + f"{NS}</invoke>"


def _param(key: str, value: str) -> str:
    return f"{NS}<{key}>{value}{NS}</{key}>"


def test_m3_reads_parameters_named_by_their_tags():
    """Before M3 was read, this ran HassTurnOn with no arguments at all (M2's
    reading of the invoke) and spoke the namespace tokens."""
    raw = "I will do it.\n" + _m3(
        _invoke("HassTurnOn", _param("name", "kitchen light"))
    )
    for result in (parse("minimax", raw), parse_auto(raw)):
        assert calls(result) == expect(("HassTurnOn", {"name": "kitchen light"}))
        assert result.content == "I will do it."


def test_m3_tags_that_do_not_nest_are_refused_not_run():
    raw = _m3(_invoke("HassTurnOn", f"{NS}<name>kitchen light{NS}</area>"))
    result = parse_auto(raw)
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["the parameter tags do not nest"]
    assert result.content == ""


def test_m3_values_nested_deeper_than_any_schema_are_refused():
    deep = "".join(f"{NS}<k>" for _ in range(40)) + "x"
    deep += "".join(f"{NS}</k>" for _ in range(40))
    result = parse_auto(
        _m3(_invoke("memory_store", f"{NS}<metadata>{deep}{NS}</metadata>"))
    )
    assert result.calls == []
    assert [r.name for r in result.rejected] == ["memory_store"]


def test_m3_stray_tokens_are_not_spoken():
    assert parse_auto(f"The light is on.{NS}").content == "The light is on."


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_m3_streaming_holds_on_the_block(size):
    raw = "Text before " + _m3(_invoke("GetDateTime"))
    released, holding = stream("minimax", raw, size=size)
    assert holding
    assert released == "Text before "


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        (
            "Sure, the kitchen light is on.]<]minimax[>[",
            "Sure, the kitchen light is on.",
        ),
        (f"{NS}<mm:think>I should answer{NS}</mm:think>Hello there.", "Hello there."),
    ],
)
@pytest.mark.parametrize("size", [1, 7])
def test_m3_stray_tokens_are_not_streamed_either(raw, spoken, size):
    """The final answer dropped the token but the stream spoke it (a review)."""
    assert parse_auto(raw).content == spoken
    assert stream("minimax", raw, size=size)[0] == spoken


def test_plain_tool_calls_wrapper_around_invokes_is_not_spoken():
    """SGLang's multi_format detector: invokes in ``<tool_calls>``, no prefix."""
    raw = (
        'Sure.<tool_calls><invoke name="HassTurnOn">'
        '<parameter name="name">lamp</parameter></invoke></tool_calls> Done.'
    )
    for result in (parse("minimax", raw), parse_auto(raw)):
        assert calls(result) == expect(("HassTurnOn", {"name": "lamp"}))
        assert ws(result.content) == "Sure. Done."


@pytest.mark.parametrize("flag", ['"true"', '"false"', "'true'"])
def test_parameter_with_a_string_attribute_is_read(flag):
    """``<parameter name=.. string="true">`` (SGLang's multi_format detector):
    the parameter is kept, typed from the tool's schema."""
    raw = (
        '<minimax:tool_call><invoke name="HassLightSet">'
        f'<parameter name="name" string={flag}>42</parameter>'
        f'<parameter name="brightness" string={flag}>40</parameter>'
        "</invoke></minimax:tool_call>"
    )
    assert calls(parse("minimax", raw)) == expect(
        ("HassLightSet", {"name": "42", "brightness": 40})
    )
