"""Property tests: parsing never raises and never dispatches on random prose."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings, strategies as st

from custom_components.toolbelt.toolcalls import (
    loads_loose,
    parse,
    resolve_dialect,
)
from custom_components.toolbelt.toolcalls.reading.jsonrepair import LooseJSONError
from custom_components.toolbelt.toolcalls.registry import detector_for
from tests.toolcalls.dialect_helpers import catalog

CATALOG = catalog()
AUTO = resolve_dialect("auto")
SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=list(HealthCheck)
)

# Fragments that look like protocol, mixed with text, to reach the parsers' edges.
FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "functools[",
    "Action:",
    "Action Input:",
    "Thought:",
    "Observation:",
    "Final Answer:",
    "# Tool:",
    "```json\n",
    "```",
    "<think>",
    "</think>",
    '{"name": "HassTurnOn"',
    '"arguments": {',
    "}",
    "]",
    "[",
    "{",
    '"',
    "'",
    "\\",
    "\n",
    "<function=",
    "</function>",
    "<parameter=",
    "HassTurnOn",
    "web_search(",
    ")",
    ",",
    ":",
    "<|channel|>",
    "<｜tool▁calls▁begin｜>",
]
protocolish = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=30
).map("".join)

# Prose: letters, digits, spaces and sentence punctuation, no protocol syntax.
prose = st.text(
    alphabet=st.characters(
        whitelist_categories=("Lu", "Ll", "Nd", "Zs"), whitelist_characters=".,!?;-'()"
    ),
    max_size=300,
)


@SETTINGS
@given(protocolish)
def test_parse_never_raises(text: str) -> None:
    result = parse(text, CATALOG)
    assert isinstance(result.content, str)
    for call in result.calls:
        assert call.name in CATALOG
        assert isinstance(call.arguments, dict)
        assert call.id


@SETTINGS
@given(prose)
def test_random_prose_never_dispatches(text: str) -> None:
    result = AUTO.parse(text, CATALOG)
    assert result.calls == []
    assert result.rejected == []
    assert " ".join(result.content.split()) == " ".join(text.split())


@SETTINGS
@given(prose, st.sampled_from(CATALOG.names))
def test_prose_mentioning_a_tool_never_dispatches(text: str, name: str) -> None:
    sentence = f"{text} You could use {name}() or {name} for that, but I did not."
    assert AUTO.parse(sentence, CATALOG).calls == []


@SETTINGS
@given(st.text(max_size=200))
def test_loose_json_only_raises_its_own_error(text: str) -> None:
    with contextlib.suppress(LooseJSONError):
        loads_loose(text)


@SETTINGS
@given(protocolish, st.integers(min_value=1, max_value=9))
def test_detector_never_raises_and_releases_a_prefix(text: str, size: int) -> None:
    detector = detector_for(AUTO)
    released = "".join(
        detector.feed(text[i : i + size]) for i in range(0, len(text), size)
    )
    released += detector.finish()
    assert len(released) <= len(text)
