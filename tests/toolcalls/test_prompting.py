"""What the model reads about the tools: lean, and nothing needed lost."""

from __future__ import annotations

import json

from custom_components.toolbelt.toolcalls import Catalog
from custom_components.toolbelt.toolcalls.prompting import compact_catalog, lean_tools

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


def test_a_shared_value_list_is_written_once() -> None:
    classes = ["awning", "blind", "curtain", "door", "garage", "gate", "shutter"]

    def tool(name: str) -> dict:
        prop = {"type": "array", "items": {"type": "string", "enum": classes}}
        return {
            "type": "function",
            "function": {
                "name": name,
                "description": "",
                "parameters": {"type": "object", "properties": {"device_class": prop}},
            },
        }

    text = compact_catalog(Catalog.from_openai([tool("Open"), tool("Close")]))
    assert text.count('"garage"') == 1
    assert "- Open(device_class?: V1[])" in text
    assert "- Close(device_class?: V1[])" in text
    assert text.endswith("where V1 = " + "|".join(f'"{c}"' for c in classes))
