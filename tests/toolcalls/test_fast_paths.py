"""Fast paths on the shared reading path agree with the full work they skip."""

from __future__ import annotations

import re

from hypothesis import given, settings, strategies as st

from custom_components.toolbelt.toolcalls.model import RejectedCall, ToolCall
from custom_components.toolbelt.toolcalls.reading.calls import (
    Found,
    build_result,
    reply_start,
)
from custom_components.toolbelt.toolcalls.text import sanitize

# Pieces that wake one layer of ``clean`` or another, and plain words.
_PIECES = [
    "Sure",
    " ",
    "\n",
    "\n\n\n",
    "ok.",
    ":",
    "Assistant:",
    "\nUser:",
    "[b]",
    "[/b]",
    "<think>",
    "</think>",
    "[THINK]",
    "Here are my reasoning steps:",
    "[BEGIN FINAL RESPONSE]",
    "<tool_call>",
    "<|im_end|>",
    "```",
    "~~~",
    "{",
    '{"action": "Final Answer", "action_input": "hi"}',
    "Thought:",
    "Action:",
    "é",
]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)


def _drop_word(text: str) -> str:
    return text.replace("ok.", "")


def _add_layer(text: str) -> str:
    return text.replace("Sure", "<think>Sure</think>")


@settings(max_examples=400, deadline=None)
@given(_TEXTS, st.sampled_from([None, _drop_word, _add_layer]))
def test_clean_without_layer_characters_agrees_with_every_layer(
    text: str, dialect_sanitize
) -> None:
    """Content holding nothing a layer reads skips the layers: same answer."""
    assert sanitize.clean(text, dialect_sanitize) == sanitize._clean_layers(
        text, dialect_sanitize
    )


def test_clean_plain_answer() -> None:
    assert sanitize.clean("  The kitchen light is on.\n") == (
        "The kitchen light is on.",
        "",
    )
    assert sanitize.clean("Sure.\n \n\n\nDone.") == ("Sure.\n\nDone.", "")


_CALL = ToolCall("call_1", "HassTurnOn", {"name": "kitchen light"})
_REFUSED = RejectedCall("nope", "<tool_call>x</tool_call>", "unknown tool: nope")


@settings(max_examples=300, deadline=None)
@given(
    _TEXTS,
    st.integers(0, 40),
    st.integers(0, 40),
    st.sampled_from([_CALL, _REFUSED, None]),
)
def test_one_span_result_agrees_with_the_general_cut(
    text: str, start: int, length: int, call
) -> None:
    """One span builds its result directly; a duplicate span (which cuts
    nothing more) sends the same reply through the general loop."""
    text = text.replace("```", "").replace("~~~", "")
    start = min(start, len(text))
    end = min(start + length, len(text))
    one = build_result(text, [Found(start, end, call)], "hermes")
    general = build_result(
        text, [Found(start, end, call), Found(start, end, None)], "hermes"
    )
    assert one == general


# The leading pieces one at a time: the loop ``reply_start`` ran before its
# pattern took the whole run in one match.
_ONE_PIECE = re.compile(
    r"(?:\s+|<think>.*?</think>|<\|im_start\|>assistant|<\|start_header_id\|>assistant"
    r"<\|end_header_id\|>|<\|python_tag\|>|<\|START_RESPONSE\|>|\[THINK\].*?\[/THINK\])",
    re.S,
)


def _reply_start_piecewise(text: str) -> int:
    pos = 0
    lone = text.find("</think>")
    if lone >= 0 and text.find("<think>", 0, lone) < 0:
        pos = lone + len("</think>")
    while True:
        match = _ONE_PIECE.match(text, pos)
        if not match or match.end() == pos:
            return pos
        pos = match.end()


_LEADING_PIECES = st.lists(
    st.sampled_from(
        [
            " ",
            "\n",
            "\u2003",
            "<think>a</think>",
            "<think>",
            "</think>",
            "<|im_start|>assistant",
            "<|python_tag|>",
            "[THINK]x[/THINK]",
            "[THINK]",
            "<",
            "[",
            '{"name": "x"}',
            "hi",
        ]
    ),
    max_size=8,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_LEADING_PIECES)
def test_reply_start_agrees_with_the_piecewise_scan(text: str) -> None:
    assert reply_start(text) == _reply_start_piecewise(text)
