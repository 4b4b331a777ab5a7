"""The readers' shortcuts answer exactly as the general path they skip.

Hermes finds which of its tag openers a reply holds in one scan; Python call
arguments of plain types skip the JSON-safety walk; a schema of one type the
value already has skips the type list. Each shortcut is checked here against
the general answer on generated inputs.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings, strategies as st

from custom_components.toolbelt.toolcalls.dialects import gemma, hermes, pythonic
from custom_components.toolbelt.toolcalls.reading import pycall
from custom_components.toolbelt.toolcalls.reading.schema import coerce_value

_FRAGMENTS = [
    *(tag[0] for tag in hermes.HERMES_TAGS),
    *(tag[1] for tag in hermes.HERMES_TAGS),
    "<tool",
    "<tool_call",
    "tool>",
    "<",
    ">",
    "<<",
    '{"name": "x"}',
    "text ",
    "\n",
]


@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=12).map("".join))
@settings(max_examples=400, deadline=None)
def test_hermes_present_tags_match_a_search_per_tag(text: str) -> None:
    # Past a few hundred "<" the text is searched tag by tag: also compared.
    for sample in (text, text + "<tool>" * 300):
        expected = [tag for tag in hermes.HERMES_TAGS if tag[0] in sample]
        assert list(hermes._present(sample, hermes.HERMES_TAGS)) == expected


class _Text(str):
    """A str subclass: no plain type, so the shortcuts leave it to the walk."""


_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.text(max_size=5).map(_Text),
    st.binary(max_size=3),
    st.complex_numbers(max_magnitude=10),
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner),
        st.dictionaries(st.text(max_size=3), inner, max_size=4),
        st.dictionaries(st.integers(), inner, max_size=2),
        st.dictionaries(st.text(max_size=3).map(_Text), inner, max_size=2),
    ),
    max_leaves=12,
)


def _walked(value: Any) -> bool:
    """JSON safety item by item (what the reader checked before its shortcuts)."""
    if value is None or isinstance(value, (str, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_walked(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) for key in value) and all(
            _walked(item) for item in value.values()
        )
    return False


@given(
    st.dictionaries(st.text(max_size=4), _VALUE, max_size=4),
    st.lists(_VALUE, max_size=3),
)
@settings(max_examples=600, deadline=None)
def test_python_argument_safety_shortcuts_agree_with_the_walk(
    kwargs: dict[str, Any], positional: list[Any]
) -> None:
    expected = _walked([kwargs, positional])
    assert pythonic._json_safe([kwargs, positional]) is expected
    if pythonic._plain_arguments(kwargs, positional):
        assert expected


_KINDS = ["string", "integer", "number", "boolean", "null", "array", "object", "x"]
_SCHEMA_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from(["1", "2.5", "yes", "off", "null", "[1]", '{"a": 1}', "x"]),
    st.lists(st.one_of(st.integers(), st.sampled_from(["1", "a"])), max_size=3),
    st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from([1, "2"])),
)


@given(st.sampled_from(_KINDS), _SCHEMA_VALUE, st.booleans())
@settings(max_examples=600, deadline=None)
def test_one_type_schema_coerces_as_the_type_list_does(
    kind: str, value: Any, nested: bool
) -> None:
    extra: dict[str, Any] = {}
    if nested and kind == "array":
        extra = {"items": {"type": "integer"}}
    elif nested and kind == "object":
        extra = {"properties": {"a": {"type": "string"}}}
    # A list of types takes the general path; one type as a string the shortcut.
    general = coerce_value({"type": [kind], **extra}, value)
    assert repr(coerce_value({"type": kind, **extra}, value)) == repr(general)


_GEMMA_PIECES = ["a", "Key_2", ":", ",", "{", "}", "[", "]", " ", "50", "-1.5", "1e3"]
_GEMMA_PIECES += ["true", "None", "x.y", "9" * 5000, "<", "<|", '"', "|>", "\n", "é"]


@given(
    st.sampled_from([gemma._G4_QUOTE, gemma._FG_QUOTE]),
    st.lists(
        st.sampled_from([*_GEMMA_PIECES, gemma._G4_QUOTE, gemma._FG_QUOTE]),
        max_size=16,
    ).map("".join),
)
@settings(max_examples=1500, deadline=None)
def test_flat_gemma_object_reads_as_the_reader_does(quote: str, body: str) -> None:
    # Flat objects are built from the pieces too, so the shortcut is taken often.
    for text in ("{" + body + "}", "{a:" + quote + body + quote + ",b:7}x"):
        try:
            flat = gemma._flat(text, 0, quote)
        except ValueError as err:
            flat = err
        if flat is None:
            continue
        reader = gemma._GemmaArgs(text, quote)
        try:
            expected: Any = (reader.obj(), reader.pos)
        except ValueError as err:
            expected = err
        assert repr(flat) == repr(expected)


_PY_NAMES = ["f", "HassTurnOn", "x.call", "a.b", "g", "h", "print", "None"]
_PY_KEYS = ["a", "b", "c", "d ", "e\t", "g", "h", "if"]
_PY_VALUES = ['"a b"', "'x'", "''", '"é"', "0", "-0", "1.5", "1e5", "-1E-5", "True"]
_PY_VALUES += ["null", " 7", "\n2", "1_0", "'\\n'", "07", "9" * 16, "x", "u'x'", "[1]"]
_PY_PIECES = ["(", ")", "[", "]", "=", ",", " ", "\n", "\t", "\r", ";", ".", "#"]
_PY_CALL = st.builds(
    "{}({}{})".format,
    st.sampled_from(_PY_NAMES),
    st.lists(
        st.builds(
            "{}={}".format, st.sampled_from(_PY_KEYS), st.sampled_from(_PY_VALUES)
        ),
        max_size=2,
    ).map(", ".join),
    st.sampled_from(["", ",", " ", "\n"]),
)


@st.composite
def _python_source(draw: st.DrawFn) -> str:
    glue = st.sampled_from([", ", ",", "\n", " \n\n", ",\n ", " ", ";"])
    source = draw(glue).join(draw(st.lists(_PY_CALL, min_size=1, max_size=3)))
    if draw(st.booleans()):
        source = f"[{source}]"
    if draw(st.booleans()):  # one slip anywhere
        at = draw(st.integers(0, len(source)))
        source = (
            source[:at] + draw(st.sampled_from(_PY_PIECES + _PY_VALUES)) + source[at:]
        )
    return source


@given(_python_source())
@settings(max_examples=1500, deadline=None)
def test_flat_python_calls_read_as_the_token_reader_does(source: str) -> None:
    flat = pycall._flat_calls(source)
    if flat is not None:
        assert repr(flat) == repr(pycall._token_calls(source))
