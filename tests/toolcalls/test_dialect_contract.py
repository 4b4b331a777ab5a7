"""The contract every registered dialect keeps, run over the registry's table.

A dialect added to ``registry.DIALECTS`` fails here until ``WIRE`` holds one
call in its wire format; from the call the test derives the rest. For each
dialect, alone and through ``auto``: the call parses exactly; the same call
naming an unknown tool and the call cut inside its arguments are refused with
their reason, and nothing of them is dispatched or shown; prose (never a call)
keeps its text; a reply cut at the dialect's own stop sequence still parses;
random fragments of every format never raise or dispatch a tool outside the
catalog; and a megabyte of the dialect's own opening markup is refused.
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st
import pytest

from custom_components.toolbelt.toolcalls import Catalog, Dialect, ParseResult, guard
from custom_components.toolbelt.toolcalls.dialects.native import (
    from_openai_tool_calls,
)
from custom_components.toolbelt.toolcalls.reading.markup import MAX_CALLS
from custom_components.toolbelt.toolcalls.registry import DIALECTS, get_dialect
from tests.toolcalls.dialect_helpers import (
    calls,
    catalog,
    corpus_cases,
    engine_cases,
    expect,
    family_cases,
    parse,
    parse_auto,
    ws,
)

ON = expect(("HassTurnOn", {"name": "kitchen light"}))
ARGS = '{"name": "kitchen light"}'
Q = '<|"|>'  # Gemma's string quote

# One call of HassTurnOn(name="kitchen light") in each dialect's wire format.
WIRE: dict[str, str] = {
    "react": f"Thought: the light\nAction: HassTurnOn\nAction Input: {ARGS}",
    "hermes": f'<tool_call>\n{{"name": "HassTurnOn", "arguments": {ARGS}}}\n</tool_call>',
    "qwen": f'<tool_call>{{"name": "HassTurnOn", "arguments": {ARGS}}}</tool_call>',
    "qwen3_coder_xml": (
        "<tool_call>\n<function=HassTurnOn>\n<parameter=name>\nkitchen light\n"
        "</parameter>\n</function>\n</tool_call>"
    ),
    "llama3": f'<|python_tag|>{{"name": "HassTurnOn", "parameters": {ARGS}}}',
    "mistral": f'[TOOL_CALLS][{{"name": "HassTurnOn", "arguments": {ARGS}}}]',
    "xlam": f'[{{"name": "HassTurnOn", "arguments": {ARGS}}}]',
    "functools": f'functools[{{"name": "HassTurnOn", "arguments": {ARGS}}}]',
    "markdown_json": f'```json\n{{"name": "HassTurnOn", "arguments": {ARGS}}}\n```',
    "home_llm": f'```homeassistant\n{{"tool": "HassTurnOn", "arguments": {ARGS}}}\n```',
    "pythonic": "[HassTurnOn(name='kitchen light')]",
    "granite": f'<|tool_call|>[{{"name": "HassTurnOn", "arguments": {ARGS}}}]',
    "gemma": f"<|tool_call>call:HassTurnOn{{name:{Q}kitchen light{Q}}}<tool_call|>",
    "functionary": f">>>HassTurnOn\n{ARGS}",
    "deepseek": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>HassTurnOn<｜tool▁sep｜>"
        f"{ARGS}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "gpt_oss": (
        "<|channel|>commentary to=functions.HassTurnOn <|constrain|>json"
        f"<|message|>{ARGS}<|call|>"
    ),
    "command_r": (
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "HassTurnOn", '
        f'"parameters": {ARGS}}}]<|END_ACTION|>'
    ),
    "glm": (
        "<tool_call>HassTurnOn\n<arg_key>name</arg_key>\n"
        "<arg_value>kitchen light</arg_value>\n</tool_call>"
    ),
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.HassTurnOn:0"
        f"<|tool_call_argument_begin|>{ARGS}<|tool_call_end|><|tool_calls_section_end|>"
    ),
    "minimax": (
        '<minimax:tool_call><invoke name="HassTurnOn"><parameter name="name">'
        "kitchen light</parameter></invoke></minimax:tool_call>"
    ),
    "nemotron": f'<TOOLCALL>[{{"name": "HassTurnOn", "arguments": {ARGS}}}]</TOOLCALL>',
    "apertus": f'<|tools_prefix|>[{{"HassTurnOn": {ARGS}}}]<|tools_suffix|>',
    "seed_oss": (
        "<seed:tool_call>\n<function=HassTurnOn>\n<parameter=name>kitchen light"
        "</parameter>\n</function>\n</seed:tool_call>"
    ),
    "olmo3": "<function_calls>HassTurnOn(name='kitchen light')</function_calls>",
    "minicpm": (
        "<|thought_start|>\nturn it on\n<|thought_end|>\n<|tool_call_start|>\n"
        '```python\nHassTurnOn(name="kitchen light")\n```\n<|tool_call_end|>\n'
    ),
    "apriel": f'<tool_calls>[{{"name": "HassTurnOn", "arguments": {ARGS}}}]</tool_calls>',
    "longcat": (
        f'<longcat_tool_call>{{"name": "HassTurnOn", "arguments": {ARGS}}}'
        "</longcat_tool_call>"
    ),
    "internlm": (
        f'<|action_start|><|plugin|>{{"name": "HassTurnOn", "parameters": {ARGS}}}'
        "<|action_end|>"
    ),
    "gigachat": (
        "<|message_sep|>\n\nfunction call<|role_sep|>\n"
        f'{{"name": "HassTurnOn", "arguments": {ARGS}}}'
    ),
    "hy": (
        "<tool_calls>\n<tool_call>HassTurnOn<tool_sep>\n<arg_key>name</arg_key>\n"
        "<arg_value>kitchen light</arg_value>\n</tool_call>\n</tool_calls>"
    ),
    "dots": (
        '<dots_function_call>\n<invoke name="HassTurnOn">\n<parameter name="name">'
        "kitchen light</parameter>\n</invoke>\n</dots_function_call>"
    ),
    "solar_open": (
        "<|tool_call:start|>HassTurnOn\n<|tool_arg:start|>name<|tool_arg:value|>"
        "kitchen light<|tool_arg:end|>\n<|tool_call:end|>"
    ),
    "pangu": f'[unused11][{{"name": "HassTurnOn", "arguments": {ARGS}}}][unused12]',
    "plamo": (
        "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>"
        "<|plamo:begin_tool_name:plamo|>HassTurnOn<|plamo:end_tool_name:plamo|>"
        "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>"
        f"{ARGS}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>"
        "<|plamo:end_tool_requests:plamo|><|plamo:tag|>"
    ),
    "k2_horizon": (
        "<ifm|tool_calls><ifm|tool_call>HassTurnOn<ifm|arg_key>name</ifm|arg_key>"
        "<ifm|arg_value>kitchen light</ifm|arg_value></ifm|tool_call></ifm|tool_calls>"
    ),
    "inkling": (
        "<|message_model|>HassTurnOn<|content_invoke_tool_json|>"
        f'{{"name": "HassTurnOn", "args": {ARGS}}}<|end_message|>'
    ),
    "muse": (
        " to=self<|message|>Turn it on.<|eom|><|start|>assistant to=HassTurnOn"
        '<|message|><atem:function_calls>\n<atem:invoke name="HassTurnOn">\n'
        '<atem:parameter name="name">kitchen light</atem:parameter>\n</atem:invoke>\n'
        "</atem:function_calls><|eot|>"
    ),
}
TEXT_DIALECTS = sorted(WIRE)
UNKNOWN = "unknown tool: delete_all"
TRUNCATED = re.compile(r"truncated|never closed")

# More cut-off replies, from the engines' parser tests (content: what stays).
MORE_TRUNCATED: list[Any] = [
    ("apertus", '<|tools_prefix|>[{"HassTurnOn": {"name": "kitch', ""),
    (
        "command_r",  # llama.cpp R7B: cut off after the tool name
        "<|START_THINKING|>I'm\nthinking<|END_THINKING|><|START_ACTION|>[\n"
        '    {"tool_call_id": "0", "tool_name": "HassTurnOn", ',
        "",
    ),
    (
        "deepseek",  # vLLM: the JSON never closes before the end token
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>HassTurnOn\n"
        '```json\n{"name": "kitch',
        "",
    ),
    (
        "deepseek",
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="HassTurnOn">\n'
        '<｜DSML｜parameter name="name" string="true">kitch',
        "",
    ),
    ("functionary", '<function=HassTurnOn>{"name": "kitch', ""),
    ("gemma", f"<|tool_call>call:HassGetWeather{{name:{Q}London", ""),
    ("gemma", "<start_function_call>call:HassTurnOn{name:<escape>kitch", ""),
    ("gemma", "```tool_code\nHassTurnOn(name='kitch", ""),
    ("glm", "<tool_call>HassTurnOn<arg_key>name</arg_key><arg_value>a</arg_value>", ""),
    (
        "gpt_oss",
        "<|channel|>analysis<|message|>thinking<|end|><|start|>assistant<|channel|>"
        'commentary to=functions.HassTurnOn <|constrain|>json<|message|>{"name',
        "",
    ),
    ("granite", '<|tool_call|> [{"name": "HassTurnOn", "arguments": {', ""),
    (
        "granite",
        '<function_call> {"name": "HassTurnOn", "arguments": {"name": "kitch',
        "",
    ),
    ("granite", '<tool_call> [{"name": "HassTurnOn", "arguments": {"name": "kitch', ""),
    (
        "minimax",  # SGLang: the stream ended without </invoke>
        'Normal text before<minimax:tool_call><invoke name="HassTurnOn">'
        '<parameter name="name">a</parameter>',
        "Normal text before",
    ),
    (
        "minimax",
        '<tool_calls>\n{"name": "HassTurnOn", "arguments": {"name": "kitch',
        "",
    ),
    (
        "minimax",  # M3 (vLLM's parser test): cut inside a parameter's value
        'Sure.]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="HassTurnOn">'
        "]<]minimax[>[<name>kitch",
        "Sure.",
    ),
    ("nemotron", '<TOOLCALL>[{"name": "HassTurnOn", "arguments": {', ""),
    ("olmo3", "<function_calls>HassTurnOn(name='kitch", ""),
    (
        "minicpm",  # MiniCPM 4.1/5 XML, the function never closed
        '<function name="HassTurnOn"><param name="name">kitchen light</param>',
        "",
    ),
    (
        "longcat",  # the key/value form, cut inside a value
        "<longcat_tool_call>HassTurnOn<longcat_arg_key>name</longcat_arg_key>"
        "<longcat_arg_value>kitch",
        "",
    ),
    (
        "hy",  # HY 4 with a checkpoint's suffix on every tag, cut inside a value
        "Sure.<tool_calls:opensource><tool_call:opensource>HassTurnOn"
        "<arg_key:opensource>name</arg_key:opensource><arg_value:opensource>kitch",
        "Sure.",
    ),
    ("dots", '<dots_function_call>{"name": "HassTurnOn", "arguments": {"name": "k', ""),
    (
        "gigachat",  # GigaChat 3.1 header
        '<|function_call|>{"name": "HassTurnOn", "arguments": {"name": "kitch',
        "",
    ),
    ("solar_open", "Sure.<|tool_call:start|>HassTurnOn\n<|tool_arg:st", "Sure."),
    (
        "solar_open",  # cut inside a value
        "<|tool_call:start|>HassTurnOn\n<|tool_arg:start|>name<|tool_arg:value|>kit",
        "",
    ),
    (
        "deepseek",  # Step-3: cut inside the steptml invoke
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="HassTurnOn"><steptml:parameter name="name">kitch',
        "",
    ),
    ("hermes", '<tool_call>function\nHassTurnOn\n{"name": "kitch', ""),  # Step-Audio 2
    ("hermes", '<tool: function>\nHassTurnOn {"name": "kitch', ""),  # CWM
    (
        "gigachat",  # GigaChat 3.5 GCML, cut inside a parameter
        '<｜GCML｜tool_calls><｜GCML｜invoke name="HassTurnOn">'
        '<｜GCML｜parameter name="name" string="true">kitch',
        "",
    ),
    (
        "kimi_k2",  # Kimi K3 XTML, cut inside an argument after the answer
        "<|open|>response<|sep|>On it.<|close|>response<|sep|><|open|>tools<|sep|>"
        '<|open|>call tool="HassTurnOn" index="1"<|sep|>'
        '<|open|>argument key="name" type="string"<|sep|>kitch',
        "On it.",
    ),
    ("pythonic", "<|tool_call_start|>[HassTurnOn(name=", ""),
    ("pythonic", '<|tool_call_start|>[{"name": "HassTurnOn", "arguments": {"na', ""),
    ("pangu", 'Sure.<|tool_call_start|>[{"name": "HassTurnOn", "arg', "Sure."),
    (
        "plamo",  # cut before the name closes
        "Okay.<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>"
        "<|plamo:begin_tool_name:plamo|>HassTu",
        "Okay.",
    ),
    ("pythonic", "[HassTurnOn(name='a'), HassTurnOff(", ""),
    (
        "seed_oss",  # llama.cpp: a parameter value still streaming
        "<seed:tool_call>\n<function=memory_store>\n<parameter=tags>[1,\n",
        "",
    ),
    (
        "seed_oss",  # the function never closed
        "<seed:tool_call>\n<function=HassTurnOn>\n<parameter=name>a</parameter>\n",
        "",
    ),
]

# Prose that is never a call, for every dialect.
PROSE = [
    "The kitchen light is on.",
    "How can I help you today? I can check the weather for you.",
    "I turned on 3 lights: kitchen, hall and porch.",
]
# Prose that names a dialect's own markup, and the text that stays of it.
MORE_PROSE: list[Any] = [
    (
        "inkling",  # the call token named in prose, no call after it
        "Inkling writes <|content_invoke_tool_json|> blocks, but nothing to call here.",
        "Inkling writes blocks, but nothing to call here.",
    ),
    (
        "muse",  # the block named in the answer channel, no call
        " to=self<|message|>No call.<|eom|><|start|>assistant to=user<|message|>"
        "I write an <atem:function_calls> block to call a tool.<|eot|>",
        "I write an <atem:function_calls> block to call a tool.",
    ),
    (
        "k2_horizon",  # the group token named, no call inside
        "K2 Horizon writes <ifm|tool_calls> groups, but nothing to call here.",
        "K2 Horizon writes groups, but nothing to call here.",
    ),
    (
        "kimi_k2",  # Kimi K3: an answer channel, no call
        "<|open|>response<|sep|>The light is on.<|close|>response<|sep|>",
        "The light is on.",
    ),
    (
        "apertus",
        "Apertus uses <|tools_prefix|> markers, but nothing to call here.",
        "Apertus uses markers, but nothing to call here.",
    ),
    (
        "command_r",
        "Action: none needed — the garage door is already closed.",
        "Action: none needed — the garage door is already closed.",
    ),
    (
        "deepseek",  # llama.cpp: the marker named in reasoning with no call
        "I need to remember the syntax. It starts with <｜tool▁calls▁begin｜> and ends with",
        "I need to remember the syntax. It starts with and ends with",
    ),
    (
        "functionary",  # a first line that is not a tool, then JSON
        'Sure\n{"name": "kitchen light"}',
        'Sure\n{"name": "kitchen light"}',
    ),
    (
        "functionary",  # a known tool on the first line but no JSON body
        "HassTurnOn\nis the tool that switches things on.",
        "HassTurnOn\nis the tool that switches things on.",
    ),
    ("functionary", "In Python:\n>>> print(1)\n1", "In Python:\n>>> print(1)\n1"),
    (
        "functionary",
        "Functionary writes <function=NAME> tags, but no tool is needed here.",
        "Functionary writes <function=NAME> tags, but no tool is needed here.",
    ),
    (
        "command_r",
        'Action: here is the card\n```json\n{"type": "entities", "title": "Lights"}\n```',
        'Action: here is the card\n```json\n{"type": "entities", "title": "Lights"}\n```',
    ),
    (
        "command_r",
        "Command-R puts calls between <|START_ACTION|> markers, but not now.",
        "Command-R puts calls between markers, but not now.",
    ),
    (
        "granite",
        "Granite models emit <|tool_call|> before their calls, but I don't need one.",
        "Granite models emit before their calls, but I don't need one.",
    ),
    (
        "minimax",
        "This is a test: MiniMax wraps calls in <minimax:tool_call> tags.",
        "This is a test: MiniMax wraps calls in tags.",
    ),
    (
        "glm",
        "GLM writes <arg_key> and <arg_value> tags; nothing to call here.",
        "GLM writes <arg_key> and <arg_value> tags; nothing to call here.",
    ),
    (
        "granite",  # vLLM: JSON that is not in a call shape
        'Some text [{"title": "func"}]',
        'Some text [{"title": "func"}]',
    ),
    (
        "kimi_k2",
        "Kimi uses <|tool_calls_section_begin|> blocks, but I can answer directly.",
        "Kimi uses blocks, but I can answer directly.",
    ),
    (
        "nemotron",
        "Nemotron wraps calls in <TOOLCALL> tags; this answer needs none.",
        "Nemotron wraps calls in <TOOLCALL> tags; this answer needs none.",
    ),
    (
        "seed_oss",
        "Seed writes <seed:tool_call> blocks; not now.",
        "Seed writes blocks; not now.",
    ),
    (
        "olmo3",
        "OLMo 3 wraps calls in <function_calls> tags; nothing to call here.",
        "OLMo 3 wraps calls in <function_calls> tags; nothing to call here.",
    ),
    (
        "minicpm",  # the thought is reasoning, never spoken
        "<|thought_start|>\nNo tool is needed.\n<|thought_end|>\nIt is 21 degrees.",
        "It is 21 degrees.",
    ),
    (
        "apriel",  # Apriel 1.5: the reasoning and both markers are not spoken
        "Here are my reasoning steps:\nThe light is on.\n[BEGIN FINAL RESPONSE]\n"
        "The kitchen light is on.\n[END FINAL RESPONSE]",
        "The kitchen light is on.",
    ),
    (
        "apriel",  # Hunyuan's answer tags
        "<think>\nsimple\n</think>\n<answer>\nThe door is locked.\n</answer>",
        "The door is locked.",
    ),
    (
        "internlm",
        "InternLM's actions use <|action_start|>, none here.",
        "InternLM's actions use , none here.",
    ),
    (
        "gigachat",
        "A function call is not needed: the light is on.",
        "A function call is not needed: the light is on.",
    ),
    (
        "pangu",
        "[unused16]No call needed.[unused17]The light is on.",
        "The light is on.",
    ),
    (
        "plamo",  # reasoning, then the answer and the end of the turn
        "<|plamo:begin_think:plamo|>simple<|plamo:end_think:plamo|>It is on."
        "<|plamo:tag|>",
        "It is on.",
    ),
]


def _native(name: str, arguments: str) -> list[dict[str, Any]]:
    return [{"id": "call_1", "function": {"name": name, "arguments": arguments}}]


def _read(dialect: str, raw: str) -> list[ParseResult]:
    """The reply read by the dialect alone and by ``auto`` (native: its structured calls)."""
    if dialect == "native":
        return [from_openai_tool_calls(_native_calls(raw), catalog())]
    return [parse(dialect, raw), parse_auto(raw)]


def _native_calls(raw: str) -> list[dict[str, Any]]:
    """Native "wire format": the name and the arguments string of one call."""
    name, _, arguments = raw.partition(" ")
    return _native(name, arguments)


WIRE_ALL = {**WIRE, "native": f"HassTurnOn {ARGS}"}


def _cut(raw: str) -> str:
    """The reply cut off inside the argument value."""
    return raw[: raw.index("kitchen light") + len("kitch")]


def test_every_registered_dialect_has_a_wire_sample() -> None:
    assert set(WIRE_ALL) == set(DIALECTS)
    extra = [getattr(case, "values", case)[0] for case in MORE_TRUNCATED + MORE_PROSE]
    assert set(extra) <= set(DIALECTS)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_one_call_parses_exactly(dialect: str) -> None:
    for result in _read(dialect, WIRE_ALL[dialect]):
        assert calls(result) == ON
        assert result.rejected == []
        assert result.content == ""
        assert result.calls[0].id


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_unknown_tool_is_refused_with_the_reason(dialect: str) -> None:
    raw = WIRE_ALL[dialect].replace("HassTurnOn", "delete_all")
    for result in _read(dialect, raw):
        assert result.calls == []
        assert [r.reason for r in result.rejected] == [UNKNOWN]
        assert result.content == ""


def _example(dialect: str) -> str:
    """An answer that shows the dialect's call syntax with a placeholder name."""
    shown = WIRE[dialect].replace("HassTurnOn", "function_name")
    return f"{dialect} writes calls like this:\n```\n{shown}\n```\nThen it waits."


@pytest.mark.parametrize("dialect", TEXT_DIALECTS)
def test_a_fenced_example_of_the_syntax_stays_whole(dialect: str) -> None:
    """README: a closed fence whose calls name a placeholder is an example."""
    raw = _example(dialect)
    # MiniCPM's own inner fence closes the outer one: its end token then
    # stands outside any fence and goes as leaked scaffolding.
    content = raw.replace("<|tool_call_end|>\n", "") if dialect == "minicpm" else raw
    for result in (parse(dialect, raw), parse_auto(raw)):
        assert result.calls == []
        assert result.rejected == []
        assert result.content == content
    # Nothing of the example stays behind for the next reply.
    assert parse_auto("The light is on.").content == "The light is on."


@pytest.mark.parametrize(
    ("dialect", "raw", "content"),
    [(d, _cut(WIRE_ALL[d]), "") for d in sorted(DIALECTS)] + MORE_TRUNCATED,
)
def test_truncated_call_is_refused_with_the_reason(
    dialect: str, raw: str, content: str
) -> None:
    for result in _read(dialect, raw):
        assert result.calls == []
        assert result.rejected
        assert all(TRUNCATED.search(r.reason) for r in result.rejected), [
            r.reason for r in result.rejected
        ]
        assert ws(result.content) == ws(content)


@pytest.mark.parametrize(
    ("dialect", "raw", "content"),
    [(d, text, text) for d in sorted(DIALECTS) for text in PROSE] + MORE_PROSE,
)
def test_prose_is_not_a_call_and_keeps_its_text(
    dialect: str, raw: str, content: str
) -> None:
    for result in (parse(dialect, raw), parse_auto(raw)):
        assert result.calls == []
        assert result.rejected == []
        assert ws(result.content) == ws(content)


@pytest.mark.parametrize("dialect", TEXT_DIALECTS)
def test_reply_cut_at_the_stop_sequence_still_parses(dialect: str) -> None:
    """Servers drop the stop string itself; the call must survive without it."""
    raw = WIRE[dialect]
    stops = [s for s in get_dialect(dialect).stop_sequences() if s in raw]
    cut = min((raw.find(s) for s in stops), default=len(raw))
    assert calls(parse(dialect, raw[:cut])) == ON


# Fragments of every format, so random text often looks almost like a call.
FRAGMENTS = sorted(
    {piece for raw in WIRE.values() for piece in re.split(r"(kitchen light|\W)", raw)}
    | {"<think>", "</think>", "HassTurnOff", "delete_all", "\n", " "}
)
PROSE_TEXT = st.text(
    alphabet=st.characters(
        whitelist_categories=("Lu", "Ll", "Nd", "Zs"), whitelist_characters=".,!?'-:;()"
    ),
    max_size=200,
)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(FRAGMENTS) | PROSE_TEXT, max_size=30))
def test_never_raises_and_only_dispatches_catalog_tools(
    dialect: str, pieces: list[str]
) -> None:
    result = parse(dialect, "".join(pieces))
    assert {call.name for call in result.calls} <= set(catalog().names)
    assert isinstance(result.content, str)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
@settings(max_examples=40, deadline=None)
@given(text=PROSE_TEXT)
def test_random_prose_never_dispatches(dialect: str, text: str) -> None:
    assert parse(dialect, text).calls == []


# ReAct reads any text after ``Action Input:`` as the argument: nothing is unclosed.
@pytest.mark.parametrize("dialect", [d for d in TEXT_DIALECTS if d != "react"])
def test_a_flood_of_opening_markup_is_refused(
    dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """256 kB of a call's opening, never closed (speed: bench/toolcalls_bench.py)."""
    monkeypatch.setattr(guard, "MAX_REPLY_CHARS", 1_000_000)  # reach the scans
    opening = WIRE[dialect][: WIRE[dialect].index("kitchen light")]
    result = parse(dialect, opening * (256_000 // len(opening)))
    assert result.calls == []
    # Capped like every dialect: the calls up to the cap, then the rest at once.
    assert 0 < len(result.rejected) <= MAX_CALLS + 1
    assert result.content == ""


def _markup(result: ParseResult) -> bool:
    return bool(result.calls or result.rejected or result.end is not None)


SUBSUMED = [
    (name, other)
    for name in sorted(DIALECTS)
    for other in get_dialect(name).subsumed_by
]
FIXTURE_TEXTS = [
    case["raw"] for case in (*corpus_cases(), *engine_cases(), *family_cases())
]


@pytest.mark.parametrize(("dialect", "reader"), SUBSUMED)
def test_a_subsumed_dialect_finds_nothing_where_its_reader_found_nothing(
    dialect: str, reader: str
) -> None:
    """A chain skips a member once a dialect that reads all it reads found
    nothing (``Dialect.subsumed_by``): over every fixture, and random text."""
    for text in FIXTURE_TEXTS + list(WIRE.values()):
        if not _markup(parse(reader, text)):
            assert not _markup(parse(dialect, text)), text


@pytest.mark.parametrize(("dialect", "reader"), SUBSUMED)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(FRAGMENTS) | PROSE_TEXT, max_size=30))
def test_subsumption_holds_on_random_markup(
    dialect: str, reader: str, pieces: list[str]
) -> None:
    text = "".join(pieces)
    if not _markup(parse(reader, text)):
        assert not _markup(parse(dialect, text))


# Dialects with their own ``may_match``: a chain does not let them read a
# reply when it says no, so it must only say no where they find nothing.
PRECISE = sorted(
    name
    for name in DIALECTS
    if type(get_dialect(name)).may_match is not Dialect.may_match
)
# Where the precise checks say no: Python call lists, JSON bodies in a tag,
# and the lists that are markup although they hold no call.
NEAR_MISSES = [
    "[]",
    "[ ,]",
    " [\n]x",
    "<think>a</think>[]",
    '[HassTurnOn(name="kitchen light")]',
    "[see below] for the list",
    "[_x]",
    '<tool_call>{"name": "HassTurnOn", "arguments": {}}</tool_call>',
    "<tool_call>HassTurnOn</tool_call>",
    "<tool_call>HassTurnOn",
    "<tool_call>\nHassTurnOn\n<arg_key>name",
    'HassTurnOn\n{"name": "kitchen light"}',
    "all\nThe light is on.",
    "[TOOL_CALLS]HassTurnOn[ARGS]{}",
]


def _turned_away(dialect: Dialect, text: str) -> bool:
    """Whether a chain skips the dialect for ``text``: none of its triggers is in
    it (every member's, found in one scan), or ``may_match`` says no."""
    triggered = not dialect.triggers or any(t in text for t in dialect.triggers)
    if not triggered and dialect.name == "xlam" and "<tool_call>" in text:
        # xlam refuses a <tool_call> body that is not JSON, a tag it has no
        # trigger for: glm, Hermes or qwen3_coder_xml read or refuse it first.
        return False
    return not triggered or not dialect.may_match(text)


@pytest.mark.parametrize("dialect", PRECISE)
def test_a_dialect_whose_may_match_says_no_finds_nothing(dialect: str) -> None:
    """Nor one whose triggers are all missing: the chain asks ``may_match`` only
    when one is there. Over every fixture, wire sample and near miss."""
    found = get_dialect(dialect)
    for text in FIXTURE_TEXTS + list(WIRE.values()) + NEAR_MISSES:
        if _turned_away(found, text):
            assert not _markup(parse(dialect, text)), text


@pytest.mark.parametrize("dialect", PRECISE)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(st.sampled_from(FRAGMENTS + NEAR_MISSES) | PROSE_TEXT, max_size=30)
)
def test_may_match_holds_on_random_markup(dialect: str, pieces: list[str]) -> None:
    text = "".join(pieces)
    if _turned_away(get_dialect(dialect), text):
        assert not _markup(parse(dialect, text))


CLEANERS = sorted(name for name in DIALECTS if get_dialect(name).cleans)


def test_every_own_sanitize_says_what_it_cleans() -> None:
    """Without ``cleans`` a chain runs every member's cleanup on every answer."""
    own = {
        name
        for name in DIALECTS
        if type(get_dialect(name)).sanitize is not Dialect.sanitize
    }
    assert own <= set(CLEANERS)


@pytest.mark.parametrize("dialect", CLEANERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(FRAGMENTS) | PROSE_TEXT, max_size=30))
def test_sanitize_keeps_a_text_without_what_it_cleans(
    dialect: str, pieces: list[str]
) -> None:
    found = get_dialect(dialect)
    for text in ("".join(pieces), *FIXTURE_TEXTS):
        if not any(word in text for word in found.cleans):
            assert found.sanitize(text) == text, text


# A merged API's tools (HA 2026.10 names): two share a long value list.
DEVICE_CLASSES = ["awning", "blind", "curtain", "damper", "door", "garage", "gate"]
SWITCHES = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "device_class": {
            "type": "array",
            "items": {"type": "string", "enum": DEVICE_CLASSES},
        },
    },
    "additionalProperties": False,
}
MERGED = Catalog.from_openai(
    [
        {"name": "assist__intent__HassTurnOn", "parameters": SWITCHES},
        {"name": "assist__intent__HassTurnOff", "parameters": SWITCHES},
        {
            "name": "toolbelt-tools__memory",
            "description": "Long-term memory.",
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": ["search", "store"]},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                },
                "required": ["action"],
            },
        },
    ]
)


@pytest.mark.parametrize("dialect", TEXT_DIALECTS)
def test_prompt_lists_every_tool_once_and_shows_the_format(dialect: str) -> None:
    """A text format's system prompt is its catalog and its call syntax.

    Every tool by its exact name, with what the model needs (arguments,
    types, enums, ranges); a value list two tools share written once; no
    ``additionalProperties``; no other tool name (the instructions use
    placeholders); and the markup the dialect reads.
    """
    found = get_dialect(dialect)
    prompt = found.system_prompt(MERGED)
    for name in MERGED.names:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", prompt), name
    named = re.findall(r"[\w-]+__[\w-]+|\b(?:Hass|Get)[A-Z]\w*", prompt)
    assert set(named) <= set(MERGED.names)
    assert "additionalProperties" not in prompt
    assert prompt.count('"garage"') == 1
    for needed in ("device_class", "limit", "search", "store", "20"):
        assert needed in prompt
    shown = (*found.markers, *found.start_markers, *found.triggers)
    opening = WIRE[dialect][: WIRE[dialect].index("HassTurnOn")]
    assert opening in prompt or any(
        mark in prompt for mark in shown if mark not in ("{", "[", "\n")
    )
