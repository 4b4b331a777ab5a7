"""Cheaper ways to build a call agree with the work they replace."""

from __future__ import annotations

import itertools
import json
import re

from hypothesis import given, settings, strategies as st
import pytest

from custom_components.toolbelt.toolcalls.reading import calls, jsonrepair
from custom_components.toolbelt.toolcalls.text import surrogates

# Text with lone surrogates, the characters next to them, and the escape
# ``repr`` writes for one.
_TEXT = st.text(
    st.sampled_from(
        ["a", " ", "é", "☕", "\ud800", "\udfff", "\\", "u", "d", "\ufffd"]
    ),
    max_size=6,
)
_LEAVES = (
    _TEXT
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.booleans()
    | st.none()
)
_JSONISH = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(_TEXT | st.integers(0, 3), inner, max_size=3)
        | st.tuples(inner)
    ),
    max_leaves=8,
)


def _strings(value):
    """Every string in ``value`` (keys too), tuples left out (never mended)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)


@settings(max_examples=500, deadline=None)
@given(_JSONISH)
def test_mend_all_answers_the_same_with_and_without_orjson(value) -> None:
    """orjson's refusal finds what ``repr`` finds: the same data comes back,
    and data with nothing to mend comes back as the same object."""
    fast = surrogates.mend_all(value)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(surrogates, "orjson", None)
        slow = surrogates.mend_all(value)
    assert repr(fast) == repr(slow)
    if "\\ud" not in repr(value):
        assert fast is value
    for text in _strings(fast):
        text.encode("utf-8")  # raises on a lone surrogate left behind


def test_call_ids_are_24_hex_digits_and_wrap_at_48_bits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ids keep the ``call_<24 hex>`` shape, counter past 48 bits included."""
    monkeypatch.setattr(calls, "_ID_COUNT", itertools.count(2**48 - 2))
    ids = [calls.new_call_id() for _ in range(4)]
    prefix = calls._ID_PREFIX
    assert ids == [
        f"{prefix}{n & 0xFFFFFFFFFFFF:012x}" for n in range(2**48 - 2, 2**48 + 2)
    ]
    assert ids[-1].endswith("000000000001")
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", one) for one in ids)


# JSON values in JSON's blanks and others, cut, doubled or preceded by a BOM.
_JSON_TEXT = st.builds(
    lambda blank, value, cut, tail, bom: (
        bom + blank + json.dumps(value)[: cut or None] + blank[::-1] + tail
    ),
    st.text(st.sampled_from(" \t\n\r\f\xa0"), max_size=3),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=6,
    ),
    st.integers(-3, 0),
    st.sampled_from(["", "x", "}", " 1", "{}"]),
    st.sampled_from(["", "", "\ufeff"]),
)


@settings(max_examples=600, deadline=None)
@given(text=_JSON_TEXT | st.text(st.sampled_from(' {}[]"1,:ae\\'), max_size=12))
def test_strict_loads_reads_what_json_loads_reads(text: str) -> None:
    """``loads_loose``'s first rung, the C scanner alone, answers as
    ``json.loads``: the same value, or a ``ValueError`` where it raises one."""
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            jsonrepair._strict_loads(text)
    else:
        assert jsonrepair._strict_loads(text) == expected
