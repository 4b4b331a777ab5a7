"""The only module that knows how Home Assistant versions differ.

Toolbelt is tested on HA 2026.2 and must also run on HA 2026.10+, where:
- an LLM tool returns ``llm.ToolResult`` (data plus an error flag) and
  ``ToolResultContent.tool_result`` became ``ToolResultContent.result``;
- tools carry ``llm.ToolAnnotations`` (``read_only`` and friends) and an
  ``integration``;
- tool schemas are rendered by probatio instead of voluptuous_openapi;
- Assist tools are namespaced (``intent__HassTurnOn``).

Everything here is feature detection, never version comparison, so a backport
or a rename shows up as the behaviour it brings.
"""

from __future__ import annotations

from collections.abc import Callable
import dataclasses
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers import llm

# --- tool schemas -----------------------------------------------------------


def detect_schema_renderer() -> Callable[..., dict[str, Any]]:
    """Pick the voluptuous-to-OpenAPI renderer this HA ships."""
    try:
        from voluptuous_openapi import convert
    except ImportError:
        from probatio.codecs.openapi import to_openapi

        return to_openapi
    return convert


_render_schema = detect_schema_renderer()


def detect_schema_library(renderer: Callable[..., Any]) -> Any:
    """The schema module whose objects ``renderer`` understands."""
    if renderer.__module__.startswith("probatio"):
        import probatio

        return probatio
    import voluptuous

    return voluptuous


_schema_lib = detect_schema_library(_render_schema)


def json_schema_to_parameters(schema: dict[str, Any], lib: Any = None) -> Any:
    """An llm.Tool ``parameters`` schema equivalent to an object JSON schema.

    Our own tools are defined by JSON schema (built from a typed function); HA
    wants its schema library's objects, which it renders back to the same JSON.
    """
    lib = lib or _schema_lib
    required = set(schema.get("required", ()))
    fields: dict[Any, Any] = {}
    for key, prop in schema.get("properties", {}).items():
        marker = lib.Required if key in required else lib.Optional
        fields[marker(key, description=prop.get("description"))] = _validator(lib, prop)
    return lib.Schema(fields)


def _validator(lib: Any, prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return lib.In(list(prop["enum"]))
    if "anyOf" in prop:
        return lib.Any(*(_validator(lib, option) for option in prop["anyOf"]))
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        return [_validator(lib, items)] if isinstance(items, dict) and items else list
    return {
        "integer": lib.Coerce(int),
        "number": lib.Coerce(float),
        "boolean": bool,
        "object": dict,
    }.get(kind, str)


def tool_parameters(tool: llm.Tool, custom_serializer: Any = None) -> dict[str, Any]:
    """Render a tool's parameters as a JSON schema object."""
    schema = _render_schema(tool.parameters, custom_serializer=custom_serializer)
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return {"type": "object", "properties": {}}
    schema.setdefault("properties", {})
    return schema


def tool_to_openai(tool: llm.Tool, custom_serializer: Any = None) -> dict[str, Any]:
    """An HA tool as an OpenAI ``tools`` entry."""
    function: dict[str, Any] = {
        "name": tool.name,
        "parameters": tool_parameters(tool, custom_serializer),
    }
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}


# --- tool annotations ---------------------------------------------------------


def tool_read_only(tool: Any) -> bool | None:
    """Whether HA says the tool only reads; None when this HA has no annotations."""
    annotations = getattr(tool, "annotations", None)
    if annotations is None:
        return None
    read_only = getattr(annotations, "read_only", None)
    return read_only if isinstance(read_only, bool) else None


def tool_metadata(*, read_only: bool, open_world: bool) -> dict[str, Any]:
    """Attributes our own llm.Tool subclasses set where this HA knows them."""
    attrs: dict[str, Any] = {}
    annotations_cls = getattr(llm, "ToolAnnotations", None)
    if annotations_cls is not None:
        attrs["annotations"] = annotations_cls(
            read_only=read_only,
            destructive=not read_only,
            idempotent=read_only,
            open_world=open_world,
        )
    return attrs


# --- tool results -------------------------------------------------------------

_TOOL_RESULT_CLS = getattr(llm, "ToolResult", None)


def _field_names(cls: Any) -> set[str]:
    if dataclasses.is_dataclass(cls):
        return {f.name for f in dataclasses.fields(cls)}
    return set(getattr(cls, "__annotations__", {}))


def unwrap_tool_result(value: Any) -> tuple[Any, bool]:
    """Turn what ``APIInstance.async_call_tool`` returned into (data, failed).

    Older HA returns a plain JSON object; newer HA returns ``llm.ToolResult``.
    """
    if _TOOL_RESULT_CLS is not None and isinstance(value, _TOOL_RESULT_CLS):
        return _tool_result_parts(value)
    return value, False


def _tool_result_parts(result: Any) -> tuple[Any, bool]:
    data = getattr(result, "data", None)
    if data is None:
        data = getattr(result, "result", None)
    error = getattr(result, "error", False)
    failed = bool(error) if not isinstance(error, str) else True
    if isinstance(error, str) and isinstance(data, dict):
        data = {**data, "error": error}
    return data, failed


def _make_tool_result(data: Any, failed: bool) -> Any:
    """Build an ``llm.ToolResult`` from whatever fields this HA's class has."""
    assert _TOOL_RESULT_CLS is not None
    names = _field_names(_TOOL_RESULT_CLS)
    kwargs: dict[str, Any] = {}
    kwargs["data" if "data" in names or not names else "result"] = data
    if "error" in names:
        kwargs["error"] = failed
    return _TOOL_RESULT_CLS(**kwargs)


def make_tool_result(data: Any, failed: bool = False) -> Any:
    """What an llm.Tool of ours returns: ``llm.ToolResult`` where HA has it.

    HA 2026.10 deprecates plain JSON returns (removed in 2027.11); older HA
    only knows them.
    """
    if _TOOL_RESULT_CLS is None:
        return data
    return _make_tool_result(data, failed)


def detect_result_key(content_cls: Any) -> str:
    """The ToolResultContent field that holds the result on this HA."""
    return "tool_result" if "tool_result" in _field_names(content_cls) else "result"


_RESULT_KEY = detect_result_key(conversation.ToolResultContent)


def tool_result_delta(
    tool_call_id: str, tool_name: str, data: Any, *, failed: bool = False
) -> dict[str, Any]:
    """A ChatLog stream delta that records one tool result."""
    value = data if _RESULT_KEY == "tool_result" else _make_tool_result(data, failed)
    return {
        "role": "tool_result",
        "tool_call_id": tool_call_id,
        "tool_name": tool_name,
        _RESULT_KEY: value,
    }


def tool_result_data(content: Any) -> Any:
    """The JSON data of a ``ToolResultContent`` from any HA version."""
    if _RESULT_KEY == "tool_result":
        return content.tool_result
    data, _failed = unwrap_tool_result(content.result)
    return data
