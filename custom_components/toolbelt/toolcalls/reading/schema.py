"""Schema-guided argument coercion and validation, in one place.

Coercion is lenient and only ever driven by a JSON schema: a digit string
becomes an integer where the schema says integer, never on a hunch. Validation
produces messages a model can read and act on, e.g.
``brightness: expected integer, got "very bright"``.
"""

from __future__ import annotations

import json
from typing import Any

from .jsonrepair import LooseJSONError, loads_loose
from .numbers import NumberTooLongError, read_number

__all__ = [
    "ArgumentError",
    "coerce_arguments",
    "coerce_text_value",
    "coerce_value",
    "validate_arguments",
]

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class ArgumentError(ValueError):
    """Arguments do not fit the tool's schema; the message is meant for the model."""


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return []


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            return [o for o in options if isinstance(o, dict)]
    return []


def _coerce_one(kind: str, schema: dict[str, Any], value: Any) -> Any:
    """Coerce ``value`` to one JSON type; return ``_FAIL`` when it does not fit."""
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return json.dumps(value)
        return _FAIL
    if kind == "integer":
        if isinstance(value, bool):
            return _FAIL
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            number = _number(value)
            if isinstance(number, int):
                return number
            if isinstance(number, float) and number.is_integer():
                return int(number)
        return _FAIL
    if kind == "number":
        if isinstance(value, bool):
            return _FAIL
        if isinstance(value, (int, float)):
            return value
        if isinstance(value, str):
            number = _number(value)
            if number is not None:
                return number
        return _FAIL
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            low = value.strip().lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        return _FAIL
    if kind == "null":
        if value is None:
            return None
        if isinstance(value, str) and value.strip().lower() in ("null", "none"):
            return None
        return _FAIL
    if kind == "array":
        if isinstance(value, str):
            value = _decode(value)
        if not isinstance(value, list):
            return _FAIL
        items = schema.get("items")
        if isinstance(items, dict):
            return [coerce_value(items, item) for item in value]
        return value
    if kind == "object":
        if isinstance(value, str):
            value = _decode(value)
        if not isinstance(value, dict):
            return _FAIL
        if isinstance(schema.get("properties"), dict):
            return coerce_arguments(schema, value)
        return value
    return value


_FAIL = object()
# Exact scalar types that ``_coerce_one`` returns unchanged for each kind (a
# bool is no integer; subclasses take the long way).
_FITS: dict[str, frozenset[type]] = {
    "string": frozenset((str,)),
    "integer": frozenset((int,)),
    "number": frozenset((int, float)),
    "boolean": frozenset((bool,)),
}


def _number(text: str) -> int | float | None:
    """The number a text spells (spaces around it allowed), or None.

    Digits beyond Python's int-string limit are no number: the text is kept as
    it is and validation reports the type.
    """
    try:
        return read_number(text.strip())
    except NumberTooLongError:
        return None


def _decode(text: str) -> Any:
    try:
        return loads_loose(text)
    except LooseJSONError:
        return _FAIL


def coerce_value(schema: dict[str, Any] | None, value: Any) -> Any:
    """Coerce one value to fit ``schema``; unchanged when nothing fits."""
    if not isinstance(schema, dict) or not schema:
        return value
    kind = schema.get("type")
    if isinstance(kind, str):
        if type(value) in _FITS.get(kind, ()):
            return value  # the usual: a scalar of the one type (what _coerce_one keeps)
        if _is_type(kind, value):
            return _coerce_one(kind, schema, value)
    kinds = _types(schema)
    if kinds:
        # An exact type match wins before any conversion is tried.
        for kind in kinds:
            if _is_type(kind, value):
                return _coerce_one(kind, schema, value)
        for kind in kinds:
            result = _coerce_one(kind, schema, value)
            if result is not _FAIL:
                return result
        return value
    branches = _branches(schema)
    if any(not _errors(branch, value, "") for branch in branches):
        return value  # already fits one form as it is
    for branch in branches:
        result = coerce_value(branch, value)
        if not _errors(branch, result, ""):
            return result
    return value


def coerce_arguments(
    schema: dict[str, Any] | None, args: dict[str, Any]
) -> dict[str, Any]:
    """Lenient schema-guided coercion of a call's arguments (never without a schema)."""
    if not isinstance(schema, dict) or not isinstance(args, dict):
        return args
    props = schema.get("properties")
    if not isinstance(props, dict):
        return dict(args)
    return {key: coerce_value(props.get(key), value) for key, value in args.items()}


def coerce_text_value(schema: dict[str, Any] | None, text: str) -> Any:
    """Type a parameter that arrived as raw text (XML-parameter formats).

    A string schema keeps the text (minus the one newline the format puts on
    each side); other types are read as loose JSON, then coerced. Without a
    schema the text stays text.
    """
    if text.startswith("\n"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-1]
    if not isinstance(schema, dict) or not schema:
        return text
    kinds = _types(schema) or [k for b in _branches(schema) for k in _types(b)]
    if not kinds:
        return text
    if "string" in kinds:
        if "null" in kinds and text.strip().lower() in ("null", "none"):
            return None
        return text
    stripped = text.strip()
    value: Any = stripped
    if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null"):
        decoded = _decode(stripped)
        if decoded is not _FAIL:
            value = decoded
    return coerce_value(schema, value)


def _is_type(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _errors(schema: dict[str, Any], value: Any, path: str) -> list[str]:
    """Readable problems of ``value`` against ``schema`` (a pragmatic subset)."""
    label = f"{path}: " if path else ""
    kinds = _types(schema)
    if kinds and not any(_is_type(k, value) for k in kinds):
        return [f"{label}expected {' or '.join(kinds)}, got {_show(value)}"]
    branches = _branches(schema)
    if branches and all(_errors(b, value, path) for b in branches):
        return [f"{label}does not match any allowed form, got {_show(value)}"]
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        allowed = ", ".join(_show(e) for e in enum)
        return [f"{label}expected one of {allowed}, got {_show(value)}"]
    problems: list[str] = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = schema.get("minimum"), schema.get("maximum")
        if isinstance(low, (int, float)) and value < low:
            problems.append(f"{label}must be at least {low}, got {_show(value)}")
        if isinstance(high, (int, float)) and value > high:
            problems.append(f"{label}must be at most {high}, got {_show(value)}")
    if isinstance(value, dict) and (
        "properties" in schema or "required" in schema or kinds == ["object"]
    ):
        problems.extend(_object_errors(schema, value, path))
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            problems.extend(_errors(schema["items"], item, f"{path}[{index}]"))
    return problems


def _object_errors(
    schema: dict[str, Any], value: dict[str, Any], path: str
) -> list[str]:
    prefix = f"{path}." if path else ""
    props = schema.get("properties")
    if not isinstance(props, dict):
        props = {}
    problems = [
        f"missing required argument: {prefix}{key}"
        for key in schema.get("required") or ()
        if key not in value
    ]
    for key, item in value.items():
        if key in props:
            if isinstance(props[key], dict):
                problems.extend(_errors(props[key], item, f"{prefix}{key}"))
        elif schema.get("additionalProperties") is False:
            allowed = ", ".join(props) or "none"
            problems.append(f"unknown argument: {prefix}{key} (allowed: {allowed})")
    return problems


def validate_arguments(
    schema: dict[str, Any] | None, args: dict[str, Any]
) -> dict[str, Any]:
    """Coerce then check ``args``; return the coerced dict or raise ``ArgumentError``.

    The message names every bad field and the expected type, e.g.
    ``brightness: expected integer, got "very bright"``.
    """
    if not isinstance(args, dict):
        raise ArgumentError(f"arguments must be an object, got {_show(args)}")
    if not isinstance(schema, dict) or not schema:
        return dict(args)
    coerced = coerce_arguments(schema, args)
    problems = _object_errors(schema, coerced, "")
    if problems:
        raise ArgumentError("; ".join(problems))
    return coerced
