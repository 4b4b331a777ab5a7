"""Adversarial replies stay cheap: no scan searches to the end once per block.

Each timed case was quadratic (or unbounded) once and took seconds at these
sizes; now it takes milliseconds. The bound is generous (a loaded 2-core box)
so the tests cannot flake, yet the old code could not meet it. The megabyte
cases lift the reply limit (``guard.MAX_REPLY_CHARS``) to reach the scans.
"""

from __future__ import annotations

from dataclasses import astuple
import time

import pytest

from custom_components.toolbelt.toolcalls import (
    ChainDialect,
    Dialect,
    LooseJSONError,
    StreamDetector,
    guard,
    loads_loose,
)
from custom_components.toolbelt.toolcalls.reading.markup import TOO_MANY_BLOCKS
from custom_components.toolbelt.toolcalls.reading.numbers import read_number
from custom_components.toolbelt.toolcalls.reading.scan import (
    MAX_BLOCKS,
    leading_json_calls,
)
from custom_components.toolbelt.toolcalls.reading.schema import (
    coerce_text_value,
    coerce_value,
)
from custom_components.toolbelt.toolcalls.registry import (
    detector_for,
    dialect_names,
    get_dialect,
    resolve_dialect,
)
from custom_components.toolbelt.toolcalls.text import fences
from custom_components.toolbelt.toolcalls.text.fences import find_fences
from custom_components.toolbelt.toolcalls.text.sanitize import clean

from .dialect_helpers import calls, catalog, expect, parse, parse_auto

BOUND = 1.0  # seconds; the real figures are tens of milliseconds
HARMONY = "<|channel|>analysis<|message|>thinking<|end|>"


def _timed(func, *args):
    started = time.perf_counter()
    result = func(*args)
    return result, time.perf_counter() - started


@pytest.mark.parametrize(
    ("block", "visible", "thought"),
    [
        (HARMONY, "", "thinking"),
        ("<think>a</think>b", "b", "a"),
        ("<think>a</think>b" + HARMONY, "b", "a\nthinking"),
    ],
    ids=["harmony analysis", "think", "mixed"],
)
def test_many_reasoning_blocks_split_in_linear_time(block, visible, thought):
    # Was ~5 s (harmony) to ~13 s (think) at 400 kB: every block searched
    # every opener from the start of the text again.
    count = 400_000 // len(block)
    (content, reasoning), elapsed = _timed(clean, block * count + "Done.")
    assert content == visible * count + "Done."
    assert reasoning == "\n".join([thought] * count)
    assert elapsed < BOUND, f"{elapsed:.2f}s"


def test_harmony_blocks_without_end_tokens_split_in_linear_time():
    # Each block ends where the next header starts; the searches for the
    # "<|end|>" and "<|start|>" that never come used to run to the end.
    text = (
        "<|channel|>analysis<|message|>x" * 20_000
        + "<|start|>assistant<|channel|>final<|message|>Done."
    )
    (content, reasoning), elapsed = _timed(clean, text)
    assert content == "Done."
    assert reasoning == "\n".join(["x"] * 20_000)
    assert elapsed < BOUND, f"{elapsed:.2f}s"


def test_many_fence_runs_left_open_in_linear_time():
    # 257 fences of different lengths, none closed by a line of its own run,
    # then 2 MB of short lines: each fence searched to the end (~5 s).
    runs = "".join("`" * k + " x\n" for k in range(3, 260))
    text = runs + "x\n" * 1_000_000
    found, elapsed = _timed(find_fences, text)
    # Each fence ends at the next, longer run, glued to its last body line.
    assert astuple(found[0]) == (0, 9, "x", 6, 6)
    assert len(found) == 129
    assert elapsed < BOUND, f"{elapsed:.2f}s"


FENCE_CASES = [
    ("```json\n{}\n```", [(0, 14, "json", 8, 11)]),
    # Only a line of exactly the opener's run closes it.
    ("````\na\n```\nb\n````\nc", [(0, 17, "", 5, 13)]),
    # A closer glued to the last body line.
    ('```json\n{"a": 1}```\nafter', [(0, 19, "json", 8, 16)]),
    ("```python\nprint(1)\n", [(0, 19, "python", 10, 19)]),
    # A run with a word after it opens a fence; it closes none (no glued closer).
    ('```json\n{"a": "```json\n{"a": 1}', [(0, 31, "json", 8, 31)]),
    ('```json\n{"a": 1}``` and more', [(0, 19, "json", 8, 16)]),
    # "```" has no closer line (ends glued); the later "~~~" fence has one.
    ("```a\nx```\n~~~b\ny\n~~~\nz", [(0, 9, "a", 5, 6), (10, 20, "b", 15, 17)]),
    ("  ```\n~~~\n```  \n", [(0, 15, "", 6, 10)]),
]


@pytest.mark.parametrize("failed_searches", [0, 2])
@pytest.mark.parametrize(("text", "expected"), FENCE_CASES)
def test_fences_are_the_same_whichever_way_closers_are_found(
    monkeypatch, failed_searches, text, expected
):
    # 0: the one-pass table of last closer lines from the start; 2: per-run
    # searches until two have missed.
    monkeypatch.setattr(fences, "_MAX_FAILED_SEARCHES", failed_searches)
    fences._find_fences.cache_clear()
    assert [astuple(f) for f in find_fences(text)] == expected
    fences._find_fences.cache_clear()


def test_a_megabyte_of_empty_json_lists_is_read_only_so_far():
    # Was ~3 s per dialect (16 s through ``auto``): one span per "[]", unbounded.
    text = "[]" * 500_000
    found, elapsed = _timed(leading_json_calls, text, catalog())
    assert len(found) == MAX_BLOCKS
    assert all(f.call is None for f in found)
    assert elapsed < BOUND, f"{elapsed:.2f}s"


def test_a_megabyte_long_python_string_is_refused_quickly(monkeypatch):
    monkeypatch.setattr(guard, "MAX_REPLY_CHARS", 2_000_000)
    text = "[HassTurnOn(name='" + "a" * 1_000_000
    parse("pythonic", "warm-up")
    result, elapsed = _timed(parse, "pythonic", text)
    assert result.calls == []
    assert elapsed < BOUND, f"{elapsed:.2f}s"


# -- Hostile input never raises and stays cheap (issue 10) --------------------
# These assert behaviour only; the timings are in bench/toolcalls_bench.py.

DIGITS_THEN_LETTER = "1" * 50_000 + "x"
LONG_INT = "9" * 4301  # one digit over Python's int-string limit
HERMES_CALL = (
    '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}</tool_call>'
)


@pytest.mark.parametrize(
    ("word", "value"),
    [("12", 12), ("-3", -3), ("+4", 4), ("1.5e3", 1500.0), ("12.", 12.0), (".5", 0.5)],
)
def test_numbers_still_read(word, value):
    number = read_number(word)
    assert number == value
    assert type(number) is type(value)


def test_a_digit_run_then_a_letter_is_a_word_not_a_number():
    # The old number pattern backtracked quadratically here: 20 kB took ~10 s.
    assert read_number(DIGITS_THEN_LETTER) is None
    assert loads_loose('{"a": ' + DIGITS_THEN_LETTER + "}") == {"a": DIGITS_THEN_LETTER}
    assert coerce_value({"type": "integer"}, DIGITS_THEN_LETTER) == DIGITS_THEN_LETTER
    gemma = parse(
        "gemma",
        f"<|tool_call>call:HassLightSet{{brightness:{DIGITS_THEN_LETTER}}}<tool_call|>",
    )
    assert gemma.calls[0].arguments == {"brightness": DIGITS_THEN_LETTER}


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        ("pythonic", f"[HassLightSet(brightness={LONG_INT})]"),
        (
            "hermes",
            '<tool_call>{"name": "HassLightSet", "arguments": {"brightness": '
            + LONG_INT
            + "}}</tool_call>",
        ),
        (
            "gemma",
            f"<|tool_call>call:HassLightSet{{brightness:{LONG_INT}}}<tool_call|>",
        ),
    ],
)
def test_an_integer_beyond_pythons_limit_is_refused_with_the_reason(dialect, text):
    for result in (parse(dialect, text), parse_auto(text)):
        assert result.calls == []
        assert "4301 digits" in result.rejected[0].reason


def test_a_huge_hex_literal_in_a_python_call_is_refused():
    # ast builds hex ints of any size, but str() of one fails later (json.dumps).
    result = parse("pythonic", "[HassLightSet(brightness=0x" + "f" * 4000 + ")]")
    assert result.calls == []
    assert result.rejected[0].reason.startswith("cannot read the call list: ")


def test_an_over_long_integer_in_an_xml_parameter_stays_text():
    # XML parameters are text: a value that does not convert is kept as it is
    # (like "very bright"), and validation tells the model the type is wrong.
    text = (
        "<tool_call><function=HassLightSet><parameter=brightness>"
        f"{LONG_INT}</parameter></function></tool_call>"
    )
    result = parse("qwen3_coder_xml", text)
    assert result.calls[0].arguments == {"brightness": LONG_INT}
    assert coerce_text_value({"type": "integer"}, LONG_INT) == LONG_INT


HOSTILE = {
    "open brackets": "[" * 16_000,
    "balanced brackets": "[" * 16_000 + "]" * 16_000,
    "nested objects": '{"a":' * 16_000 + "1" + "}" * 16_000,
    "600 lists in a python call": "[HassTurnOn(name=" + "[" * 600 + "]" * 600 + ")]",
    "600 lists in JSON arguments": '<tool_call>{"name": "HassTurnOn", "arguments":'
    ' {"name": ' + "[" * 600 + "]" * 600 + "}}</tool_call>",
    "functions. x1000": "functions." * 1000 + "HassTurnOn({})",
    "functions. x1000 in a tag": "<tool_call>"
    + "functions." * 1000
    + "HassTurnOn({})</tool_call>",
    "long int in python": f"[HassLightSet(brightness={LONG_INT})]",
    "long int in xml": "<tool_call><function=HassLightSet><parameter=brightness>"
    f"{LONG_INT}</parameter></function></tool_call>",
    "lone surrogates": "\ud800 <tool_call>\udfff" + HERMES_CALL + "\ud83d",
}


@pytest.mark.parametrize("dialect", ["auto", *dialect_names()])
def test_no_dialect_raises_on_hostile_input(dialect):
    for label, text in HOSTILE.items():
        result = resolve_dialect(dialect).parse(text, catalog())
        # The guard would have turned an exception into this reason.
        failed = [r for r in result.rejected if "could not be parsed" in r.reason]
        assert not failed, f"{dialect} on {label}: {failed[0].reason}"


@pytest.mark.parametrize(
    ("dialect", "label"),
    [
        ("pythonic", "600 lists in a python call"),
        ("hermes", "600 lists in JSON arguments"),
    ],
)
def test_deep_nesting_in_arguments_is_refused_with_the_reason(dialect, label):
    for result in (parse(dialect, HOSTILE[label]), parse_auto(HOSTILE[label])):
        assert result.calls == []
        assert "nested deeper than 64 levels" in result.rejected[0].reason


def test_a_call_between_lone_surrogates_is_still_found():
    result = parse_auto(HOSTILE["lone surrogates"])
    assert calls(result) == expect(("HassTurnOn", {"name": "kitchen"}))


class _Broken(Dialect):
    """Stands in for a parser bug."""

    name = "broken"

    def parse(self, text, catalog):
        raise RecursionError("maximum recursion depth exceeded")


def test_a_parser_that_raises_gives_a_refusal_and_keeps_the_text():
    result = _Broken().parse("<think>hm</think>The light is on.", catalog())
    assert result.calls == []
    assert result.rejected[0].reason == "the reply could not be parsed (RecursionError)"
    assert result.content == "The light is on."
    assert result.reasoning == "hm"


def test_a_member_that_raises_does_not_stop_the_chain():
    chain = ChainDialect([_Broken(), get_dialect("hermes")])
    result = chain.parse(HERMES_CALL, catalog())
    assert calls(result) == expect(("HassTurnOn", {"name": "kitchen"}))


def test_a_chain_whose_only_member_raises_refuses_and_keeps_the_text():
    result = ChainDialect([_Broken()]).parse("The light is on.", catalog())
    assert result.calls == []
    assert result.rejected[0].reason == "the reply could not be parsed (RecursionError)"
    assert result.content == "The light is on."


def test_a_reply_over_the_limit_is_refused_unread_and_kept(monkeypatch):
    monkeypatch.setattr(guard, "MAX_REPLY_CHARS", 200)
    text = "x" * 300 + HERMES_CALL
    result = parse_auto(text)
    assert result.calls == []
    assert "not read for tool calls" in result.rejected[0].reason
    assert result.rejected[0].raw == text
    assert result.content == "x" * 200
    assert parse_auto("x" * (200 - len(HERMES_CALL)) + HERMES_CALL).calls


def test_the_default_limit_refuses_a_runaway_reply():
    result = parse_auto("The light is on. " * 20_000)
    assert "340,000 characters" in result.rejected[0].reason


def test_json5_is_shared_out_per_reply():
    # json5 is ~40 µs a character; 200 values that each need it were seconds.
    block = (
        '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "kitchen"}'
        " /* c */}</tool_call>\n"
    )
    result = parse("hermes", block * 200)
    assert 5 < len(result.calls) < 64
    reasons = [r.reason for r in result.rejected]
    assert "json5 budget spent" in reasons[0], reasons
    assert reasons[-1] == "more than 64 calls in one reply"
    assert parse("hermes", block).calls


def test_one_value_gets_a_bounded_amount_of_json5():
    assert loads_loose("// comment\n{a: 0x10}") == {"a": 16}
    with pytest.raises(LooseJSONError, match="characters"):
        loads_loose("{a: 0x10, // c\n" + "b: 2, " * 400 + "}")


# -- Streaming: each chunk costs its own length ---------------------------------
# What the detector searches again on every chunk (``_buf``) stays bounded.

HELD_BOUND = 128


def _stream(text: str, size: int) -> tuple[str, int, StreamDetector]:
    detector = detector_for(resolve_dialect("auto"), catalog())
    out: list[str] = []
    held = 0
    for i in range(0, len(text), size):
        out.append(detector.feed(text[i : i + size]))
        held = max(held, len(detector._buf))
    out.append(detector.finish())
    return "".join(out), held, detector


def test_a_long_react_scratchpad_then_final_answer():
    # Was 23 s for 64 kB: the whole scratchpad was searched again per chunk.
    text = "Thought: " + "x" * 64_000 + "\nFinal   Answer: It is on."
    released, held, detector = _stream(text, 3)
    assert released == "It is on."
    assert held <= HELD_BOUND
    assert not detector.holding


def test_a_long_react_scratchpad_then_observation_holds():
    text = "Thought: look\nAction: web_search\n" + "y " * 32_000 + "\nObservation: z"
    released, held, detector = _stream(text, 1)
    assert released == ""
    assert held <= HELD_BOUND
    assert detector.holding


def test_leading_whitespace_waits_aside_and_is_never_spoken():
    text = " \n" * 32_000 + "Hello."
    released, held, _ = _stream(text, 4)
    assert released == "Hello."
    assert held <= HELD_BOUND


def test_a_line_of_spaces_is_released_once_it_cannot_be_indentation():
    text = "Hello.\n" + " " * 64_000 + "there"
    released, held, _ = _stream(text, 4)
    assert released == text
    assert held <= HELD_BOUND


def test_prose_full_of_tag_prefixes_then_a_call():
    prose = "a <tool_ca " * 6_000
    released, held, detector = _stream(prose + HERMES_CALL, 4)
    assert released == prose
    assert held <= HELD_BOUND
    assert detector.holding


@pytest.mark.parametrize(
    ("unit", "chars"),
    [
        # Each read ran to the end once per opener: 20 s, 13 s and 3 s at
        # 64,000 characters (0.16 s for ``<|python_tag|>``, 0.06 s for
        # ``[unused11]``: a megabyte makes the bound unreachable for their old
        # code too). Unclosed ``{"name": `` objects in prose cost 0.3 s at
        # 64,000 characters, under any bound a test can hold: the bench
        # prints that figure.
        ("functools[\n", 64_000),  # each list's lenient read, 64 levels deep
        ("~~~", 64_000),  # a fence line with no newline, backtracked per tilde
        ("<function=", 64_000),  # a tag name read to the end, per opener
        ("<|python_tag|>", 1_000_000),  # end tokens searched to the end, per tag
        ("[unused11]", 1_000_000),  # every token opener read
    ],
)
def test_a_run_of_one_opener_is_read_in_bounded_time(monkeypatch, unit, chars):
    monkeypatch.setattr(guard, "MAX_REPLY_CHARS", chars)
    text = (unit * (chars // len(unit) + 1))[:chars]
    result, spent = _timed(parse_auto, text)
    assert spent < BOUND, f"{unit!r}: {spent:.2f} s"
    assert result.calls == []


@pytest.mark.parametrize(
    ("text", "names", "tail"),
    [
        # The bound counts call openings, not mentions of a word.
        ("functools " * 260 + "And that is my answer.", [], "And that is my answer."),
        (
            "The functools module helps. " * 300
            + 'functools[{"name": "HassTurnOn", "arguments": {"name": "lamp"}}] Done.',
            ["HassTurnOn"],
            "Done.",
        ),
        # Empty blocks past the bound are no calls: the text after them stays.
        ("<|tool_call|><|/tool_call|>" * 300 + "Done, all on.", [], "Done, all on."),
        ("[unused11][unused12]" * 300 + "Done, all on.", [], "Done, all on."),
        ("<|python_tag|>" * 300 + " Done, all on.", [], "Done, all on."),
        # Many small unclosed values in prose do not stop the search.
        (
            "Your devices: "
            + "".join(f'[{{"name": "tv {i}", "size": "55"}}, ' for i in range(20))
            + '\n{"name": "HassTurnOn", "arguments": {"name": "kitchen light"}}',
            ["HassTurnOn"],
            '"55"},',
        ),
    ],
    ids=["word", "word-then-call", "empty-tags", "empty-tokens", "python-tags", "data"],
)
def test_the_bounds_keep_a_degenerate_answer_and_its_call(text, names, tail):
    result = parse_auto(text)
    assert [call.name for call in result.calls] == names
    assert result.rejected == []
    assert result.content.endswith(tail)


def test_call_openings_past_the_bound_are_refused_with_their_reason():
    """Past ``MAX_BLOCKS`` openings whose objects are no calls, the rest is
    refused unread (never spoken), saying why."""
    result = parse_auto('[unused11]{"a": 1}' * 300)
    assert result.calls == []
    assert [r.reason for r in result.rejected] == [TOO_MANY_BLOCKS]
    assert result.content.count('{"a": 1}') == MAX_BLOCKS
