"""compat.py on both sides of the HA 2026.10 changes, with objects shaped like each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers import llm
import pytest
import voluptuous as vol

from custom_components.toolbelt import compat

# -- objects shaped like HA 2026.10+ -----------------------------------------------


@dataclass
class NewToolResult:
    """HA 2026.10: a tool's data and an error flag."""

    data: Any
    error: bool = False


@dataclass(frozen=True)
class NewToolResultContent:
    """HA 2026.10: ToolResultContent.result holds a ToolResult."""

    agent_id: str
    tool_call_id: str
    tool_name: str
    result: NewToolResult


@dataclass(frozen=True)
class ToolAnnotations:
    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True


class AnnotatedTool(llm.Tool):
    name = "HassTurnOn"
    annotations = ToolAnnotations(read_only=False)

    async def async_call(self, hass, tool_input, llm_context):  # pragma: no cover
        return {}


class ReadOnlyTool(AnnotatedTool):
    name = "GetLiveContext"
    annotations = ToolAnnotations(read_only=True)


class PlainTool(llm.Tool):
    name = "HassTurnOn"
    description = "Turns on a device"
    parameters = vol.Schema({vol.Optional("name"): str, vol.Required("level"): int})

    async def async_call(self, hass, tool_input, llm_context):  # pragma: no cover
        return {}


@pytest.fixture
def new_ha(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make compat believe it runs on HA 2026.10+."""
    monkeypatch.setattr(compat, "_TOOL_RESULT_CLS", NewToolResult)
    monkeypatch.setattr(
        compat, "_RESULT_KEY", compat.detect_result_key(NewToolResultContent)
    )


def test_result_key_detection_both_versions() -> None:
    assert compat.detect_result_key(conversation.ToolResultContent) == "tool_result"
    assert compat.detect_result_key(NewToolResultContent) == "result"


def test_old_ha_result_delta_and_data() -> None:
    delta = compat.tool_result_delta("id1", "HassTurnOn", {"ok": 1})
    assert delta == {
        "role": "tool_result",
        "tool_call_id": "id1",
        "tool_name": "HassTurnOn",
        "tool_result": {"ok": 1},
    }
    content = conversation.ToolResultContent(
        agent_id="a", tool_call_id="id1", tool_name="HassTurnOn", tool_result={"ok": 1}
    )
    assert compat.tool_result_data(content) == {"ok": 1}
    assert compat.unwrap_tool_result({"ok": 1}) == ({"ok": 1}, False)


def test_new_ha_result_delta_and_data(new_ha: None) -> None:
    delta = compat.tool_result_delta("id1", "HassTurnOn", {"ok": 1}, failed=True)
    assert "tool_result" not in delta
    assert delta["result"] == NewToolResult(data={"ok": 1}, error=True)
    content = NewToolResultContent("a", "id1", "HassTurnOn", NewToolResult({"ok": 2}))
    assert compat.tool_result_data(content) == {"ok": 2}
    assert compat.unwrap_tool_result(NewToolResult({"x": 1}, error=True)) == (
        {"x": 1},
        True,
    )
    # A plain dict from a tool still works (deprecated in 2026.10, not removed).
    assert compat.unwrap_tool_result({"x": 1}) == ({"x": 1}, False)


def test_annotations_both_versions() -> None:
    assert compat.tool_read_only(PlainTool()) is None
    assert compat.tool_read_only(AnnotatedTool()) is False
    assert compat.tool_read_only(ReadOnlyTool()) is True


def test_tool_metadata_only_where_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(llm, "ToolAnnotations", raising=False)
    assert compat.tool_metadata(read_only=True, open_world=False) == {}
    monkeypatch.setattr(llm, "ToolAnnotations", ToolAnnotations, raising=False)
    meta = compat.tool_metadata(read_only=True, open_world=False)
    assert meta["annotations"] == ToolAnnotations(True, False, True, False)


def test_schema_renderer_on_this_ha_and_probatio_fallback(monkeypatch) -> None:
    rendered = compat.tool_to_openai(PlainTool())
    assert rendered["function"]["name"] == "HassTurnOn"
    params = rendered["function"]["parameters"]
    assert params["type"] == "object"
    assert params["properties"]["level"]["type"] == "integer"
    assert params["required"] == ["level"]

    import builtins

    real_import = builtins.__import__

    def no_voluptuous_openapi(name, *args, **kwargs):
        if name == "voluptuous_openapi":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_voluptuous_openapi)
    renderer = compat.detect_schema_renderer()
    monkeypatch.undo()
    # HA 2026.10 builds tool schemas with probatio: render one the way it would.
    import probatio as pv

    schema = pv.Schema({pv.Optional("name"): str, pv.Required("level"): int})
    rendered = renderer(schema, custom_serializer=None)
    assert rendered["properties"]["level"] == {"type": "integer"}
    assert rendered["required"] == ["level"]


def test_make_tool_result_both_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    assert compat.make_tool_result({"result": "ok"}) == {"result": "ok"}
    monkeypatch.setattr(compat, "_TOOL_RESULT_CLS", NewToolResult)
    assert compat.make_tool_result({"error": "x"}, failed=True) == NewToolResult(
        data={"error": "x"}, error=True
    )
