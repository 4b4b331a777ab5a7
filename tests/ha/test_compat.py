"""compat.py on both sides of the HA 2026.10 changes, whichever HA is installed.

Each shape is built explicitly from what the real sources define (HA 2026.2.3
and 2026.10.4/2026.11.0), so both branches run in both test lanes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntFlag
from types import SimpleNamespace
from typing import Any, ClassVar

from homeassistant.components import ai_task, conversation
from homeassistant.core import State
from homeassistant.helpers import llm
import probatio
import pytest
import voluptuous as vol
import voluptuous_openapi

from custom_components.toolbelt.ha import compat

# -- the two shapes, as the real sources define them ------------------------------


@dataclass(slots=True)
class ToolResult:
    """HA 2026.10+: llm.ToolResult."""

    data: Any
    error: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnnotations:
    """HA 2026.10+: llm.ToolAnnotations."""

    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True


@dataclass
class OldToolResultContent:
    """HA 2026.2: the result is plain JSON in ``tool_result``."""

    agent_id: str
    tool_call_id: str
    tool_name: str
    tool_result: Any
    role: str = field(init=False, default="tool_result")


@dataclass
class NewToolResultContent:
    """HA 2026.10+: a ToolResult in ``result`` (``tool_result`` is a property)."""

    agent_id: str
    tool_call_id: str
    tool_name: str
    result: ToolResult
    role: str = field(init=False, default="tool_result")

    @property
    def tool_result(self) -> Any:
        raise AssertionError("deprecated in HA 2026.10: compat must not read it")


class _VoluptuousSchema:
    """Stands for voluptuous.Schema: HA 2026.10 aliases voluptuous to probatio."""

    __module__ = "voluptuous.schema_builder"


class _OldTool:
    parameters = _VoluptuousSchema()


class _NewTool:
    parameters = probatio.Schema({})


OLD_LLM = SimpleNamespace(Tool=_OldTool)
NEW_LLM = SimpleNamespace(
    Tool=_NewTool, ToolResult=ToolResult, ToolAnnotations=ToolAnnotations
)
OLD = compat.detect(OLD_LLM, OldToolResultContent)
NEW = compat.detect(NEW_LLM, NewToolResultContent)
BOTH = pytest.mark.parametrize("shape", [OLD, NEW], ids=["2026.2", "2026.10+"])


def test_detection_reads_each_shape() -> None:
    assert OLD.schema_lib is vol
    assert OLD.render_schema is voluptuous_openapi.convert
    assert OLD.tool_result_cls is None
    assert OLD.annotations_cls is None
    assert OLD.result_field == "tool_result"
    assert NEW.schema_lib is probatio
    assert NEW.tool_result_cls is ToolResult
    assert NEW.annotations_cls is ToolAnnotations
    assert NEW.result_field == "result"


class FeaturesBefore2026_11(IntFlag):
    """AITaskEntityFeature of HA 2026.2 to 2026.10."""

    GENERATE_DATA = 1
    SUPPORT_ATTACHMENTS = 2
    GENERATE_IMAGE = 4


class Features2026_11(IntFlag):
    """AITaskEntityFeature of HA 2026.11: evaluation."""

    GENERATE_DATA = 1
    SUPPORT_ATTACHMENTS = 2
    GENERATE_IMAGE = 4
    EVALUATE = 8


NO_EVALUATE = compat.detect(
    NEW_LLM,
    NewToolResultContent,
    ai_task_module=SimpleNamespace(AITaskEntityFeature=FeaturesBefore2026_11),
)
EVALUATE = compat.detect(
    NEW_LLM,
    NewToolResultContent,
    ai_task_module=SimpleNamespace(AITaskEntityFeature=Features2026_11),
)


def test_ai_tasks_evaluate_only_where_ha_and_the_server_kind_can() -> None:
    data = ai_task.AITaskEntityFeature.GENERATE_DATA
    attachments = ai_task.AITaskEntityFeature.SUPPORT_ATTACHMENTS
    assert compat.task_features(logprobs=True, shape=NO_EVALUATE) == data | attachments
    assert compat.task_features(logprobs=True, shape=EVALUATE) == data | attachments | 8
    assert compat.task_features(logprobs=False, shape=EVALUATE) == data | attachments
    # HA's own test of an entity's features: a flag, not a plain int.
    assert isinstance(compat.task_features(logprobs=True), ai_task.AITaskEntityFeature)
    assert compat.CURRENT.evaluate_feature == getattr(
        ai_task.AITaskEntityFeature, "EVALUATE", 0
    )


def test_installed_ha_is_detected_as_one_of_them() -> None:
    """The real HA is one of the two shapes, consistently in every field."""
    current = compat.CURRENT
    new = hasattr(llm, "ToolResult")
    assert current.tool_result_cls is getattr(llm, "ToolResult", None)
    assert current.annotations_cls is getattr(llm, "ToolAnnotations", None)
    assert current.result_field == ("result" if new else "tool_result")
    assert current.schema_lib is (probatio if new else vol)
    # A real ToolResultContent built the way compat says round-trips.
    delta = compat.tool_result_delta("id1", "HassTurnOn", {"ok": 1}, failed=True)
    content = conversation.ToolResultContent(
        agent_id="a",
        tool_call_id="id1",
        tool_name="HassTurnOn",
        **{current.result_field: delta[current.result_field]},
    )
    assert compat.tool_result_data(content) == {"ok": 1}


def test_old_shape_results_are_plain_json() -> None:
    delta = compat.tool_result_delta("id1", "HassTurnOn", {"ok": 1}, shape=OLD)
    assert delta == {
        "role": "tool_result",
        "tool_call_id": "id1",
        "tool_name": "HassTurnOn",
        "tool_result": {"ok": 1},
    }
    content = OldToolResultContent("a", "id1", "HassTurnOn", {"ok": 1})
    assert compat.tool_result_data(content, OLD) == {"ok": 1}
    assert compat.unwrap_tool_result({"ok": 1}, OLD) == ({"ok": 1}, False)
    assert compat.make_tool_result({"result": "ok"}, shape=OLD) == {"result": "ok"}


def test_new_shape_results_are_tool_results() -> None:
    delta = compat.tool_result_delta(
        "id1", "HassTurnOn", {"ok": 1}, failed=True, shape=NEW
    )
    assert "tool_result" not in delta
    assert delta["result"] == ToolResult(data={"ok": 1}, error=True)
    content = NewToolResultContent("a", "id1", "HassTurnOn", ToolResult({"ok": 2}))
    assert compat.tool_result_data(content, NEW) == {"ok": 2}
    assert compat.unwrap_tool_result(ToolResult({"x": 1}, error=True), NEW) == (
        {"x": 1},
        True,
    )
    # A plain dict from someone else's tool still reads (deprecated, not removed).
    assert compat.unwrap_tool_result({"x": 1}, NEW) == ({"x": 1}, False)
    assert compat.make_tool_result({"error": "x"}, True, NEW) == ToolResult(
        data={"error": "x"}, error=True
    )


def test_annotations_only_where_supported() -> None:
    assert compat.tool_annotations(read_only=True, open_world=False, shape=OLD) is None
    assert compat.tool_annotations(
        read_only=True, open_world=False, shape=NEW
    ) == ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=False
    )
    plain = SimpleNamespace(name="HassTurnOn")
    assert compat.tool_read_only(plain) is None
    assert (
        compat.tool_read_only(
            SimpleNamespace(annotations=ToolAnnotations(read_only=False))
        )
        is False
    )
    assert (
        compat.tool_read_only(
            SimpleNamespace(annotations=ToolAnnotations(read_only=True))
        )
        is True
    )


SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["search", "store"], "description": "Do"},
        "limit": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "exact": {"type": "boolean"},
    },
    "required": ["action"],
}


@BOTH
def test_our_schema_round_trips_through_each_library(shape: compat.HaShape) -> None:
    """Our JSON schema becomes that HA's schema objects and renders back the same."""
    params = compat.json_schema_to_parameters(SCHEMA, shape)
    assert isinstance(params, shape.schema_lib.Schema)
    tool = SimpleNamespace(name="memory", description="Memory", parameters=params)
    rendered = compat.tool_to_openai(tool, shape=shape)
    assert rendered["function"]["name"] == "memory"
    assert rendered["function"]["description"] == "Memory"
    out = rendered["function"]["parameters"]
    assert out["type"] == "object"
    assert out["required"] == ["action"]
    assert out["properties"]["action"] == {
        "type": "string",
        "enum": ["search", "store"],
        "description": "Do",
    }
    assert out["properties"]["limit"] == {"type": "integer"}
    assert out["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert out["properties"]["exact"] == {"type": "boolean"}


@BOTH
def test_a_tool_without_parameters_renders_an_empty_object(
    shape: compat.HaShape,
) -> None:
    tool = SimpleNamespace(
        name="GetLiveContext",
        description=None,
        parameters=shape.schema_lib.Schema({}),
    )
    rendered = compat.tool_to_openai(tool, shape=shape)
    assert "description" not in rendered["function"]
    assert rendered["function"]["parameters"]["type"] == "object"
    assert rendered["function"]["parameters"]["properties"] == {}


def test_real_assist_tools_render_on_the_installed_ha() -> None:
    """An IntentTool as this HA builds it renders with its selector serializer."""
    from homeassistant.helpers import intent

    class Handler(intent.IntentHandler):
        intent_type = "HassTurnOn"
        description = "Turns on a device"
        slot_schema: ClassVar[dict[Any, Any]] = {
            vol.Optional("name"): intent.non_empty_string,
            vol.Optional("area"): intent.non_empty_string,
        }

    kwargs: dict[str, Any] = {}
    if compat.CURRENT.annotations_cls is not None:
        kwargs["integration"] = "intent"
    tool = llm.IntentTool("HassTurnOn", Handler(), **kwargs)
    rendered = compat.tool_to_openai(tool, llm.selector_serializer)
    props = rendered["function"]["parameters"]["properties"]
    assert props["name"] == {"type": "string"}
    assert props["area"] == {"type": "string"}


def test_an_ai_task_structure_renders_on_the_installed_ha() -> None:
    """A task's structure is a schema of the library tool parameters use (both
    renderers are run in both shapes by the tool tests above); HA's selector
    serializer belongs to the installed HA, so this runs on that one.
    """
    lib = compat.CURRENT.schema_lib
    structure = lib.Schema(
        {lib.Required("name", description="Who"): str, lib.Optional("age"): int}
    )
    rendered = compat.structure_schema(structure)
    assert rendered["type"] == "object"
    assert rendered["required"] == ["name"]
    assert rendered["properties"]["name"] == {"type": "string", "description": "Who"}
    assert rendered["properties"]["age"] == {"type": "integer"}


def test_an_ai_task_structure_with_selectors_on_the_installed_ha() -> None:
    """The generate_data action builds its structure from selectors."""
    from homeassistant.helpers import selector

    lib = compat.CURRENT.schema_lib
    structure = lib.Schema(
        {
            lib.Required("name"): selector.TextSelector(),
            lib.Optional("tags"): selector.SelectSelector(
                selector.SelectSelectorConfig(options=["a", "b"], multiple=True)
            ),
        }
    )
    rendered = compat.structure_schema(structure)
    assert rendered["properties"]["name"]["type"] == "string"
    assert rendered["properties"]["tags"]["type"] == "array"
    assert rendered["properties"]["tags"]["items"]["enum"] == ["a", "b"]


# -- exposed entities: names and a device's area ----------------------------------


def test_entity_names_on_each_shape() -> None:
    """2026.2: the state's name, then the registry's alias set (sorted);
    2026.10+: whatever ``intent.async_get_entity_aliases`` says, in its order."""
    state = State("light.reading_lamp", "off", {"friendly_name": "Reading lamp"})
    entry: Any = SimpleNamespace(aliases={"Book light", "Armchair lamp"})
    old = SimpleNamespace()
    assert compat.entity_names(None, entry, state, old) == [
        "Reading lamp",
        "Armchair lamp",
        "Book light",
    ]
    assert compat.entity_names(None, None, state, old) == ["Reading lamp"]

    def aliases(hass: Any, entry: Any, *, state: State) -> list[str]:
        return ["Book light", state.name]

    new = SimpleNamespace(async_get_entity_aliases=aliases)
    assert compat.entity_names(None, entry, state, new) == [
        "Book light",
        "Reading lamp",
    ]


def test_a_devices_area_on_each_shape() -> None:
    """2026.2: the device's own area; 2026.10+: its effective area."""
    device: Any = SimpleNamespace(area_id="study")
    assert compat.device_area_id(None, device, SimpleNamespace()) == "study"
    new = SimpleNamespace(async_get_effective_area_id=lambda hass, device: "hall")
    assert compat.device_area_id(None, device, new) == "hall"
