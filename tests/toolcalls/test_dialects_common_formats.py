"""The formats many families share (Hermes tags, Qwen, Qwen3-Coder XML, Llama 3
JSON, Mistral, xLAM, functools, markdown JSON, Home-LLM, ReAct, native calls)
on inputs adapted from public engines' parser tests.

Sources (tool names and values renamed to the corpus's smart-home tools, wire
format kept): llama.cpp ``tests/test-chat.cpp`` (Hermes 2 Pro wrapper
variants, Llama 3.x built-ins, forced-open thinking), vLLM
``tests/tool_parsers/test_mistral_tool_parser.py`` (v11 ``name{..}`` and
``[ARGS]`` forms, content before the marker, trailing data), LangChain/crewAI
ReAct parser tests, plus constructed adversarial cases (marked).
"""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls import (
    Catalog,
    ParseResult,
    get_dialect,
    parse,
    resolve_dialect,
)
from custom_components.toolbelt.toolcalls.dialects.native import from_openai_tool_calls
from custom_components.toolbelt.toolcalls.model import MAX_CALLS, TOO_MANY_CALLS
from custom_components.toolbelt.tools.definitions import ALIASES
from tests.toolcalls.dialect_helpers import catalog

CATALOG = catalog()
CALL = '{"name": "HassTurnOn", "arguments": {"name": "kitchen light"}}'
ON = [("HassTurnOn", {"name": "kitchen light"})]


def _calls(result: ParseResult) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in result.calls]


def _both(dialect: str, text: str) -> list[ParseResult]:
    """Parse with the dialect alone and with ``auto``; both must agree."""
    return [get_dialect(dialect).parse(text, CATALOG), parse(text, CATALOG)]


# --- hermes (llama.cpp test-chat.cpp, Hermes 2 Pro block) -------------------
@pytest.mark.parametrize(
    "text",
    [
        f"<tool_call>\n{CALL}\n</tool_call>",
        f"<function_call>{CALL}</function_call>",
        f"<tool>\n  {CALL}\n</tool>",
        f"<tools>\n  {CALL}\n</tools>",
        f"<response>\n  {CALL}\n</response>",
        f"<json>\n  {CALL}\n</json>",
        f"<JSON>\n  {CALL}\n</JSON>",
        '<xml>\n  {\n    "name": "HassTurnOn", "arguments": {"name": "kitchen light"}\n  }\n</xml>',
        f"```xml\n<response>\n    {CALL}\n</response>\n```",
        f"```xml\n  {CALL}\n```",
        f"```\n{CALL}\n```",
        f"```json\n\n   <function_call> {CALL} \n   </function_call> \n``` ",
        '<function=HassTurnOn>{"name": "kitchen light"}</function>',
        '<function name="HassTurnOn">\n{"name": "kitchen light"}\n</function>',
        f"{CALL}",
        f"{{\n  {CALL[1:]}",
        f"<tool_call>{CALL}",  # never closed
        f"<tool_call>[{CALL}]</tool_call>",
    ],
)
def test_hermes_wrappers(text: str) -> None:
    for result in _both("hermes", text):
        assert _calls(result) == ON, text
        assert result.content == ""


def test_hermes_content_before_and_forced_open_thinking() -> None:
    result = parse(
        f"Hello, world!\nWhat's up?<tool_call>\n{CALL}\n</tool_call>", CATALOG
    )
    assert _calls(result) == ON
    assert result.content == "Hello, world!\nWhat's up?"
    result = parse(f"I'm\nthinking</think>\n<tool_call>{CALL}</tool_call>", CATALOG)
    assert _calls(result) == ON
    assert result.content == ""
    assert result.reasoning == "I'm\nthinking"


def test_hermes_two_function_tags() -> None:
    text = (
        '<function=HassTurnOn>{"name": "kitchen light"}</function>\n'
        '<function=HassTurnOff>{"area": "porch"}</function>'
    )
    assert _calls(parse(text, CATALOG)) == [*ON, ("HassTurnOff", {"area": "porch"})]


def test_hermes_unparsable_tag_in_reasoning_is_not_a_call() -> None:
    result = parse("<think><tool_call>nah uhg</tool_call>", CATALOG)
    assert result.calls == []
    assert result.content == ""


def test_hermes_weak_wrapper_with_prose_is_content() -> None:
    text = "<response>The porch light is off.</response>"
    result = parse(text, CATALOG)
    assert result.calls == []
    assert "The porch light is off." in result.content


def test_hermes_truncated_call_is_rejected_not_dispatched() -> None:
    result = parse(
        '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "kitch', CATALOG
    )
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["call is truncated"]
    assert result.content == ""


def test_hermes_end_offset_cuts_hallucinated_continuation() -> None:
    text = f"<tool_call>{CALL}</tool_call>\nThe light is now on, and I also"
    result = get_dialect("hermes").parse(text, CATALOG)
    assert text[: result.end].endswith("</tool_call>")


# --- qwen / qwen3_coder_xml ---------------------------------------------------
def test_qwen_call_inside_think_and_reasoning_kept_out() -> None:
    text = f"<think>\nI should turn it on.\n<tool_call>\n{CALL}\n</tool_call>\n</think>\nDone."
    for result in _both("qwen", text):
        assert _calls(result) == ON
        assert result.content == "Done."
        assert "turn it on" in result.reasoning


def test_qwen3_coder_typed_parameters() -> None:
    text = (
        "<tool_call>\n<function=HassLightSet>\n<parameter=area>\nliving room\n</parameter>\n"
        "<parameter=brightness>\n40\n</parameter>\n</function>\n</tool_call>"
    )
    for result in _both("qwen3_coder_xml", text):
        assert _calls(result) == [
            ("HassLightSet", {"area": "living room", "brightness": 40})
        ]
        assert isinstance(result.calls[0].arguments["brightness"], int)


def test_qwen3_coder_keeps_string_typed_digits_and_multiline_text() -> None:
    text = (
        "<tool_call>\n<function=play_media>\n<parameter=media_id>\n5123123\n</parameter>\n"
        "</function>\n</tool_call>\n<tool_call>\n<function=memory_store>\n"
        "<parameter=content>\nline one\nline two\n</parameter>\n<parameter=pinned>\ntrue\n"
        "</parameter>\n</function>\n</tool_call>"
    )
    assert _calls(parse(text, CATALOG)) == [
        ("play_media", {"media_id": "5123123"}),
        ("memory_store", {"content": "line one\nline two", "pinned": True}),
    ]


def test_qwen3_coder_missing_parameter_close_and_truncation() -> None:
    ok = "<tool_call>\n<function=web_search>\n<parameter=query>\nsunset\n</function>\n</tool_call>"
    assert _calls(parse(ok, CATALOG)) == [("web_search", {"query": "sunset"})]
    cut = "<tool_call>\n<function=web_search>\n<parameter=query>\nsuns"
    result = parse(cut, CATALOG)
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["call is truncated"]


# --- llama3 -------------------------------------------------------------------
def test_llama3_builtin_after_python_tag() -> None:
    text = '<|python_tag|>brave_search.call(query="sunset time")<|eom_id|>'
    for result in _both("llama3", text):
        assert _calls(result) == [("brave_search", {"query": "sunset time"})]
        assert result.content == ""


def test_llama3_builtin_maps_to_web_search_when_brave_is_absent() -> None:
    small = Catalog.from_openai(
        [
            {
                "name": "web_search",
                "parameters": {"properties": {"query": {"type": "string"}}},
            }
        ],
        ALIASES,
    )
    result = get_dialect("llama3").parse(
        '<|python_tag|>brave_search.call(query="x")', small
    )
    assert _calls(result) == [("web_search", {"query": "x"})]


def test_llama3_content_before_python_tag_and_semicolons() -> None:
    text = (
        'Let me set both.<|python_tag|>{"name": "HassStartTimer", "parameters": {"minutes": 5}}; '
        '{"name": "HassStartTimer", "parameters": {"minutes": 9}}'
    )
    result = parse(text, CATALOG)
    assert _calls(result) == [
        ("HassStartTimer", {"minutes": 5}),
        ("HassStartTimer", {"minutes": 9}),
    ]
    assert result.content == "Let me set both."


def test_llama3_call_after_prose_counts() -> None:
    """A well-formed call to a catalog tool counts wherever it stands."""
    text = 'Turning it on:\n{"name": "HassTurnOn", "parameters": {"name": "x"}}'
    result = parse(text, CATALOG)
    assert _calls(result) == [("HassTurnOn", {"name": "x"})]
    assert result.content == "Turning it on:"


def test_llama3_abandoned_object_of_another_tool_stays_text() -> None:
    """Only a retry of the same tool takes over an unclosed call object."""
    text = (
        'Try {"name": "HassTurnOn", "arguments": {"area": "kitchen"} then '
        '{"name": "HassTurnOff", "arguments": {"area": "garage"}}'
    )
    result = parse(text, CATALOG)
    assert _calls(result) == [("HassTurnOff", {"area": "garage"})]
    assert result.content.startswith('Try {"name": "HassTurnOn"')


def test_llama3_prose_json_naming_an_unknown_tool_is_text() -> None:
    text = 'This is not a tool call:\n{"name": "search", "parameters": {"q": "x"}}'
    result = parse(text, CATALOG)
    assert result.calls == []


# --- mistral (vLLM test_mistral_tool_parser.py) ---------------------------------
@pytest.mark.parametrize(
    ("text", "content"),
    [
        ('[TOOL_CALLS]HassTurnOn{"name": "kitchen light"}', ""),
        ('[TOOL_CALLS]HassTurnOn[ARGS]{"name": "kitchen light"}', ""),
        ('hi[TOOL_CALLS]HassTurnOn[ARGS]{"name": "kitchen light"}', "hi"),
        (f"[TOOL_CALLS]  [ {CALL} ]", ""),
        (f"[TOOL_CALLS] [{CALL}]\nextra trailing data", "extra trailing data"),
    ],
)
def test_mistral_forms(text: str, content: str) -> None:
    for result in _both("mistral", text):
        assert _calls(result) == ON
        assert result.content == content
        assert len(result.calls[0].id) == 9
        assert result.calls[0].id.isalnum()


def test_mistral_call_id_round_trips() -> None:
    text = '[TOOL_CALLS]HassTurnOn[CALL_ID]a1B2c3D4e[ARGS]{"name": "kitchen light"}'
    for result in _both("mistral", text):
        assert [c.id for c in result.calls] == ["a1B2c3D4e"]


def test_mistral_name_without_arguments() -> None:
    assert _calls(parse("[TOOL_CALLS]GetLiveContext", CATALOG)) == [
        ("GetLiveContext", {})
    ]


def test_mistral_truncated_arguments_are_rejected() -> None:
    result = parse('hi{hi[TOOL_CALLS]web_search{"query": "print(\\"hello', CATALOG)
    assert result.calls == []
    assert result.content == "hi{hi"


def test_mistral_marker_in_prose_is_not_a_call() -> None:
    text = "Mistral uses [TOOL_CALLS] before calls; none needed here."
    result = parse(text, CATALOG)
    assert result.calls == []
    assert result.content == text


# --- xlam / functools / markdown_json / home_llm --------------------------------
def test_xlam_fenced_array_and_wrapper_object() -> None:
    text = f"```json\n[{CALL}, {CALL}]\n```"
    for result in _both("xlam", text):
        assert _calls(result) == ON * 2
        assert result.content == ""


def test_functools_with_text_after_and_empty_list() -> None:
    result = parse(f"functools[{CALL}] Turning it on.", CATALOG)
    assert _calls(result) == ON
    assert result.content == "Turning it on."
    empty = parse("functools[]", CATALOG)
    assert empty.calls == []
    assert empty.content == ""


def test_markdown_fence_needs_call_shape() -> None:
    example = 'Use this automation:\n```json\n{"alias": "x", "triggers": [], "actions": []}\n```'
    result = parse(example, CATALOG)
    assert result.calls == []
    assert result.content == example
    python = "```python\nHassTurnOn(name='kitchen light')\n```"
    assert parse(python, CATALOG).calls == []


def test_markdown_name_only_object_in_json_fence_is_not_a_call() -> None:
    assert parse('```json\n{"name": "HassTurnOn"}\n```', CATALOG).calls == []


def test_home_llm_service_block() -> None:
    text = (
        "Turning it on.\n```homeassistant\n"
        '{"service": "light.turn_on", "target_device": "light.kitchen", "brightness": 50}\n```'
    )
    for result in _both("home_llm", text):
        assert _calls(result) == [
            (
                "HassCallService",
                {
                    "service": "light.turn_on",
                    "target_device": "light.kitchen",
                    "brightness": 50,
                },
            )
        ]
        assert result.content == "Turning it on."


def test_home_llm_line_form() -> None:
    result = get_dialect("home_llm").parse(
        "```homeassistant\nlight.turn_off(light.porch)\n```", CATALOG
    )
    assert _calls(result) == [
        (
            "HassCallService",
            {"service": "light.turn_off", "target_device": "light.porch"},
        )
    ]


# --- react (LangChain / crewAI parser tests, adapted) --------------------------
def test_react_string_input_goes_to_first_required_string() -> None:
    text = "Thought: search it\nAction: web_search\nAction Input: sunset time amsterdam"
    for result in _both("react", text):
        assert _calls(result) == [("web_search", {"query": "sunset time amsterdam"})]
        assert result.content == ""


def test_react_quoted_string_input() -> None:
    text = 'Action: memory_search\nAction Input: "hvac filter"'
    assert _calls(parse(text, CATALOG)) == [("memory_search", {"query": "hvac filter"})]


def test_react_json_blob() -> None:
    text = (
        "Thought: look it up\nAction:\n```json\n"
        '{"action": "web_search", "action_input": {"query": "sunset"}}\n```'
    )
    for result in _both("react", text):
        assert _calls(result) == [("web_search", {"query": "sunset"})]
        assert result.content == ""


def test_react_json_blob_final_answer_is_content() -> None:
    text = 'Action:\n```json\n{"action": "Final Answer", "action_input": "It is 21 degrees."}\n```'
    result = parse(text, CATALOG)
    assert result.calls == []
    assert result.content == "It is 21 degrees."


def test_react_action_none_and_final_answer() -> None:
    text = "Thought: no tool needed\nAction: None\nFinal Answer: The door is closed."
    result = parse(text, CATALOG)
    assert result.calls == []
    assert result.content == "The door is closed."


def test_react_python_style_action_and_markdown_labels() -> None:
    text = "**Thought:** dim it\n**Action:** HassLightSet(area='office', brightness=20)"
    assert _calls(parse(text, CATALOG)) == [
        ("HassLightSet", {"area": "office", "brightness": 20})
    ]


def test_react_unknown_tool_is_rejected() -> None:
    text = 'Action: unlock_front_door\nAction Input: {"code": "1234"}'
    result = parse(text, CATALOG)
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["unknown tool: unlock_front_door"]


def test_react_end_stops_before_hallucinated_observation() -> None:
    text = 'Action: web_search\nAction Input: {"query": "x"}\nObservation: made up\nFinal Answer: y'
    result = get_dialect("react").parse(text, CATALOG)
    assert text[: result.end].rstrip().endswith('{"query": "x"}')


def test_react_tool_header_with_prose_keeps_prose() -> None:
    text = 'Sure.\n# Tool: HassTurnOff\n# Arguments: {"area": "kitchen"}'
    result = parse(text, CATALOG)
    assert _calls(result) == [("HassTurnOff", {"area": "kitchen"})]
    assert result.content == "Sure."


def test_react_prompt_stops_and_result() -> None:
    react = get_dialect("react")
    prompt = react.system_prompt(CATALOG)
    assert "Action Input:" in prompt
    assert "web_search(query: string" in prompt
    assert "Observation:" in react.stop_sequences()
    assert len(react.stop_sequences()) <= 4  # OpenAI's limit
    call = parse("Action: GetDateTime\nAction Input: {}", CATALOG).calls[0]
    assert (
        react.format_result(call, {"time": "12:00"}) == 'Observation: {"time": "12:00"}'
    )


# --- native -------------------------------------------------------------------
def test_native_string_and_object_arguments_and_ids() -> None:
    result = from_openai_tool_calls(
        [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "HassTurnOn",
                    "arguments": '{"name": "kitchen light"}',
                },
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "web_search", "arguments": {"q": "x"}},
            },
            {"id": "call_3", "function": {"name": "rm_rf", "arguments": "{}"}},
        ],
        CATALOG,
        content="<think>plan</think>On it.",
    )
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [
        ("call_1", "HassTurnOn", {"name": "kitchen light"}),
        ("call_2", "web_search", {"query": "x"}),
    ]
    assert [r.reason for r in result.rejected] == ["unknown tool: rm_rf"]
    assert result.content == "On it."
    assert result.text_parsed is False


def test_native_ids_a_request_could_not_carry_back_are_replaced() -> None:
    """A repeated id, one with a lone surrogate or an absurdly long one gets a
    fresh id: each result must find its call, and the next request must encode."""
    on = {"name": "HassTurnOn", "arguments": '{"name": "kitchen light"}'}
    ids = ["call_1", "call_1", "bad\ud800id", "x" * 129, "call_2"]
    result = from_openai_tool_calls([{"id": i, "function": on} for i in ids], CATALOG)
    got = [c.id for c in result.calls]
    assert got[0] == "call_1"
    assert got[4] == "call_2"
    assert len(set(got)) == 5
    assert all(len(i) <= 128 and i.isascii() for i in got)


def test_native_calls_past_the_reply_limit_are_one_refusal() -> None:
    """As in every text format: the first MAX_CALLS are read, the rest refused."""
    on = {"name": "HassTurnOn", "arguments": '{"name": "kitchen light"}'}
    result = from_openai_tool_calls(
        [{"id": f"c{i}", "function": on} for i in range(10_000)], CATALOG
    )
    assert len(result.calls) == MAX_CALLS
    assert [r.reason for r in result.rejected] == [TOO_MANY_CALLS]


_ON_PY = "HassTurnOn(name='kitchen light')"
_PY_LIST = f"[{', '.join([_ON_PY] * 100)}]"
_PY_LINES = f"{_ON_PY}\n" * 100
_JSON_LIST = f"[{', '.join([CALL] * 100)}]"


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        ("pythonic", _PY_LIST),
        ("pythonic", _PY_LINES),
        ("pythonic", f"<|tool_call_start|>{_PY_LIST}<|tool_call_end|>"),
        ("olmo3", f"<function_calls>{_PY_LINES}</function_calls>"),
        ("granite", f"<tool_call>{_JSON_LIST}</tool_call>"),
        ("mistral", f"[TOOL_CALLS]{_JSON_LIST}"),
        ("mistral", _JSON_LIST),
        ("hermes", f"<tool_call>{_JSON_LIST}</tool_call>"),
    ],
)
@pytest.mark.parametrize("through", ["own", "auto"])
def test_a_block_of_many_calls_is_read_up_to_the_reply_limit(
    dialect: str, text: str, through: str
) -> None:
    """However a format groups its calls (one list of a hundred is one block),
    the first MAX_CALLS are read and the rest is one refusal the model reads."""
    parser = resolve_dialect(dialect if through == "own" else "auto")
    result = parser.parse(text, CATALOG)
    assert len(result.calls) == MAX_CALLS
    assert [r.reason for r in result.rejected] == [TOO_MANY_CALLS]
    assert result.content == ""


def test_native_sdk_objects() -> None:
    class Fn:
        name = "GetDateTime"
        arguments = ""

    class Item:
        id = "abc"
        function = Fn()

    result = from_openai_tool_calls([Item()], CATALOG)
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [
        ("abc", "GetDateTime", {})
    ]


def test_native_text_parse_never_calls() -> None:
    result = get_dialect("native").parse(f"<tool_call>{CALL}</tool_call>", CATALOG)
    assert result.calls == []


# --- ids ------------------------------------------------------------------------
def test_synthesized_ids_are_unique_and_openai_style() -> None:
    result = parse(
        f"<tool_call>{CALL}</tool_call><tool_call>{CALL}</tool_call>", CATALOG
    )
    ids = [c.id for c in result.calls]
    assert len(set(ids)) == 2
    assert all(i.startswith("call_") and len(i) == 29 for i in ids)


@pytest.mark.parametrize(
    "tag",
    [
        "<tool_call>",
        "<tool_calls>",
        "<|tool_call|>",
        "[TOOL_CALLS]",
        "<function=",
        "<function_calls>",
        "<|START_ACTION|>",
        "<|tool_call>",
        "<minimax:tool_call>",
        "<seed:tool_call>",
        "<longcat_tool_call>",
        "<TOOLCALL>",
        "<|tool_call_start|>",
    ],
)
def test_a_tag_the_reasoning_only_mentions_does_not_swallow_the_answer(tag):
    """Issue 23's audit: ``<tool_call>`` named in a think block ran, unclosed,
    to the end of the reply, which was refused as a call cut off and never
    spoken."""
    text = f"<think>I could use {tag} but no need.</think>No action needed."
    result = resolve_dialect("auto").parse(text, CATALOG)
    assert result.calls == []
    assert result.rejected == []
    assert result.content == "No action needed."
