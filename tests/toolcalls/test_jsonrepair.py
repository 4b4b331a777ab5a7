"""The loose-JSON ladder: repair the slips, refuse what was cut off."""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls.reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    decode_arguments,
    find_json_end,
    loads_loose,
    scan_json,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ("{'area': 'kitchen'}", {"area": "kitchen"}),
        (
            '{"area": "kitchen", "brightness": 50,}',
            {"area": "kitchen", "brightness": 50},
        ),
        ("[1, 2,]", [1, 2]),
        ("{area: kitchen}", {"area": "kitchen"}),
        (
            "{name: living room lamp, on: True}",
            {"name": "living room lamp", "on": True},
        ),
        ("{'a': None, 'b': False}", {"a": None, "b": False}),
        ('{"name": "x", "arguments": {"a": 1}', {"name": "x", "arguments": {"a": 1}}),
        ('{"name": "porch light"}}', {"name": "porch light"}),
        ('["a", "b"]}', ["a", "b"]),
        ('[{"a": 1} {"b": 2}]', [{"a": 1}, {"b": 2}]),
        ('{"a": [1, 2}', {"a": [1, 2]}),
        ("{'item': 'Ben\\'s sauce'}", {"item": "Ben's sauce"}),
        ('{"a": "\\u00e9"}', {"a": "é"}),
        ("// comment\n{a: 0x10}", {"a": 16}),
        ("True", True),
    ],
)
def test_repairs(text: str, value: object) -> None:
    assert loads_loose(text) == value


@pytest.mark.parametrize(
    "text",
    [
        '{"area": "kitch',  # open string
        '{"brightness": 5',  # a number may be cut short (50)
        '{"area": ',  # dangling colon
        '{"a": 1,',  # dangling comma
        "{",  # nothing at all
        '{"name": "HassClimateGe}]',  # mistral-016 style
        '{"a": tru',
    ],
)
def test_truncated_is_never_repaired(text: str) -> None:
    with pytest.raises(TruncatedJSONError):
        loads_loose(text)


@pytest.mark.parametrize(
    "text", ["", "hello there", '{"a": 1}}}', "{a b c d}", "[1, 2]]]"]
)
def test_unreadable(text: str) -> None:
    with pytest.raises(LooseJSONError):
        loads_loose(text)


def test_two_missing_closers_are_too_many() -> None:
    with pytest.raises(LooseJSONError):
        loads_loose('{"a": {"b": {"c": 1}')


def test_scan_respects_strings_and_escapes() -> None:
    text = 'x{"content": "a } ] </tool_call> \\" {", "n": [1]} tail'
    value, end = scan_json(text, 1)
    assert value == {"content": 'a } ] </tool_call> " {', "n": [1]}
    assert text[end:] == " tail"


def test_scan_single_quoted_strings() -> None:
    text = "{'a': 'x}y'} rest"
    value, end = scan_json(text, 0)
    assert value == {"a": "x}y"}
    assert text[end:] == " rest"


def test_apostrophe_in_prose_does_not_open_a_string() -> None:
    assert find_json_end('{"a": "it\'s"} ok', 0) == len('{"a": "it\'s"}')


def test_unclosed_scan_repairs_one_missing_brace() -> None:
    value, end = scan_json('{"name": "x", "arguments": {"a": 1}', 0)
    assert value == {"name": "x", "arguments": {"a": 1}}
    assert end == len('{"name": "x", "arguments": {"a": 1}')


def test_decode_arguments_exactly_once() -> None:
    assert decode_arguments('{"a": "{\\"b\\": 1}"}') == {"a": '{"b": 1}'}
    assert decode_arguments({"a": 1}) == {"a": 1}
    assert decode_arguments(None) == {}
    assert decode_arguments("  ") == {}
    with pytest.raises(LooseJSONError):
        decode_arguments("[1, 2]")
    with pytest.raises(TruncatedJSONError):
        decode_arguments('{"a": "b')


def test_deep_nesting_does_not_crash() -> None:
    with pytest.raises(LooseJSONError):
        loads_loose("[" * 5000)
