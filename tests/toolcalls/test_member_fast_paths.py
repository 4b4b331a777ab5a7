"""Chain members' fast paths agree with the full reading they skip."""

from __future__ import annotations

from hypothesis import example, given, settings, strategies as st
import pytest

from custom_components.toolbelt.toolcalls.dialects.granite import GraniteDialect
from custom_components.toolbelt.toolcalls.registry import (
    DIALECTS,
    get_dialect,
    resolve_dialect,
)
from tests.toolcalls.dialect_helpers import corpus_cases, engine_cases, family_cases

# Pieces of ``<tool_call>`` replies: strict objects, loose and cut ones,
# arrays, Python calls, blanks (ASCII and not) and stray tags.
_TAG_PIECES = [
    "<tool_call>",
    "</tool_call>",
    "<tool_call>",
    "</tool_call>",
    '{"name": "HassTurnOn", "arguments": {"name": "kitchen light"}}',
    '{"name": "HassTurnOn", "arguments": {"name": "</tool_call>"}}',
    '{"a": "<tool_call>"}',
    "{name: get_time}",
    '{"name": "x", "arguments": {',
    "[]",
    '[{"name": "HassTurnOn", "arguments": {}}]',
    "HassTurnOn(name='kitchen light')",
    ", ",
    "\n",
    " ",
    "\u00a0",
    "\x0b",
    "ok",
    "<tool_response>",
]
_TAG_TEXTS = st.lists(st.sampled_from(_TAG_PIECES), max_size=10).map("".join)


def _texts() -> list[str]:
    cases = [*corpus_cases(), *engine_cases(), *family_cases()]
    return [case["raw"] for case in cases if "<tool_call>" in case["raw"]]


@settings(max_examples=600, deadline=None)
@given(_TAG_TEXTS)
# An unclosed block whose string holds the opener ends there, inside the value.
@example('<tool_call>{"a": "<tool_call>"}')
@example('<tool_call>{"name": "x"}\n</tool_call>\u00a0<tool_call>[]')
def test_granite_may_match_agrees_with_reading_every_block(text: str) -> None:
    """The strict-object-then-closer shortcut answers as ``tag_blocks`` would."""
    granite = GraniteDialect()
    assert granite.may_match(text) == granite._odd_block(text)


def test_granite_may_match_agrees_on_the_fixtures() -> None:
    granite = GraniteDialect()
    texts = _texts()
    assert len(texts) > 20
    assert [t for t in texts if granite.may_match(t) != granite._odd_block(t)] == []


@pytest.mark.parametrize("name", [*DIALECTS, "auto"])
def test_cleanup_of_nothing_is_nothing(name: str) -> None:
    """``clean`` returns an empty content unread: no cleanup makes text."""
    dialect = resolve_dialect("auto") if name == "auto" else get_dialect(name)
    assert dialect.sanitize("") == ""
