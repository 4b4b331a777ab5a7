"""Rendering the tool catalog for the model: system prompts and the ``tools`` field."""

from __future__ import annotations

import json
from typing import Any

from .catalog import Catalog

__all__ = [
    "compact_catalog",
    "error_text",
    "lean_tools",
    "result_text",
    "tools_json",
    "tools_json_lines",
]

# Schema keys no model reads to call a tool: a title repeats the name, and
# unknown arguments are refused by our own check with the allowed names.
_UNREAD = {"title", "$schema"}


def _lean_schema(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_lean_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    lean: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _UNREAD or (key == "additionalProperties" and value is False):
            continue
        if key == "description" and isinstance(value, str):
            value = " ".join(value.split())
        elif key == "properties" and isinstance(value, dict):
            # Argument names are the model's to use, whatever they are called.
            value = {name: _lean_schema(prop) for name, prop in value.items()}
        elif key not in ("enum", "const", "default", "examples"):
            value = _lean_schema(value)
        lean[key] = value
    return lean


def lean_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The OpenAI ``tools`` list with nothing a model does not read.

    Every prompt token costs prefill time on a small server. Names, types,
    enums, ranges, required lists and descriptions stay; titles, ``$schema``,
    ``additionalProperties: false`` and runs of whitespace go.
    """
    return [_lean_schema(tool) for tool in tools]


# A value list this long, used by two arguments or more, is written out once.
_ALIAS_MIN_CHARS = 40


def _type_name(prop: Any, names: dict[str, str], seen: list[str]) -> str:
    if not isinstance(prop, dict):
        return "any"
    kind = prop.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if isinstance(prop.get("anyOf"), list):
        return "|".join(_type_name(o, names, seen) for o in prop["anyOf"])
    if kind == "array" and isinstance(prop.get("items"), dict):
        inner = _type_name(prop["items"], names, seen)
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if isinstance(prop.get("enum"), list):
        values = "|".join(json.dumps(e, ensure_ascii=False) for e in prop["enum"])
        seen.append(values)
        return names.get(values, values)
    low, high = prop.get("minimum"), prop.get("maximum")
    if kind in ("integer", "number") and (low is not None or high is not None):
        return f"{kind} {'' if low is None else low}..{'' if high is None else high}"
    return str(kind or "any")


def _lines(catalog: Catalog, names: dict[str, str], seen: list[str]) -> list[str]:
    lines = []
    for tool in catalog:
        params = tool.parameters or {}
        props = params.get("properties")
        if not isinstance(props, dict):
            props = {}
        required = set(params.get("required") or ())
        args = ", ".join(
            f"{key}{'' if key in required else '?'}: {_type_name(prop, names, seen)}"
            for key, prop in props.items()
        )
        desc = " ".join(tool.description.split())
        lines.append(f"- {tool.name}({args})" + (f": {desc}" if desc else ""))
    return lines


def compact_catalog(catalog: Catalog) -> str:
    """One line per tool: ``- name(arg: type, opt?: type): description``.

    A long value list that several arguments share (HA's ``device_class``) is
    named once below the tools, so the prompt does not repeat it per tool.
    """
    seen: list[str] = []
    _lines(catalog, {}, seen)
    shared = [v for v in dict.fromkeys(seen) if len(v) >= _ALIAS_MIN_CHARS]
    names = {v: f"V{n}" for n, v in enumerate(shared, 1) if seen.count(v) > 1}
    lines = _lines(catalog, names, [])
    lines += [f"where {name} = {values}" for values, name in names.items()]
    return "\n".join(lines)


def tools_json(catalog: Catalog) -> list[dict[str, Any]]:
    """The catalog as an OpenAI ``tools`` list."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters or {"type": "object", "properties": {}},
            },
        }
        for tool in catalog
    ]


def tools_json_lines(catalog: Catalog) -> str:
    """One compact JSON function signature per line (Hermes/Qwen ``<tools>``)."""
    return "\n".join(
        json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        for item in tools_json(catalog)
    )


def result_text(result: Any) -> str:
    """A tool result as the model reads it: strings as is, anything else as JSON."""
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


def error_text(err: BaseException, hint: str = "") -> str:
    """``ERROR: <Type>: <message>[. hint]``, the one shape of an error the model reads."""
    message = str(err).strip()
    if isinstance(err, TimeoutError) and not message:
        message = "the tool took too long and was stopped"
    text = f"ERROR: {type(err).__name__}: {message or 'no details'}"
    return f"{text}. {hint}" if hint else text
