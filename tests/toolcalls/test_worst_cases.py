"""Adversarial replies stay cheap: no scan searches to the end once per block.

Each timed case was quadratic (or unbounded) once and took seconds at these
sizes; now it takes milliseconds. The bound is generous (a loaded 2-core box)
so the tests cannot flake, yet the old code could not meet it.
"""

from __future__ import annotations

from dataclasses import astuple
import time

import pytest

from custom_components.toolbelt.toolcalls import fences
from custom_components.toolbelt.toolcalls.fences import find_fences
from custom_components.toolbelt.toolcalls.sanitize import clean
from custom_components.toolbelt.toolcalls.scan import MAX_BLOCKS, leading_json_calls

from .dialect_helpers import catalog, parse

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


def test_a_megabyte_long_python_string_is_refused_quickly():
    text = "[HassTurnOn(name='" + "a" * 1_000_000
    parse("pythonic", "warm-up")
    result, elapsed = _timed(parse, "pythonic", text)
    assert result.calls == []
    assert elapsed < BOUND, f"{elapsed:.2f}s"
