"""ByteDance Seed-OSS ``<seed:tool_call><function=fn><parameter=k>v</parameter>``.

Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (Seed-OSS peg and
legacy tests) and vllm-project/vllm tests/tool_parsers/test_seed_oss_tool_parser.py;
names renamed to the corpus catalog, wire format kept.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import calls, expect, parse, parse_auto, stream, ws

ENGINE_CASES = [
    # llama.cpp: single call, integer typed from the schema
    (
        "<seed:tool_call>\n<function=HassSetVolume>\n<parameter=volume_level>1</parameter>\n"
        "</function>\n</seed:tool_call>",
        expect(("HassSetVolume", {"volume_level": 1})),
        "",
        "",
    ),
    # llama.cpp: two calls
    (
        "<seed:tool_call>\n<function=HassSetVolume>\n<parameter=volume_level>1</parameter>\n"
        "</function>\n</seed:tool_call>\n<seed:tool_call>\n<function=HassLightSet>\n"
        "<parameter=brightness>1</parameter>\n<parameter=temperature>2</parameter>\n"
        "</function>\n</seed:tool_call>",
        expect(
            ("HassSetVolume", {"volume_level": 1}),
            ("HassLightSet", {"brightness": 1, "temperature": 2}),
        ),
        "",
        "",
    ),
    # llama.cpp: a JSON array of objects as one value
    (
        "<seed:tool_call>\n<function=create_automation>\n<parameter=alias>a</parameter>\n"
        '<parameter=triggers>[{"item": "Check stuff", "selected": false}, {"item": "Prepare '
        'stuff", "selected": true}]</parameter>\n<parameter=actions>[]</parameter>\n</function>\n'
        "</seed:tool_call>",
        expect(
            (
                "create_automation",
                {
                    "alias": "a",
                    "triggers": [
                        {"item": "Check stuff", "selected": False},
                        {"item": "Prepare stuff", "selected": True},
                    ],
                    "actions": [],
                },
            )
        ),
        "",
        "",
    ),
    # llama.cpp: quotes and newlines inside string values stay as written
    (
        "<seed:tool_call>\n<function=send_notification>\n<parameter=message>"
        'def foo(arg = "14"):\n    return arg + "bar"\n</parameter>\n<parameter=title>'
        'def foo(arg = "15"):\n    pass\n</parameter>\n</function>\n</seed:tool_call>',
        expect(
            (
                "send_notification",
                {
                    "message": 'def foo(arg = "14"):\n    return arg + "bar"',
                    "title": 'def foo(arg = "15"):\n    pass',
                },
            )
        ),
        "",
        "",
    ),
    # llama.cpp: reasoning then a call
    (
        "<seed:think>I need to search for it</seed:think><seed:tool_call>\n<function=web_search>\n"
        "<parameter=query>seed</parameter>\n</function>\n</seed:tool_call>",
        expect(("web_search", {"query": "seed"})),
        "",
        "I need to search for it",
    ),
    # vLLM: budget reflections inside the thinking
    (
        "<seed:think>The user's current thinking budget is 512.</seed:cot_budget_reflect>\nLet me "
        "check.\n<seed:cot_budget_reflect>I have used 131 tokens.</seed:cot_budget_reflect>\n Fine."
        "</seed:think>\n<seed:tool_call>\n<function=HassGetWeather>\n<parameter=name>Barcelona, "
        "Spain</parameter>\n</function>\n</seed:tool_call>",
        expect(("HassGetWeather", {"name": "Barcelona, Spain"})),
        "",
        None,
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content", "reasoning"), ENGINE_CASES)
def test_engine_cases(raw, expected, content, reasoning):
    for result in (parse("seed_oss", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)
        if reasoning is not None:
            assert ws(result.reasoning) == ws(reasoning)


def test_call_format_quoted_in_thinking_is_not_a_second_call():
    """vLLM unlimited-budget case: Seed writes the call format in its thinking."""
    raw = (
        "<seed:think>\nGot it. The format is <seed:tool_call>\n<function=HassGetWeather>\n"
        "<parameter=name>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>. "
        "Let me go with that.</seed:think><seed:tool_call>\n<function=HassGetWeather>\n"
        "<parameter=name>Barcelona, Spain</parameter>\n</function>\n</seed:tool_call>"
    )
    result = parse("seed_oss", raw)
    assert calls(result) == expect(("HassGetWeather", {"name": "Barcelona, Spain"}))
    assert result.content == ""
    assert "Let me go with that." in result.reasoning


@pytest.mark.parametrize(
    ("raw", "content", "reasoning"),
    [
        (
            "<seed:think>I'm thinking about the answer</seed:think>\nHello, world!",
            "Hello, world!",
            "I'm thinking about the answer",
        ),
        # llama.cpp: a budget note after the thinking is not spoken
        (
            "<seed:think>Token usage: 45/1000</seed:think>"
            "<seed:cot_budget_reflect>Token usage: 45/1000</seed:cot_budget_reflect>"
            "I need to calculate this step by step.",
            "I need to calculate this step by step.",
            "Token usage: 45/1000",
        ),
        (
            "This is a simple response without reasoning.",
            "This is a simple response without reasoning.",
            "",
        ),
    ],
)
def test_content_and_reasoning(raw, content, reasoning):
    for result in (parse("seed_oss", raw), parse_auto(raw)):
        assert result.calls == []
        assert ws(result.content) == ws(content)
        assert ws(result.reasoning) == ws(reasoning)


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_streaming_hides_thinking_and_holds_calls(size):
    raw = (
        "<seed:think>secret</seed:think>Sure. <seed:tool_call>\n<function=GetDateTime>\n"
        "</function>\n</seed:tool_call>"
    )
    released, holding = stream("seed_oss", raw, size=size)
    assert holding
    assert released == "Sure. "
