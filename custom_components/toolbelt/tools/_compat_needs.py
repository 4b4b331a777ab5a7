"""First version of what tools/ needs from compat.py (for the lead to move there).

HA's llm.Tool declares ``parameters`` as a voluptuous schema, which HA 2026.2 turns
into OpenAPI with voluptuous_openapi. Our tools keep a JSON schema; this builds the
equivalent voluptuous schema so the conversion gives back the same JSON. Later HA
versions (probatio) need a different body with the same signature.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import voluptuous as vol

_TYPES: Mapping[str, Any] = {
    "string": str,
    "integer": vol.Coerce(int),
    "number": vol.Coerce(float),
    "boolean": bool,
    "object": dict,
}


def json_schema_to_voluptuous(schema: Mapping[str, Any]) -> vol.Schema:
    """voluptuous schema for an object JSON schema (properties, required, enum)."""
    required = set(schema.get("required", ()))
    fields: dict[Any, Any] = {}
    for key, prop in schema.get("properties", {}).items():
        marker = vol.Required if key in required else vol.Optional
        description = prop.get("description")
        fields[marker(key, description=description)] = _validator(prop)
    return vol.Schema(fields)


def _validator(prop: Mapping[str, Any]) -> Any:
    if "enum" in prop:
        return vol.In(list(prop["enum"]))
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        return [_validator(items)] if isinstance(items, Mapping) and items else list
    if "anyOf" in prop:
        return vol.Any(*(_validator(option) for option in prop["anyOf"]))
    return _TYPES.get(kind, str)
