"""Rendering the tool catalog for system prompts of text dialects."""

from __future__ import annotations

import json
from typing import Any

from .catalog import Catalog

__all__ = ["compact_catalog", "result_text", "tools_json", "tools_json_lines"]


def _type_name(prop: Any) -> str:
    if not isinstance(prop, dict):
        return "any"
    kind = prop.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"{_type_name(prop['items'])}[]"
    if isinstance(prop.get("enum"), list):
        return "|".join(json.dumps(e) for e in prop["enum"])
    return str(kind or "any")


def compact_catalog(catalog: Catalog) -> str:
    """One line per tool: ``- name(arg: type, opt?: type): description``."""
    lines = []
    for tool in catalog:
        params = tool.parameters or {}
        props = (
            params.get("properties")
            if isinstance(params.get("properties"), dict)
            else {}
        )
        required = set(params.get("required") or ())
        args = ", ".join(
            f"{key}{'' if key in required else '?'}: {_type_name(prop)}"
            for key, prop in props.items()
        )
        desc = " ".join(tool.description.split())
        lines.append(f"- {tool.name}({args})" + (f": {desc}" if desc else ""))
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
    """A tool result as text: strings as is, anything else as compact JSON."""
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)
