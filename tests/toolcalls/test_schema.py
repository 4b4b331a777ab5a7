"""Schema-guided coercion and validation messages a model can act on."""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls.reading.schema import (
    ArgumentError,
    coerce_arguments,
    coerce_text_value,
    validate_arguments,
)

LIGHT = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "brightness": {"type": "integer", "minimum": 0, "maximum": 100},
        "temperature": {"type": "number"},
        "on": {"type": "boolean"},
        "domain": {"type": "array", "items": {"type": "string"}},
        "mode": {"type": "string", "enum": ["single", "restart"]},
        "title": {"type": ["string", "null"]},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def test_coercion_from_strings() -> None:
    args = {"name": "42", "brightness": "50", "temperature": "21.5", "on": "true"}
    assert coerce_arguments(LIGHT, args) == {
        "name": "42",  # a string schema keeps strings
        "brightness": 50,
        "temperature": 21.5,
        "on": True,
    }


def test_coercion_is_lenient_but_not_inventive() -> None:
    out = coerce_arguments(
        LIGHT, {"brightness": "very bright", "on": "maybe", "x": "5"}
    )
    assert out == {"brightness": "very bright", "on": "maybe", "x": "5"}


def test_no_schema_means_no_coercion() -> None:
    assert coerce_arguments({}, {"minutes": "10"}) == {"minutes": "10"}
    assert coerce_arguments(None, {"minutes": "10"}) == {"minutes": "10"}


def test_integral_float_and_json_string_array() -> None:
    out = coerce_arguments(
        LIGHT, {"brightness": 50.0, "domain": '["light"]', "on": "False"}
    )
    assert out == {"brightness": 50, "domain": ["light"], "on": False}
    assert isinstance(out["brightness"], int)


def test_validation_names_field_and_type() -> None:
    with pytest.raises(ArgumentError) as err:
        validate_arguments(LIGHT, {"name": "desk", "brightness": "very bright"})
    assert str(err.value) == 'brightness: expected integer, got "very bright"'


def test_validation_reports_every_problem() -> None:
    with pytest.raises(ArgumentError) as err:
        validate_arguments(LIGHT, {"brightness": 150, "mode": "loop", "colour": "red"})
    message = str(err.value)
    assert "missing required argument: name" in message
    assert "brightness: must be at most 100, got 150" in message
    assert 'mode: expected one of "single", "restart", got "loop"' in message
    assert "unknown argument: colour" in message


def test_validation_returns_coerced_arguments() -> None:
    assert validate_arguments(
        LIGHT, {"name": "desk", "brightness": "30", "title": None}
    ) == {
        "name": "desk",
        "brightness": 30,
        "title": None,
    }


def test_array_items_are_checked() -> None:
    with pytest.raises(
        ArgumentError, match=r'domain\[1\]: expected string, got \{"a": 1\}'
    ):
        validate_arguments(LIGHT, {"name": "x", "domain": ["light", {"a": 1}]})


def test_text_values_typed_from_schema() -> None:
    assert coerce_text_value({"type": "number"}, "\n21\n") == 21
    assert coerce_text_value({"type": "string"}, "\n5123123\n") == "5123123"
    assert coerce_text_value({"type": "array"}, '["a", "b"]}') == ["a", "b"]
    assert coerce_text_value({"type": "boolean"}, "true") is True
    assert coerce_text_value({"type": ["string", "null"]}, "null") is None
    assert coerce_text_value({"type": "object"}, '{"a": 1}') == {"a": 1}
    assert coerce_text_value(None, "\n21\n") == "21"


def test_anyof_branches() -> None:
    schema = {"properties": {"v": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}
    assert coerce_arguments(schema, {"v": "7"}) == {"v": "7"}
    assert coerce_arguments(schema, {"v": 7}) == {"v": 7}
