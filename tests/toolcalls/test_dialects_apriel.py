"""Apriel 1.5/1.6: reasoning, then ``[BEGIN FINAL RESPONSE]``, the answer and
``<tool_calls>[...]</tool_calls>``.

Reasoning comes either opened by the prompt ("Here are my reasoning steps:",
models/templates/Apriel-1.6-15b-Thinker-fixed.jinja in ggml-org/llama.cpp) or
in a ``<thinking>`` block (ochafik/llama.cpp tests/chat-parsers/
test-apriel-1-5.cpp) or a ``<think>`` block; either way nothing before the
answer marker, nor the markers, is spoken.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import calls, expect, parse, parse_auto

CALL = '<tool_calls>[{"name": "HassTurnOn", "arguments": {"name": "kitchen light"}}]</tool_calls>'


@pytest.mark.parametrize(
    ("opener", "closer"),
    [("<think>", "</think>"), ("<thinking>", "</thinking>")],
    ids=["think", "thinking"],
)
@pytest.mark.parametrize(
    ("answer", "expected", "content"),
    [
        (
            f"{CALL}\n[END FINAL RESPONSE]",
            expect(("HassTurnOn", {"name": "kitchen light"})),
            "",
        ),
        (
            "The porch light is on.\n[END FINAL RESPONSE]\n<|end|>",
            [],
            "The porch light is on.",
        ),
    ],
    ids=["call", "answer"],
)
def test_answer_marker_after_a_reasoning_block(
    opener, closer, answer, expected, content
):
    raw = f"{opener}The user wants the kitchen light on.{closer}\n[BEGIN FINAL RESPONSE]\n{answer}"
    for result in (parse("apriel", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert result.content == content
        assert result.reasoning == "The user wants the kitchen light on."


def test_reasoning_after_the_block_is_reasoning_too():
    raw = "<think>Lights.</think>\nThe kitchen one.\n[BEGIN FINAL RESPONSE]\nDone."
    for result in (parse("apriel", raw), parse_auto(raw)):
        assert result.content == "Done."
        assert result.reasoning == "Lights.\nThe kitchen one."


@pytest.mark.parametrize(
    ("answer", "expected", "content", "refused"),
    [
        ("No action needed.\n[END FINAL RESPONSE]", [], "No action needed.", []),
        (
            f"Turning it on.\n{CALL}\n[END FINAL RESPONSE]",
            expect(("HassTurnOn", {"name": "kitchen light"})),
            "Turning it on.",
            [],
        ),
        # A call cut off in the answer is still refused (once).
        (
            '<tool_calls>[{"name": "HassTurnOn", "arguments": {"name": "kitch',
            [],
            "",
            ["call is truncated"],
        ),
    ],
    ids=["answer", "call", "call-cut-off"],
)
def test_an_unclosed_tag_in_the_reasoning_is_a_mention(
    answer, expected, content, refused
):
    """A ``<tool_calls>`` the reasoning mentions neither swallows the answer
    nor is refused as a call cut off."""
    raw = f"I could use <tool_calls> but no need.\n[BEGIN FINAL RESPONSE]\n{answer}"
    for result in (parse("apriel", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert result.content == content
        assert [r.reason for r in result.rejected] == refused
        assert result.reasoning == "I could use <tool_calls> but no need."


@pytest.mark.parametrize(
    ("answer", "spoken"),
    [
        (
            "Magistral ends its reasoning with [/THINK] and then answers.",
            "Magistral ends its reasoning with [/THINK] and then answers.",
        ),
        (
            "Answer: yes, [BEGIN FINAL RESPONSE] is Apriel's marker.",
            "Answer: yes, [BEGIN FINAL RESPONSE] is Apriel's marker.",
        ),
    ],
)
def test_a_marker_named_inside_a_sentence_stays_in_the_answer(answer, spoken):
    """Only a marker opening a line ends the reasoning: one inside a sentence
    after a think block is the answer naming it (found by a review: the
    answer lost everything before it)."""
    result = parse_auto(f"<think>The user asks.</think>{answer}")
    assert result.calls == []
    assert result.content == spoken
