"""Structured answers (an AI Task's ``structure``): read, check, and ask once more.

A server that constrains decoding to the JSON schema returns valid data by
construction; any other model is asked for JSON in the prompt, and its reply is
read leniently (code fences, trailing commas), checked against the schema, and
on failure the model gets one corrective message that says what was wrong.
"""

from __future__ import annotations

import json
from typing import Any

from ..toolcalls.reading.jsonrepair import LooseJSONError, loads_loose
from ..toolcalls.reading.schema import ArgumentError, validate_arguments
from ..toolcalls.text.fences import find_fences

SCHEMA_NAME = "answer"


class StructureError(ValueError):
    """The reply is not data of the asked shape; the message is for the model."""


def answer_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` that constrains a reply to ``schema``."""
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "schema": schema},
    }


def format_instructions(schema: dict[str, Any]) -> str:
    """What the prompt says when no constraint enforces the shape."""
    return (
        "Answer with only one JSON object, no prose and no code fence, that"
        " matches this JSON schema:\n" + json.dumps(schema, ensure_ascii=False)
    )


def read_structured(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The reply as data that fits ``schema``; raises ``StructureError``."""
    fences = find_fences(text)
    body = text[fences[0].body_start : fences[0].body_end] if fences else text
    start = body.find("{")
    if start < 0:
        raise StructureError("the reply contains no JSON object")
    try:
        data = loads_loose(body[start : body.rfind("}") + 1])
    except LooseJSONError as err:
        raise StructureError(f"the reply is not valid JSON ({err})") from err
    try:
        return validate_arguments(schema, data)
    except ArgumentError as err:
        raise StructureError(str(err).replace("argument", "field")) from err


def corrective_message(error: StructureError, schema: dict[str, Any]) -> str:
    """The one retry's user message: what was wrong, and the shape again."""
    return f"ERROR: {error}. " + format_instructions(schema)
