"""Pythonic calls ``[f(a=1)]`` (Llama 3.2/4, LFM2): parse, safety, streaming.

Cases adapted from vllm-project/vllm tests/tool_parsers/test_pythonic_tool_parser.py,
sgl-project/sglang test/registered/function_call/test_function_call_parser.py
(TestPythonicDetector) and ggml-org/llama.cpp tests/test-chat.cpp (LFM2); tool
names and values renamed to the corpus catalog, wire format kept.
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


@pytest.mark.parametrize("case", corpus_cases("pythonic"), ids=lambda c: c["id"])
def test_dev_corpus(case):
    check_corpus_case("pythonic", case)


ENGINE_CASES = [
    # vLLM SIMPLE_FUNCTION_OUTPUT
    (
        "[HassLightSet(area='living room', color='warm white')]",
        expect(("HassLightSet", {"area": "living room", "color": "warm white"})),
        "",
    ),
    # vLLM MORE_TYPES_FUNCTION_OUTPUT: dict, None, True, list values
    (
        "[memory_store(content='Anna likes 22 degrees', metadata={'room': 'living room', "
        "'source': 'chat'}, expires=None, pinned=True, tags=['climate', 'anna'])]",
        expect(
            (
                "memory_store",
                {
                    "content": "Anna likes 22 degrees",
                    "metadata": {"room": "living room", "source": "chat"},
                    "expires": None,
                    "pinned": True,
                    "tags": ["climate", "anna"],
                },
            )
        ),
        "",
    ),
    # vLLM parallel_calls
    (
        "[HassTurnOff(area='kitchen'), GetDateTime()]",
        expect(("HassTurnOff", {"area": "kitchen"}), ("GetDateTime", {})),
        "",
    ),
    # vLLM EMPTY_LIST_FUNCTION_OUTPUT
    (
        "[memory_store(content='x', tags=[])]",
        expect(("memory_store", {"content": "x", "tags": []})),
        "",
    ),
    # SGLang: nested brackets inside argument values
    (
        "[memory_search(query='living room', filters={'tags': ['a', 'b'], 'nested': {'k': 'v'}})]",
        expect(
            (
                "memory_search",
                {
                    "query": "living room",
                    "filters": {"tags": ["a", "b"], "nested": {"k": "v"}},
                },
            )
        ),
        "",
    ),
    # SGLang: text before a list later in the reply (all names are catalog tools)
    (
        "This is some text before [HassClimateGetTemperature(area='London')]",
        expect(("HassClimateGetTemperature", {"area": "London"})),
        "This is some text before",
    ),
    # SGLang: <|python_start|>…<|python_end|> with text around it
    (
        "User wants the weather on Mars. <|python_start|>[HassGetWeather(name='Mars')]"
        "<|python_end|> In this way we will get the weather on Mars.",
        expect(("HassGetWeather", {"name": "Mars"})),
        "User wants the weather on Mars. In this way we will get the weather on Mars.",
    ),
    # llama.cpp LFM2: Python literals become JSON; nested dict
    (
        "<|tool_call_start|>[memory_store(content='x', pinned=True, metadata={\"enabled\": True, "
        '"count": 3})]<|tool_call_end|>',
        expect(
            (
                "memory_store",
                {
                    "content": "x",
                    "pinned": True,
                    "metadata": {"enabled": True, "count": 3},
                },
            )
        ),
        "",
    ),
    # llama.cpp LFM2: JSON literals accepted too
    (
        '<|tool_call_start|>[send_notification(message="hi", title=null, critical=false)]'
        "<|tool_call_end|>",
        expect(
            ("send_notification", {"message": "hi", "title": None, "critical": False})
        ),
        "",
    ),
    # llama.cpp LFM2: escape sequences decode to real characters
    (
        '<|tool_call_start|>[send_notification(message="First line\\nSecond\\tindented")]'
        "<|tool_call_end|>",
        expect(("send_notification", {"message": "First line\nSecond\tindented"})),
        "",
    ),
    # llama.cpp LFM2: content before the call
    (
        'Let me check the time.<|tool_call_start|>[HassClimateGetTemperature(area="Paris")]'
        "<|tool_call_end|>",
        expect(("HassClimateGetTemperature", {"area": "Paris"})),
        "Let me check the time.",
    ),
    # Llama 4 without brackets inside the markers
    (
        "<|python_start|>HassTurnOn(name='porch light')<|python_end|>",
        expect(("HassTurnOn", {"name": "porch light"})),
        "",
    ),
    # A bare call as the entire reply, catalog name
    ("GetLiveContext()", expect(("GetLiveContext", {})), ""),
    # Positional argument mapped onto the only required parameter
    (
        "[web_search('weather in Paris')]",
        expect(("web_search", {"query": "weather in Paris"})),
        "",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content"), ENGINE_CASES)
def test_engine_cases(raw, expected, content):
    for result in (parse("pythonic", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)


def test_fake_call_inside_reasoning_is_not_dispatched():
    """llama.cpp LFM2: a call quoted in <think> does not count when a real one follows."""
    raw = (
        "<think>Let me think about <|tool_call_start|>[HassTurnOn(name='a')]<|tool_call_end|> "
        "hmm</think><|tool_call_start|>[HassTurnOff(name='b')]<|tool_call_end|>"
    )
    result = parse("pythonic", raw)
    assert calls(result) == expect(("HassTurnOff", {"name": "b"}))
    assert "Let me think about" in result.reasoning
    assert result.content == ""


def test_reasoning_split_from_content():
    raw = "<think>I'm\nthinking</think><|tool_call_start|>[GetDateTime()]<|tool_call_end|>"
    result = parse("pythonic", raw)
    assert calls(result) == expect(("GetDateTime", {}))
    assert result.reasoning == "I'm\nthinking"
    assert result.content == ""


NEGATIVES = [
    # corpus negative-015: a known tool named in prose
    "The GetLiveContext() tool returns the current state of every exposed entity.",
    # llama.cpp LFM2: markdown links stay content
    "Use this format: [link text](url). Example: [Wikipedia](https://www.wikipedia.org).",
    # An example call in a code fence is not dispatched
    "You could write:\n```python\n[HassTurnOn(name='kitchen light')]\n```",
    # Inline code too
    "Try `[HassTurnOn(name='kitchen light')]` in the console.",
    # A list in prose whose name is not a catalog tool
    "Steps: [prepare(dinner='pasta')] then relax.",
    'Your open windows are: ["kitchen", "bathroom"].',
    "Call GetLiveContext() whenever you need the state.",
]


@pytest.mark.parametrize("raw", NEGATIVES)
def test_prose_is_not_a_call(raw):
    for result in (parse("pythonic", raw), parse_auto(raw)):
        assert result.calls == []
        assert ws(result.content) == ws(raw)


def test_non_literal_values_are_refused():
    """Nothing is evaluated: a call expression as a value is not a literal."""
    result = parse("pythonic", "[HassTurnOn(name=__import__('os').getcwd())]")
    assert result.calls == []


def test_end_offset_points_after_the_call_markup():
    raw = "[HassTurnOn(name='a')] trailing text"
    result = parse("pythonic", raw)
    assert result.end == raw.index("]") + 1


@pytest.mark.parametrize("size", [1, 2, 5, 1000])
@pytest.mark.parametrize(
    ("raw", "visible"),
    [
        (
            "Let me check.<|tool_call_start|>[GetDateTime()]<|tool_call_end|>",
            "Let me check.",
        ),
        ("Sure. <|python_start|>[GetDateTime()]<|python_end|>", "Sure. "),
        ("[GetLiveContext()]", ""),
    ],
)
def test_streaming_holds_on_markers(raw, visible, size):
    released, holding = stream("pythonic", raw, size=size)
    assert holding
    assert released == visible


def test_streaming_releases_prose_with_brackets():
    raw = "Use [link text](url) for links."
    released, holding = stream("pythonic", raw)
    assert not holding
    assert released == raw


def test_system_prompt_lists_tools_and_format():
    from custom_components.toolbelt.toolcalls.registry import get_dialect
    from tests.toolcalls.dialect_helpers import catalog

    prompt = get_dialect("pythonic").system_prompt(catalog())
    assert "HassTurnOn(" in prompt
    assert "[func_a(param='value'" in prompt


def test_a_bad_sibling_does_not_drop_good_calls():
    """vLLM llama4_pythonic: bytes and non-finite values refuse only their own call."""
    for bad in ("HassTurnOn(name=b'z')", "HassSetVolume(volume_level=1e999)"):
        raw = f"<|python_start|>[{bad}, HassTurnOff(area='LA')]<|python_end|>"
        result = parse("pythonic", raw)
        assert calls(result) == expect(("HassTurnOff", {"area": "LA"}))
        assert [r.reason for r in result.rejected] == [
            "argument values must be plain literals (text, numbers, lists)"
        ]


def test_an_unreadable_call_goes_back_and_its_siblings_run():
    """vLLM pythonic: one call the readers cannot take keeps the readable ones;
    the unreadable one is refused with its name, so the model hears why."""
    raw = '[HassTurnOn(area="kitchen"), HassTurnOff(name=porch light), GetDateTime()]'
    for result in (parse("pythonic", raw), parse_auto(raw)):
        assert calls(result) == expect(
            ("HassTurnOn", {"area": "kitchen"}), ("GetDateTime", {})
        )
        assert [r.name for r in result.rejected] == ["HassTurnOff"]
        assert "porch light" in result.rejected[0].reason
        assert result.content == ""


def test_a_multiline_string_with_brackets_beside_an_unreadable_call():
    """The salvage reader skips a string that runs across lines (brackets in it
    do not count), so the good call survives its unreadable sibling."""
    raw = (
        "[send_notification(message='Shopping (for Sunday):\n- eggs\n- milk'),"
        " HassTurnOff(name=porch light)]"
    )
    for result in (parse("pythonic", raw), parse_auto(raw)):
        assert calls(result) == expect(
            ("send_notification", {"message": "Shopping (for Sunday):\n- eggs\n- milk"})
        )
        assert [r.name for r in result.rejected] == ["HassTurnOff"]


def test_a_list_of_unreadable_prose_stays_prose():
    raw = "[Note(this is an aside), Also(see the manual)]"
    for result in (parse("pythonic", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.rejected == []
        assert ws(result.content) == ws(raw)


def test_malformed_list_inside_markers_is_refused_not_shown():
    """vLLM llama4_pythonic: mismatched brackets give no call (and no markup in content)."""
    result = parse("pythonic", "<|python_start|>[HassTurnOn(x=1])]<|python_end|>")
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["not a valid call list"]
    assert result.content == ""


S, E = "<|tool_call_start|>", "<|tool_call_end|>"

SLIP_CASES = [
    # vLLM test_lfm2_tool_parser.py: raw newlines inside a string argument
    (
        f"{S}[send_notification(message='cat > f.py << EOF\nimport csv\nprint(1)\nEOF')]{E}",
        expect(
            (
                "send_notification",
                {"message": "cat > f.py << EOF\nimport csv\nprint(1)\nEOF"},
            )
        ),
    ),
    # vLLM LFM2: unescaped same-style quotes nested in a value
    (
        f"{S}[send_notification(message='sed -n '360,450p' /testbed/common.py')]{E}",
        expect(
            ("send_notification", {"message": "sed -n '360,450p' /testbed/common.py"})
        ),
    ),
    # vLLM LFM2: zero-padded integers
    (
        f"{S}[HassStartTimer(hours=07, minutes=05)]{E}",
        expect(("HassStartTimer", {"hours": 7, "minutes": 5})),
    ),
    # vLLM LFM2: a NUL byte inside a string
    (
        f"{S}[send_notification(message='printf a\x00b')]{E}",
        expect(("send_notification", {"message": "printf a\x00b"})),
    ),
    # vLLM LFM2: a set literal becomes a list, in source order
    (
        f"{S}[memory_store(content='x', tags={{'urgent', 'bug'}})]{E}",
        expect(("memory_store", {"content": "x", "tags": ["urgent", "bug"]})),
    ),
    # vLLM LFM2: a bracket inside a string, whitespace after the start token
    (
        f"{S} [send_notification(message='grep -F \"]\" log.txt')]{E}",
        expect(("send_notification", {"message": 'grep -F "]" log.txt'})),
    ),
    # The everyday slip: an apostrophe inside single quotes, no markers
    (
        "[HassTurnOn(name='Anna's lamp')]",
        expect(("HassTurnOn", {"name": "Anna's lamp"})),
    ),
]


@pytest.mark.parametrize(("raw", "expected"), SLIP_CASES)
def test_small_model_slips_are_read(raw, expected):
    for result in (parse("pythonic", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert result.content == ""


@pytest.mark.parametrize("body", ["[]", "[ ]"])
def test_empty_block_means_no_calls(body):
    """vLLM LFM2 test_empty_tool_call_block."""
    for result in (
        parse("pythonic", f"Ok.{S}{body}{E}"),
        parse_auto(f"Ok.{S}{body}{E}"),
    ):
        assert result.calls == []
        assert result.content == "Ok."


@pytest.mark.parametrize("dialect", ["pythonic", "minicpm"])
def test_a_json_call_list_between_the_tokens_is_read(dialect):
    """openPangu v2 writes a JSON list between LFM2's and MiniCPM's tokens
    (vLLM test_openpanguv2_tool_parser.py); a "(" in a value is no Python call."""
    raw = (
        f'Sure.{S}[{{"name": "HassTurnOn", "arguments": {{"name": "lamp (left)"}}}}, '
        f'{{"name": "delete_all", "arguments": {{}}}}]{E}'
    )
    result = parse(dialect, raw)
    assert calls(result) == expect(("HassTurnOn", {"name": "lamp (left)"}))
    assert [r.reason for r in result.rejected] == ["unknown tool: delete_all"]
    assert result.content == "Sure."
