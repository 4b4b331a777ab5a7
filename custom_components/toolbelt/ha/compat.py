"""The only module that knows how Home Assistant versions differ.

Toolbelt supports HA 2026.2 and newer. Read from the real sources of 2026.2.3,
2026.10.4 and 2026.11.0, the differences that touch us are:

- tool schemas: 2026.2's ``llm.Tool.parameters`` is a voluptuous schema that
  ``voluptuous_openapi.convert`` renders; from 2026.10 it is a probatio schema
  that ``probatio.to_openapi`` renders (HA's own agents ask for OpenAPI 3.1);
- tool results: 2026.10 adds ``llm.ToolResult(data, error: bool)``. A tool
  should return one (a plain dict is deprecated until 2027.11), and
  ``APIInstance.async_call_tool`` always returns one;
- the ChatLog: ``ToolResultContent.tool_result`` (plain data) became
  ``ToolResultContent.result`` (a ToolResult). The old name is a property that
  logs a deprecation, so we never read it there;
- ``llm.ToolAnnotations`` (read_only, destructive, idempotent, open_world) and
  ``llm.Tool.integration``, which every tool must set from 2026.10;
- AI Task: ``GenDataTask.structure`` is a schema of the same library as tool
  parameters (``structure_schema``); 2026.10 passes a ``context`` to the
  entity's internal calls, which our ``_async_generate_data`` never sees;
  2026.11 adds ``AITaskEntityFeature.EVALUATE`` (``ai_task.evaluate``), which
  an entity offers only where HA has it (``task_features``);
- tool names: Assist's tools come from integration platforms as
  ``intent__HassTurnOn``; 2026.10 prefixes every tool of a merged API with its
  API's name, 2026.11 only tools whose names collide (with the API's id). The
  tool loop maps both spellings (see toolcalls' catalog), so nothing here;
- the chat log (2026.11): one ``ChatLog`` object lives for the whole
  conversation (``turn_start`` marks where a turn begins) and reuses one LLM
  API instance for all its turns; a turn that raises leaves ``"Error: …"``
  (and error results for unanswered calls), one that adds nothing leaves
  ``"(no response)"``; an empty answer is kept as a silent response; a second
  message while a turn runs raises ``ConversationBusyError``;
- LLM APIs (2026.11): ``API.requires_admin`` (the "Home Assistant" API); a
  turn without an administrator cannot get such an API's instance;
- HA's own intent recognizer: the built-in agent's recognize-only
  ``async_recognize_intent(user_input, strict_intents_only=...)`` is the same
  on all three; read through feature detection all the same, as it is not in
  ``conversation.__all__`` (the honesty guard does without it if it goes);
- exposed entities (2026.10): an entity's names are
  ``intent.async_get_entity_aliases`` (registry aliases in the user's order,
  the computed name among them; before: the state's name and an alias set), and
  a device's area is ``device_registry.async_get_effective_area_id``.

Everything is feature detection on the running HA, never a version compare.
The schema library is read off ``llm.Tool.parameters``, not off what imports:
HA 2026.10 installs probatio's shim under the name ``voluptuous``.
``detect()`` reads one HA's shape; every function takes an optional shape so
that tests run both branches on whichever HA is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from importlib import import_module
import inspect
from types import ModuleType
from typing import Any

from homeassistant.components import ai_task, conversation
from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import (
    device_registry as dr,
    entity_registry as er,
    intent,
    llm,
)


@dataclass(frozen=True, slots=True)
class HaShape:
    """What one HA version looks like, as far as Toolbelt is concerned."""

    schema_lib: ModuleType
    """voluptuous (2026.2) or probatio (2026.10+): what llm.Tool.parameters is."""
    render_schema: Callable[..., dict[str, Any]]
    """That library's schema-to-OpenAPI renderer."""
    tool_result_cls: type | None
    """llm.ToolResult, or None where tools return plain JSON."""
    result_field: str
    """The ToolResultContent field holding the result: tool_result or result."""
    annotations_cls: type | None
    """llm.ToolAnnotations, or None where tools carry no annotations."""
    evaluate_feature: int
    """ai_task.AITaskEntityFeature.EVALUATE, or 0 where AI tasks cannot evaluate."""
    silent_answers: bool = False
    """An empty assistant answer is kept as a silent response (2026.11+).

    Detected on the ChatLog of the same release, which became one object per
    conversation (``turn_start``)."""
    busy_error: type[Exception] | None = None
    """conversation.ConversationBusyError, where a conversation can be busy."""


def _field_names(cls: Any) -> set[str]:
    return {f.name for f in fields(cls)} if is_dataclass(cls) else set()


def _probatio_renderer(lib: ModuleType) -> Callable[..., dict[str, Any]]:
    def render(schema: Any, custom_serializer: Any = None) -> dict[str, Any]:
        return lib.to_openapi(
            schema, custom_serializer=custom_serializer, openapi_version="3.1.0"
        )

    return render


def detect(
    llm_module: Any = llm,
    content_cls: Any = conversation.ToolResultContent,
    conversation_module: Any = conversation,
    ai_task_module: Any = ai_task,
) -> HaShape:
    """Read the shape of the HA that provides these modules and classes."""
    lib_name = type(llm_module.Tool.parameters).__module__.partition(".")[0]
    lib = import_module(lib_name)
    if lib_name == "probatio":
        render = _probatio_renderer(lib)
    else:
        render = import_module("voluptuous_openapi").convert
    return HaShape(
        schema_lib=lib,
        render_schema=render,
        tool_result_cls=getattr(llm_module, "ToolResult", None),
        result_field="result"
        if "result" in _field_names(content_cls)
        else "tool_result",
        annotations_cls=getattr(llm_module, "ToolAnnotations", None),
        evaluate_feature=int(
            getattr(ai_task_module.AITaskEntityFeature, "EVALUATE", 0)
        ),
        silent_answers="turn_start" in _field_names(conversation_module.ChatLog),
        busy_error=getattr(conversation_module, "ConversationBusyError", None),
    )


CURRENT = detect()
# ``except BUSY_ERRORS`` catches a busy conversation, or nothing where there is none.
BUSY_ERRORS: tuple[type[Exception], ...] = (
    (CURRENT.busy_error,) if CURRENT.busy_error else ()
)

# --- tool schemas -----------------------------------------------------------


def json_schema_to_parameters(
    schema: dict[str, Any], shape: HaShape | None = None
) -> Any:
    """An llm.Tool ``parameters`` schema equivalent to an object JSON schema.

    Our own tools are defined by JSON schema (built from a typed function); HA
    wants its schema library's objects, which it renders back to the same JSON.
    """
    lib = (shape or CURRENT).schema_lib
    required = set(schema.get("required", ()))
    params: dict[Any, Any] = {}
    for key, prop in schema.get("properties", {}).items():
        marker = lib.Required if key in required else lib.Optional
        params[marker(key, description=prop.get("description"))] = _validator(lib, prop)
    return lib.Schema(params)


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


def tool_parameters(
    tool: llm.Tool, custom_serializer: Any = None, shape: HaShape | None = None
) -> dict[str, Any]:
    """Render a tool's parameters as a JSON schema object."""
    render = (shape or CURRENT).render_schema
    schema = render(tool.parameters, custom_serializer=custom_serializer)
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return {"type": "object", "properties": {}}
    schema.setdefault("properties", {})
    return schema


def tool_to_openai(
    tool: llm.Tool, custom_serializer: Any = None, shape: HaShape | None = None
) -> dict[str, Any]:
    """An HA tool as an OpenAI ``tools`` entry."""
    function: dict[str, Any] = {
        "name": tool.name,
        "parameters": tool_parameters(tool, custom_serializer, shape),
    }
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}


def structure_schema(
    structure: Any, custom_serializer: Any = None, shape: HaShape | None = None
) -> dict[str, Any]:
    """An AI Task's ``structure`` (a voluptuous or probatio schema) as JSON schema.

    Its fields may be selectors, which HA's selector serializer renders.
    """
    render = (shape or CURRENT).render_schema
    return render(
        structure, custom_serializer=custom_serializer or llm.selector_serializer
    )


# --- AI Task features -----------------------------------------------------------


def task_features(
    *, logprobs: bool, shape: HaShape | None = None
) -> ai_task.AITaskEntityFeature:
    """What an AI task entity offers: data (attachments too), and evaluation.

    Evaluation where this HA has it and the server kind returns token
    log-probabilities (``ServerKind.logprobs``).
    """
    features = (
        ai_task.AITaskEntityFeature.GENERATE_DATA
        | ai_task.AITaskEntityFeature.SUPPORT_ATTACHMENTS
    )
    return features | ((shape or CURRENT).evaluate_feature if logprobs else 0)


# --- tool annotations ---------------------------------------------------------


def tool_read_only(tool: Any) -> bool | None:
    """Whether HA says the tool only reads; None when this HA has no annotations."""
    annotations = getattr(tool, "annotations", None)
    read_only = getattr(annotations, "read_only", None)
    return read_only if isinstance(read_only, bool) else None


def tool_annotations(
    *, read_only: bool, open_world: bool, shape: HaShape | None = None
) -> Any | None:
    """``llm.ToolAnnotations`` for one of our tools, or None on an HA without them."""
    cls = (shape or CURRENT).annotations_cls
    if cls is None:
        return None
    return cls(
        read_only=read_only,
        destructive=not read_only,
        idempotent=read_only,
        open_world=open_world,
    )


# --- tool results -------------------------------------------------------------


def unwrap_tool_result(value: Any, shape: HaShape | None = None) -> tuple[Any, bool]:
    """Turn what ``APIInstance.async_call_tool`` returned into (data, failed)."""
    cls = (shape or CURRENT).tool_result_cls
    if cls is not None and isinstance(value, cls):
        return value.data, bool(value.error)
    return value, False


def make_tool_result(
    data: Any, failed: bool = False, shape: HaShape | None = None
) -> Any:
    """What an llm.Tool of ours returns: ``llm.ToolResult`` where HA has it."""
    cls = (shape or CURRENT).tool_result_cls
    return data if cls is None else cls(data=data, error=failed)


def tool_result_delta(
    tool_call_id: str,
    tool_name: str,
    data: Any,
    *,
    failed: bool = False,
    shape: HaShape | None = None,
) -> dict[str, Any]:
    """A ChatLog stream delta that records one tool result."""
    shape = shape or CURRENT
    return {
        "role": "tool_result",
        "tool_call_id": tool_call_id,
        "tool_name": tool_name,
        shape.result_field: make_tool_result(data, failed, shape),
    }


def tool_result_data(content: Any, shape: HaShape | None = None) -> Any:
    """The JSON data of a ``ToolResultContent`` from any HA version."""
    shape = shape or CURRENT
    if shape.result_field == "tool_result":
        return content.tool_result
    data, _failed = unwrap_tool_result(content.result, shape)
    return data


# --- LLM APIs ------------------------------------------------------------------


def api_requires_admin(api: llm.API) -> bool:
    """Whether only an administrator's turn may use this API (HA 2026.11+)."""
    return getattr(api, "requires_admin", False) is True


# --- HA's Assist prompt texts ---------------------------------------------------


def live_context_prompt() -> str | None:
    """HA's long "live context" instructions, wherever this HA keeps them.

    HA 2026.10 moved them from ``helpers.llm`` to the ``homeassistant``
    component's ``llm`` module; None when neither has them.
    """
    for module in ("homeassistant.components.homeassistant.llm", llm.__name__):
        try:
            text = getattr(import_module(module), "DYNAMIC_CONTEXT_PROMPT", None)
        except ImportError:
            continue
        if isinstance(text, str):
            return text
    return None


# --- HA's own intent recognizer --------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecognizedIntent:
    """An intent HA's built-in agent read in the user's words, not run."""

    name: str
    slots: dict[str, Any]


def _recognizer(hass: Any) -> Callable[..., Any] | None:
    """The built-in agent's recognize-only method, where this HA has one."""
    agent = conversation.async_get_agent(hass, conversation.HOME_ASSISTANT_AGENT)
    recognize = getattr(agent, "async_recognize_intent", None)
    if not callable(recognize):
        return None
    if "strict_intents_only" not in inspect.signature(recognize).parameters:
        return None
    return recognize


async def async_recognize_intent(
    hass: Any, user_input: conversation.ConversationInput
) -> RecognizedIntent | None:
    """What HA's built-in agent reads in ``user_input``, without running it.

    Strict matching, as "Prefer handling commands locally" matches: exposed
    entities and HA's own sentences in the user's language. The default
    agent's ``async_recognize_intent`` (HA 2026.2 to 2026.11); the public
    ``conversation.async_handle_intents`` would run the intent. None when
    nothing matched, or this HA has no such method.
    """
    recognize = _recognizer(hass)
    if recognize is None:
        return None
    result = await recognize(user_input, strict_intents_only=True)
    intent = getattr(result, "intent", None)
    if intent is None or getattr(result, "unmatched_entities", None):
        return None
    entities = getattr(result, "entities", None) or {}
    return RecognizedIntent(
        intent.name, {name: entity.value for name, entity in entities.items()}
    )


async def async_prepare_recognizer(hass: Any, language: str) -> None:
    """Load HA's sentences of ``language`` ahead of the first turn."""
    if _recognizer(hass) is not None:
        await conversation.async_prepare_agent(
            hass, conversation.HOME_ASSISTANT_AGENT, language
        )


# --- exposed entities -----------------------------------------------------------


def entity_names(
    hass: HomeAssistant,
    entry: er.RegistryEntry | None,
    state: State,
    intent_module: Any = intent,
) -> list[str]:
    """The names HA's intents match an entity by, in HA's order.

    HA 2026.10+ reads them with ``intent.async_get_entity_aliases``; before,
    they were the state's name and the registry's aliases (a set: sorted here,
    so the prompt is the same on every turn).
    """
    get = getattr(intent_module, "async_get_entity_aliases", None)
    if get is not None:
        return [str(name) for name in get(hass, entry, state=state)]
    aliases = sorted(entry.aliases) if entry is not None else []
    return [state.name, *aliases]


def device_area_id(
    hass: HomeAssistant, device: dr.DeviceEntry, registry_module: Any = dr
) -> str | None:
    """The area a device is in (HA 2026.10+: its effective area, a parent's)."""
    get = getattr(registry_module, "async_get_effective_area_id", None)
    return get(hass, device) if get is not None else device.area_id
