"""``Literals`` answers what one ``in`` per string would, however it groups them."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st
import pytest

from custom_components.toolbelt.toolcalls.reading.literals import Literals
from custom_components.toolbelt.toolcalls.registry import resolve_dialect

AUTO = resolve_dialect("auto")
# Every string set a chain looks for, and small ones that overlap themselves
# (``````` inside ````````, a word starting inside another and ending past it).
WORD_SETS = [
    *(step.triggers.words for step in AUTO._passes),  # type: ignore[attr-defined]
    AUTO._markup.words,  # type: ignore[attr-defined]
    AUTO._dropped.words,  # type: ignore[attr-defined]
    ("```", "```tool_", "```hass", "tool_call_begin", "<json>", ">>>"),
    ("<a", "<ab", "<abc", "<b", "<c>", "c><d", "<c><d>", "{", "x"),
    ("abab", "ababc", "abcab", "ab", "bab"),
]
PIECES = sorted({piece for words in WORD_SETS for piece in words} | {"<", ">", "`"})


def _expected(words: tuple[str, ...], text: str) -> int:
    return sum(1 << i for i, word in enumerate(words) if word in text)


@pytest.mark.parametrize("words", WORD_SETS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES) | st.text(max_size=6), max_size=20))
def test_mask_and_any_in_agree_with_in(
    words: tuple[str, ...], pieces: list[str]
) -> None:
    found = Literals(words)
    text = "".join(pieces)
    expected = _expected(found.words, text)
    assert found.mask(text) == expected
    assert found.any_in(text) == bool(expected)


def test_a_flood_of_overlapping_words_is_answered_whole() -> None:
    """Past the match cap the rest is looked up word by word: nothing is missed."""
    found = Literals(("```", "```tool_", "```hass"))
    text = "`" * 5_000 + "```hass"
    assert found.mask(text) == _expected(found.words, text) != 0
