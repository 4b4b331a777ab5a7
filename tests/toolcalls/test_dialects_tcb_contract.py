"""Contract checks shared by the tagged-markup dialects (TC-B's files).

Every one of them: never raises on arbitrary text, never dispatches on prose,
never dispatches a name outside the catalog, still parses a reply that the
server cut at the dialect's own stop sequence, and stays fast on a megabyte of
its own markers (no quadratic scanning).
"""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings, strategies as st
import pytest

from custom_components.toolbelt.toolcalls import guard
from custom_components.toolbelt.toolcalls.registry import get_dialect
from tests.toolcalls.dialect_helpers import calls, catalog, parse

DIALECTS = (
    "pythonic",
    "granite",
    "gemma",
    "functionary",
    "deepseek",
    "gpt_oss",
    "command_r",
    "glm",
    "kimi_k2",
    "minimax",
    "nemotron",
    "apertus",
    "seed_oss",
)

# Fragments of every format, so random text often looks almost like a call.
FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "<|tool_call|>",
    "<|tool_call>",
    "<tool_call|>",
    "call:",
    "HassTurnOn",
    "GetDateTime",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    '"',
    "'",
    ":",
    ",",
    "=",
    "\n",
    " ",
    "<arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "functions.HassTurnOn:0",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<|channel|>",
    "<|message|>",
    "analysis",
    " to=functions.HassTurnOn",
    "<|START_ACTION|>",
    "<minimax:tool_call>",
    '<invoke name="HassTurnOn">',
    '<parameter name="name">',
    "</parameter>",
    "<TOOLCALL>",
    "<|tools_prefix|>",
    "<seed:tool_call>",
    "<function=HassTurnOn>",
    "<parameter=name>",
    ">>>",
    "all\n",
    "<think>",
    "</think>",
    "```tool_code\n",
    "```",
    '<|"|>',
    "<escape>",
    "name",
    "kitchen",
]

PROSE = st.text(
    alphabet=st.characters(
        whitelist_categories=("Lu", "Ll", "Nd", "Zs"), whitelist_characters=".,!?'-:;()"
    ),
    max_size=200,
)


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(FRAGMENTS) | PROSE, max_size=30))
def test_never_raises_and_only_dispatches_catalog_tools(dialect, pieces):
    result = parse(dialect, "".join(pieces))
    names = set(catalog().names)
    assert all(call.name in names for call in result.calls)
    assert isinstance(result.content, str)


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=60, deadline=None)
@given(text=PROSE)
def test_prose_never_dispatches(dialect, text):
    assert parse(dialect, text).calls == []


# A reply per dialect whose call block ends with the dialect's stop sequence.
STOPPED = {
    "pythonic": "<|tool_call_start|>[HassTurnOn(name='a')]<|tool_call_end|>",
    "deepseek": (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>HassTurnOn<｜tool▁sep｜>{"name": "a"}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "gpt_oss": (
        '<|channel|>commentary to=functions.HassTurnOn <|constrain|>json<|message|>{"name": "a"}'
        "<|call|>"
    ),
    "command_r": (
        '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "HassTurnOn", '
        '"parameters": {"name": "a"}}]<|END_ACTION|>'
    ),
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.HassTurnOn:0"
        '<|tool_call_argument_begin|>{"name": "a"}<|tool_call_end|><|tool_calls_section_end|>'
    ),
    "minimax": (
        '<minimax:tool_call><invoke name="HassTurnOn"><parameter name="name">a</parameter>'
        "</invoke></minimax:tool_call>"
    ),
    "nemotron": '<TOOLCALL>[{"name": "HassTurnOn", "arguments": {"name": "a"}}]</TOOLCALL>',
    "apertus": '<|tools_prefix|>[{"HassTurnOn": {"name": "a"}}]<|tools_suffix|>',
}


@pytest.mark.parametrize("dialect", sorted(STOPPED))
def test_reply_cut_at_the_stop_sequence_still_parses(dialect):
    """Servers drop the stop string itself; the call must survive without it."""
    raw = STOPPED[dialect]
    stops = get_dialect(dialect).stop_sequences()
    assert stops
    cut = min((raw.find(s) for s in stops if s in raw), default=-1)
    assert cut > 0
    assert calls(parse(dialect, raw[:cut])) == [("HassTurnOn", {"name": "a"})]
    assert calls(parse(dialect, raw)) == [("HassTurnOn", {"name": "a"})]


# One megabyte of each dialect's own opening markers, never closed.
FLOODS = {
    "pythonic": "[HassTurnOn(name='",
    "granite": '<|tool_call|>[{"name": ',
    "gemma": "<|tool_call>call:HassTurnOn{name:",
    "functionary": "<function=HassTurnOn>{",
    "deepseek": "<｜tool▁call▁begin｜>HassTurnOn<｜tool▁sep｜>{",
    "gpt_oss": "<|start|>assistant<|channel|>commentary to=functions.HassTurnOn<|message|>{",
    "command_r": "<|START_ACTION|>[{",
    "glm": "<tool_call>HassTurnOn<arg_key>name</arg_key><arg_value>",
    "kimi_k2": "<|tool_call_begin|>functions.HassTurnOn:0<|tool_call_argument_begin|>{",
    "minimax": '<minimax:tool_call><invoke name="HassTurnOn"><parameter name="name">',
    "nemotron": '<TOOLCALL>[{"name": ',
    "apertus": '<|tools_prefix|>[{"HassTurnOn": {',
    "seed_oss": "<seed:tool_call><function=HassTurnOn><parameter=name>",
}


@pytest.mark.parametrize("dialect", sorted(FLOODS))
def test_a_megabyte_of_markers_is_refused_quickly(dialect, monkeypatch):
    monkeypatch.setattr(guard, "MAX_REPLY_CHARS", 2_000_000)  # reach the scans
    marker = FLOODS[dialect]
    text = marker * (1_000_000 // len(marker))
    get_dialect(dialect).parse("warm-up", catalog())
    started = time.perf_counter()
    result = parse(dialect, text)
    elapsed = time.perf_counter() - started
    assert result.calls == []
    # Generous bound for a loaded CI box; the real figure is tens of ms.
    assert elapsed < 2.0, f"{dialect}: {elapsed:.2f}s"
