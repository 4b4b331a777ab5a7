"""What the model reads about the tools: lean, and nothing needed lost."""

from __future__ import annotations

import json

from custom_components.toolbelt.toolcalls import Catalog
from custom_components.toolbelt.toolcalls.prompting.render import (
    compact_catalog,
    json_catalog,
    lean_tools,
)

TOOL = {
    "type": "function",
    "function": {
        "name": "HassLightSet",
        "description": "Sets the brightness\n   of a light",
        "parameters": {
            "type": "object",
            "title": "HassLightSet",
            "properties": {
                "name": {"type": "string", "title": "Name"},
                "title": {"type": "string", "description": "A song  title"},
                "brightness": {"type": "integer", "minimum": 0, "maximum": 100},
                "domain": {
                    "anyOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"type": "string"}},
                    ]
                },
                "mode": {"type": "string", "enum": ["a  b", "c"]},
            },
            "required": ["brightness"],
            "additionalProperties": False,
        },
    },
}


def test_lean_tools_drop_only_what_no_model_reads() -> None:
    (lean,) = lean_tools([TOOL])
    function = lean["function"]
    params = function["parameters"]
    assert function["description"] == "Sets the brightness of a light"
    assert "title" not in params
    assert "additionalProperties" not in params
    assert params["required"] == ["brightness"]
    assert params["properties"]["name"] == {"type": "string"}
    # An argument called "title" is an argument, not a schema title.
    assert params["properties"]["title"] == {
        "type": "string",
        "description": "A song title",
    }
    assert (
        params["properties"]["brightness"]
        == TOOL["function"]["parameters"]["properties"]["brightness"]
    )
    assert params["properties"]["mode"]["enum"] == ["a  b", "c"]
    assert len(json.dumps(lean)) < len(json.dumps(TOOL))
    assert "additionalProperties" in TOOL["function"]["parameters"]  # not mutated


def test_compact_catalog_keeps_ranges_unions_and_required() -> None:
    line = compact_catalog(Catalog.from_openai([TOOL]))
    assert "brightness: integer 0..100" in line
    assert "domain?: string|string[]" in line
    assert 'mode?: "a  b"|"c"' in line
    assert line.endswith(": Sets the brightness of a light")


def test_an_empty_required_list_says_nothing() -> None:
    tool = {"name": "t", "parameters": {"type": "object", "required": []}}
    (lean,) = lean_tools([tool])
    assert lean["parameters"] == {"type": "object"}


def test_compact_catalog_reads_every_part_of_all_of() -> None:
    """HA 2026.11's HassSetPosition: ``allOf`` an integer and a 0-100 number."""
    position = {"allOf": [{"type": "integer"}, {"minimum": 0, "maximum": 100}]}
    tool = {"name": "SetPosition", "parameters": {"properties": {"position": position}}}
    assert compact_catalog(Catalog.from_openai([tool])) == (
        "- SetPosition(position?: integer 0..100)"
    )


CLASSES = ["awning", "blind", "curtain", "door", "garage", "gate", "shutter"]


def _classes_tool(name: str) -> dict:
    prop = {"type": "array", "items": {"type": "string", "enum": CLASSES}}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "",
            "parameters": {"type": "object", "properties": {"device_class": prop}},
        },
    }


def test_a_shared_value_list_is_written_once() -> None:
    catalog = Catalog.from_openai([_classes_tool("Open"), _classes_tool("Close")])
    text = compact_catalog(catalog)
    assert text.count('"garage"') == 1
    assert "- Open(device_class?: V1[])" in text
    assert "- Close(device_class?: V1[])" in text
    assert text.endswith("where V1 = " + "|".join(f'"{c}"' for c in CLASSES))


def test_json_catalog_is_lean_json_with_shared_lists_once() -> None:
    """One JSON object per tool, as JSON-trained families read their tools."""
    catalog = Catalog.from_openai([_classes_tool("Open"), _classes_tool("Close"), TOOL])
    lines = [json.loads(line) for line in json_catalog(catalog).splitlines()]

    open_, close, light, shared = lines
    ref = {"type": "array", "items": {"$ref": "#/$defs/device_class"}}
    assert open_ == {
        "name": "Open",
        "parameters": {"type": "object", "properties": {"device_class": ref}},
    }
    assert close["parameters"]["properties"]["device_class"] == ref
    assert shared == {"$defs": {"device_class": {"type": "string", "enum": CLASSES}}}
    # The rest as lean_tools sends it natively, without the function wrapper.
    assert light == {
        "name": "HassLightSet",
        "description": "Sets the brightness of a light",
        "parameters": lean_tools([TOOL])[0]["function"]["parameters"],
    }
