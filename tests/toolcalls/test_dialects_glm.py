"""GLM-4.5/4.6/4.7 ``<tool_call>fn<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

Cases adapted from sgl-project/sglang test_function_call_parser.py
(TestGlm4MoeDetector, TestGlm47MoeDetector) and ggml-org/llama.cpp
tests/test-chat.cpp (GLM-4.6, GLM-4.7-Flash, Ling 3.0 tagged arguments);
names renamed to the corpus catalog, wire format kept.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import calls, expect, parse, parse_auto, stream, ws

ENGINE_CASES = [
    # SGLang GLM-4.5: newlines between the parts, two string values
    (
        "<tool_call>HassListAddItem\n"
        "<arg_key>item</arg_key>\n<arg_value>Beijing duck</arg_value>\n"
        "<arg_key>name</arg_key>\n<arg_value>2024-06-27</arg_value>\n"
        "</tool_call>",
        expect(("HassListAddItem", {"item": "Beijing duck", "name": "2024-06-27"})),
        "",
    ),
    # SGLang GLM-4.7: no newlines, two calls
    (
        "<tool_call>HassTurnOn<arg_key>area</arg_key><arg_value>Beijing</arg_value></tool_call>"
        "<tool_call>HassTurnOff<arg_key>area</arg_key><arg_value>Shanghai</arg_value></tool_call>",
        expect(
            ("HassTurnOn", {"area": "Beijing"}), ("HassTurnOff", {"area": "Shanghai"})
        ),
        "",
    ),
    # llama.cpp GLM-4.6: integer typed from the schema
    (
        "<tool_call>HassSetVolume\n<arg_key>volume_level</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
        expect(("HassSetVolume", {"volume_level": 1})),
        "",
    ),
    # llama.cpp #20650: a tool with no arguments
    (
        "Let me read the state.</think><tool_call>GetLiveContext</tool_call>",
        expect(("GetLiveContext", {})),
        "",
    ),
    # llama.cpp Spark/GLM typed values: number, boolean, object, array, unicode
    (
        "Preparing updates.<tool_call>HassClimateSetTemperature"
        "<arg_key>temperature</arg_key><arg_value>2.5</arg_value></tool_call>"
        "<tool_call>memory_store<arg_key>content</arg_key><arg_value>上海</arg_value>"
        "<arg_key>pinned</arg_key><arg_value>true</arg_value>"
        '<arg_key>metadata</arg_key><arg_value>{"source": "spark", "options": {"strict": true}}</arg_value>'
        '<arg_key>tags</arg_key><arg_value>["alpha", "测试"]</arg_value></tool_call>',
        expect(
            ("HassClimateSetTemperature", {"temperature": 2.5}),
            (
                "memory_store",
                {
                    "content": "上海",
                    "pinned": True,
                    "metadata": {"source": "spark", "options": {"strict": True}},
                    "tags": ["alpha", "测试"],
                },
            ),
        ),
        "Preparing updates.",
    ),
    # llama.cpp Ling 3.0: values may contain marker-like strings
    (
        "check this\n</think>\n<tool_call>send_notification\n"
        "<arg_key>message</arg_key>\n<arg_value>contains </think> and <tool_call> strings</arg_value>\n"
        "</tool_call>",
        expect(
            (
                "send_notification",
                {"message": "contains </think> and <tool_call> strings"},
            )
        ),
        "",
    ),
    # llama.cpp Ling 3.0: prose after the call is content
    (
        "<tool_call>HassGetWeather\n<arg_key>name</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
        "\nThe weather has been checked.",
        expect(("HassGetWeather", {"name": "Paris"})),
        "The weather has been checked.",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content"), ENGINE_CASES)
def test_engine_cases(raw, expected, content):
    for result in (parse("glm", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)


def test_string_schema_keeps_digits_as_text():
    """llama.cpp/StepFun rule: "5123123" stays a string where the schema says string."""
    raw = (
        "<tool_call>play_media\n<arg_key>media_id</arg_key>\n<arg_value>5123123</arg_value>\n"
        "<arg_key>area</arg_key>\n<arg_value>den</arg_value>\n</tool_call>"
    )
    result = parse("glm", raw)
    assert result.calls[0].arguments == {"media_id": "5123123", "area": "den"}


def test_escaped_json_array_value():
    """SGLang GLM-4.6: an array value whose quotes arrive backslash-escaped."""
    raw = (
        "<tool_call>create_automation<arg_key>alias</arg_key><arg_value>night</arg_value>"
        r"<arg_key>triggers</arg_key><arg_value>[{\"platform\": \"time\", \"at\": \"22:00\"}]"
        "</arg_value><arg_key>actions</arg_key><arg_value>[]</arg_value></tool_call>"
    )
    result = parse("glm", raw)
    assert result.calls[0].arguments["triggers"] == [
        {"platform": "time", "at": "22:00"}
    ]


def test_reasoning_split_and_forced_open_thinking():
    raw = (
        "I'm\nthinking</think><tool_call>HassTurnOn<arg_key>name</arg_key>"
        "<arg_value>desk lamp</arg_value></tool_call>"
    )
    result = parse("glm", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "desk lamp"}))
    assert result.reasoning == "I'm\nthinking"
    assert result.content == ""


def test_hermes_json_in_the_same_tag_is_not_glm():
    raw = (
        '<tool_call>\n{"name": "HassTurnOn", "arguments": {"name": "a"}}\n</tool_call>'
    )
    assert parse("glm", raw).calls == []


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_streaming_holds_on_the_tag(size):
    raw = "On it. <tool_call>GetDateTime</tool_call>"
    released, holding = stream("glm", raw, size=size)
    assert holding
    assert released == "On it. "


def test_laguna_user_tags_call_only_catalog_tools():
    """Poolside Laguna's ``<user>NAME<arg_key>…</user>`` (Ollama's laguna
    parser): a call only when NAME is a catalog tool, else it is spoken."""
    raw = "<user>HassTurnOn\n<arg_key>name</arg_key>\n<arg_value>lamp</arg_value>\n</user>"
    result = parse_auto(raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "lamp"}))
    assert result.content == ""
    prose = "<user>Hello<arg_key>a</arg_key><arg_value>b</arg_value></user> there"
    result = parse_auto(prose)
    assert result.calls == []
    assert result.rejected == []
    assert result.content == prose


@pytest.mark.parametrize("sep", ["\n", "", " "])
def test_laguna_name_then_json_object(sep):
    """Laguna and TeleChat4: ``<tool_call>NAME{json}</tool_call>``."""
    raw = f'Sure.<tool_call>HassTurnOn{sep}{{"name": "lamp"}}</tool_call>'
    result = parse_auto(raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "lamp"}))
    assert result.content == "Sure."


def test_name_then_json_calls_no_tool_outside_the_catalog():
    result = parse_auto('<tool_call>rm_rf\n{"path": "/"}</tool_call>')
    assert result.calls == []
    assert [r.name for r in result.rejected] == [""]
    assert result.content == ""


def test_repeated_unclosed_opener_is_one_call():
    """Ollama's laguna_test: an unclosed call, then the same call again."""
    one = '<tool_call>HassTurnOn\n{"name": "lamp"}'
    result = parse_auto(f"{one}\n{one}</tool_call>")
    assert calls(result) == expect(("HassTurnOn", {"name": "lamp"}))
    assert result.content == ""


def test_telechat4_param_tags_next_to_a_call_without_arguments():
    """TeleChat4's ``<param_key>`` pairs share GLM's call tag: a call with no
    pairs is read once, not once per format."""
    raw = (
        "<tool_call>GetLiveContext</tool_call>"
        "<tool_call>HassTurnOn<param_key>name</param_key>"
        "<param_value>lamp</param_value></tool_call>"
    )
    result = parse_auto(raw)
    assert calls(result) == expect(
        ("GetLiveContext", {}), ("HassTurnOn", {"name": "lamp"})
    )
    assert result.content == ""


def test_iquest_call_cut_off_is_refused_not_spoken():
    raw = "Checking.<iquestcoder_tool_call>HassTurnOn<arg_key>name</arg_key><arg_val"
    result = parse_auto(raw)
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["call is truncated"]
    assert result.content == "Checking."


def test_glm53_flash_short_pairs_split_at_the_first_equals_sign():
    """SGLang's glm53_flash_detector: ``<arg_key>k=v</arg_value>``."""
    raw = (
        "<tool_call>HassTurnOn<arg_key>name=lamp = on</arg_value>"
        "<arg_key>area=hall</arg_value></tool_call>"
    )
    result = parse("glm", raw)
    assert calls(result) == expect(
        ("HassTurnOn", {"name": "lamp = on", "area": "hall"})
    )
    assert result.content == ""


def test_glm53_flash_namespaced_name_outside_the_catalog_is_refused():
    result = parse_auto('<tool_call>Weather/get_forecast>{"city": "Oslo"}')
    assert result.calls == []
    assert result.rejected
    assert result.content == ""


@pytest.mark.parametrize(
    "head", ["to=functions.HassTurnOn\n", "assistant to=functions.HassTurnOn json\n"]
)
def test_recipient_header_inside_tool_call(head):
    """SGLang's multi_format detector: a harmony recipient in ``<tool_call>``."""
    result = parse_auto(f'Ok.\n<tool_call>{head}{{"name": "lamp"}}\n</tool_call>')
    assert calls(result) == expect(("HassTurnOn", {"name": "lamp"}))
    assert result.content == "Ok."


def test_call_labels_go_with_their_call_and_stay_without_one():
    """RWKV's ``**Tool Call:**`` before a fenced call, HyperCLOVA X SEED's
    `` -> tool/function_call`` header before a JSON list: not spoken with
    the call; prose when no call follows."""
    call = '{"name": "HassTurnOn", "arguments": {"name": "lamp"}}'
    for raw in (
        f"Ok.\n**Tool Call:**\n```json\n{call}\n```",
        f"Ok.\n -> tool/function_call\n[{call}]",
    ):
        result = parse_auto(raw)
        assert calls(result) == expect(("HassTurnOn", {"name": "lamp"}))
        assert result.content == "Ok."
    prose = "Next time, write **Tool Call:** before the call."
    assert parse_auto(prose).content == prose
