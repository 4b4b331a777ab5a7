"""Rendering the tool catalog for the model: system prompts and the ``tools`` field."""

from __future__ import annotations

import json
from typing import Any

from ..catalog import Catalog

__all__ = [
    "compact_catalog",
    "error_text",
    "json_catalog",
    "lean_tools",
    "result_text",
]

# Schema keys no model reads to call a tool: a title repeats the name, and
# unknown arguments are refused by our own check with the allowed names.
_UNREAD = {"title", "$schema"}
# Keys whose value only repeats the default: nothing extra is allowed (we
# refuse unknown arguments ourselves), nothing is required.
_SAYS_NOTHING: tuple[tuple[str, Any], ...] = (
    ("additionalProperties", False),
    ("required", []),
)


def _lean_schema(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_lean_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    lean: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _UNREAD or (key, value) in _SAYS_NOTHING:
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
    ``additionalProperties: false``, empty ``required`` lists and runs of
    whitespace go.
    """
    return [_lean_schema(tool) for tool in tools]


# A value list this long, used by two arguments or more, is written out once.
_ALIAS_MIN_CHARS = 40


def _type_name(prop: Any, names: dict[str, str], seen: list[str]) -> str:
    if not isinstance(prop, dict):
        return "any"
    if isinstance(prop.get("allOf"), list):
        # Every part applies: the first type said, and any range.
        merged: dict[str, Any] = {}
        for part in (p for p in prop["allOf"] if isinstance(p, dict)):
            for key, value in part.items():
                merged.setdefault(key, value)
        prop = {**merged, **{k: v for k, v in prop.items() if k != "allOf"}}
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


def json_catalog(catalog: Catalog) -> str:
    """One lean JSON signature per line: ``{"name", "description", "parameters"}``.

    What the model families trained on JSON tool lists read (Qwen, Hermes,
    GLM, MiniMax, Nemotron... render each tool with ``tojson``), without what
    no model reads: the ``{"type": "function", "function": ...}`` wrapper,
    titles, ``additionalProperties: false``, runs of whitespace. A long value
    list several arguments share (HA's ``device_class``) is written once, on a
    last line ``{"$defs": {...}}``, and each use is a JSON Schema ``$ref`` to it.
    """
    tools = [
        {"name": tool.name}
        | (
            {"description": desc}
            if (desc := " ".join(tool.description.split()))
            else {}
        )
        | {"parameters": _lean_schema(tool.parameters or _NO_ARGUMENTS)}
        for tool in catalog
    ]
    uses: dict[str, list[str]] = {}
    for tool in tools:
        _value_lists(tool["parameters"], "", uses)
    refs: dict[str, str] = {}
    for values, names in uses.items():
        if len(names) > 1 and len(values) >= _ALIAS_MIN_CHARS:
            name = names[0] if len(set(names)) == 1 and names[0] else "values"
            taken = name in refs.values()
            refs[values] = f"{name}{len(refs) + 1}" if taken else name
    lines = [_json_line(_with_refs(tool, refs)) for tool in tools]
    if refs:
        defs = {name: json.loads(values) for values, name in refs.items()}
        lines.append(_json_line({"$defs": defs}))
    return "\n".join(lines)


_NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}}


def _json_line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _value_lists(schema: Any, name: str, uses: dict[str, list[str]]) -> None:
    """Record every schema with an ``enum`` under the argument it belongs to."""
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("enum"), list):
        uses.setdefault(_json_line(schema), []).append(name)
        return
    props = schema.get("properties")
    for key, prop in (props if isinstance(props, dict) else {}).items():
        _value_lists(prop, key, uses)
    _value_lists(schema.get("items"), name, uses)
    for option in schema.get("anyOf") or ():
        _value_lists(option, name, uses)


def _with_refs(schema: Any, refs: dict[str, str]) -> Any:
    """``schema`` with each shared value list replaced by a ``$ref`` to it."""
    if isinstance(schema, list):
        return [_with_refs(item, refs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if isinstance(schema.get("enum"), list):
        name = refs.get(_json_line(schema))
        return {"$ref": f"#/$defs/{name}"} if name else schema
    return {key: _with_refs(value, refs) for key, value in schema.items()}


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
