"""Real Home Assistant around Toolbelt: devices, the config entry, a conversation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator, Iterator, Mapping
from contextlib import contextmanager
import inspect
import logging
from typing import Any

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session, llm
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
import voluptuous as vol

from custom_components.toolbelt.const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_LLM_HASS_API,
    CONF_MAX_DEVICE_COMMANDS,
    CONF_MAX_TOKENS,
    CONF_MAX_TOOL_CALLS,
    CONF_MODEL,
    CONF_PROMPT,
    CONF_REQUEST_TIMEOUT,
    CONF_SERVER_KIND,
    CONF_TEMPERATURE,
    CONF_TOOL_FORMAT,
    CONF_WARM_UP,
    DOMAIN,
)
from custom_components.toolbelt.ha import compat
from custom_components.toolbelt.tools.const import SUBENTRY_TYPE_TOOLS
from tests.openai_server import OpenAIServer

LIGHTS = {
    "kitchen_light": "Kitchen light",
    "porch_light": "Porch light",
    "living_room_lamp": "Living room lamp",
    "hallway_light": "Hallway light",
}


# What the database work of a turn or an entry runs as, in HA's task warnings.
_DATABASE_TASKS = (
    "ToolsHub.async_close",
    "toolbelt record turn",
    "toolbelt history purge",
)


class _CutOffTasks(logging.Handler):
    """HA's warnings about our database tasks that its stop or an unload cut off."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if any(task in message for task in _DATABASE_TASKS) and (
            "still running after final writes" in message
            or "did not complete in time" in message
        ):
            self.messages.append(message)


_CUT_OFF = pytest.StashKey[_CutOffTasks]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None]:
    """Listen for cut-off tasks from the test's setup to its teardown."""
    handler = item.stash[_CUT_OFF] = _CutOffTasks()
    logging.getLogger().addHandler(handler)
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None]:
    """Fail a test when HA's stop or an unload cut off our database work (the
    close, a history record, a purge): HA only logs it, and its own thread check
    catches only the database thread such a cut leaves behind."""
    handler = item.stash.get(_CUT_OFF, None)
    try:
        yield
    finally:
        if handler is not None:
            logging.getLogger().removeHandler(handler)
    if handler is not None and handler.messages:
        pytest.fail(
            "HA cut off Toolbelt database work: " + " | ".join(handler.messages)
        )


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let HA load Toolbelt from custom_components/."""


def agent_options(**overrides: Any) -> dict[str, Any]:
    """An agent subentry's data, with test-friendly timeouts."""
    options: dict[str, Any] = {
        CONF_MODEL: "test-model",
        CONF_PROMPT: "You are a test assistant.",
        CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        CONF_TOOL_FORMAT: "auto",
        CONF_TEMPERATURE: 0.2,
        CONF_MAX_TOKENS: 256,
        CONF_REQUEST_TIMEOUT: 5.0,
        CONF_MAX_TOOL_CALLS: 20,
        CONF_MAX_DEVICE_COMMANDS: 3,
        # Each request of a test is scripted: the warm-up's own tests turn it on.
        CONF_WARM_UP: False,
    }
    options.update(overrides)
    return options


def form_input(result: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """What HA's frontend submits for a shown form: every field as the form
    shows it (its suggested value, else its default), with the user's changes.

    Only the changed fields, as a bare dict, would reset the others to their
    defaults, which no user can do: a test agent's warm-up (off) would come on.
    """
    shown: dict[str, Any] = {}
    for key in result["data_schema"].schema:
        suggested = (key.description or {}).get("suggested_value")
        if suggested is not None:
            shown[str(key)] = suggested
        elif key.default is not vol.UNDEFINED:
            shown[str(key)] = key.default()
    return {**shown, **changes}


async def async_setup_lights(hass: HomeAssistant) -> None:
    """Template lights backed by input_booleans: real entities HA's intents control."""
    assert await async_setup_component(
        hass,
        "input_boolean",
        {"input_boolean": {f"{key}_state": {"name": f"{key} state"} for key in LIGHTS}},
    )
    lights = [
        {
            "name": name,
            "unique_id": key,
            "state": f"{{{{ is_state('input_boolean.{key}_state', 'on') }}}}",
            "turn_on": {
                "action": "input_boolean.turn_on",
                "target": {"entity_id": f"input_boolean.{key}_state"},
            },
            "turn_off": {
                "action": "input_boolean.turn_off",
                "target": {"entity_id": f"input_boolean.{key}_state"},
            },
        }
        for key, name in LIGHTS.items()
    ]
    assert await async_setup_component(
        hass, "template", {"template": [{"light": lights}]}
    )
    await hass.async_block_till_done()


@pytest.fixture
def recognized(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Set once HA's recognizer has read a turn's words: the honesty guard's
    verdict is in. A scripted reply told to start ``after`` it is a model whose
    first token comes after the verdict, however slow the machine."""
    event = asyncio.Event()
    recognize = compat.async_recognize_intent

    async def recognize_and_tell(*args: Any, **kwargs: Any) -> Any:
        try:
            return await recognize(*args, **kwargs)
        finally:
            event.set()

    monkeypatch.setattr(compat, "async_recognize_intent", recognize_and_tell)
    return event


@pytest.fixture
async def ha_ready(hass: HomeAssistant, tmp_path) -> HomeAssistant:
    """HA with the components Assist needs and four lights.

    The config dir is per test: the memory database lives there.
    """
    hass.config.config_dir = str(tmp_path)
    for component in ("homeassistant", "conversation", "intent"):
        assert await async_setup_component(hass, component, {})
    await async_setup_lights(hass)
    return hass


async def async_assist_api(hass: HomeAssistant) -> llm.APIInstance:
    """HA's Assist API as any conversation agent gets it (no device, English)."""
    return await llm.async_get_api(
        hass,
        llm.LLM_API_ASSIST,
        llm.LLMContext(
            platform=DOMAIN,
            context=None,
            language="en",
            assistant="conversation",
            device_id=None,
        ),
    )


async def async_add_toolbelt(
    hass: HomeAssistant,
    server: OpenAIServer,
    *,
    server_kind: str = "llamacpp",
    tools: dict[str, Any] | None = None,
    **agent: Any,
) -> MockConfigEntry:
    """A loaded Toolbelt entry on the test server with one agent.

    ``tools``: settings of a Toolbelt tools subentry to add beside the agent.
    """
    subentries = [
        ConfigSubentryData(
            data=agent_options(**agent),
            subentry_type="conversation",
            title="Test agent",
            unique_id=None,
        )
    ]
    if tools is not None:
        subentries.append(
            ConfigSubentryData(
                data=tools,
                subentry_type=SUBENTRY_TYPE_TOOLS,
                title="Tool backends",
                unique_id=None,
            )
        )
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Test server",
        unique_id=server.base_url,
        data={
            CONF_SERVER_KIND: server_kind,
            CONF_BASE_URL: server.base_url,
            CONF_API_KEY: "",
        },
        subentries_data=subentries,
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry


@pytest.fixture
async def toolbelt(
    ha_ready: HomeAssistant, openai_server: OpenAIServer
) -> AsyncIterator[MockConfigEntry]:
    """Toolbelt set up against the scripted server, with the default agent."""
    return await async_add_toolbelt(ha_ready, openai_server)


def agent_id(hass: HomeAssistant) -> str:
    """The entity id of the (only) Toolbelt agent."""
    states = hass.states.async_entity_ids("conversation")
    ours = [s for s in states if s != "conversation.home_assistant"]
    assert len(ours) == 1, states
    return ours[0]


async def async_converse(
    hass: HomeAssistant,
    text: str,
    conversation_id: str | None = None,
    language: str | None = None,
) -> conversation.ConversationResult:
    """Send one user utterance through HA's conversation API to our agent.

    With a context of its own, as HA's pipeline and HTTP API always give one;
    ``language`` is the conversation's (HA's own language when None).
    """
    return await conversation.async_converse(
        hass, text, conversation_id, Context(), language, agent_id=agent_id(hass)
    )


def bare(tool_name: str) -> str:
    """A tool name without HA's namespaces: ``intent__HassTurnOn`` -> ``HassTurnOn``.

    HA 2026.10+ names Assist's tools ``intent__HassTurnOn``; 2026.2 plain.
    """
    return tool_name.rpartition("__")[2]


def speech(result: conversation.ConversationResult) -> str:
    """What Assist would say."""
    return result.response.speech["plain"]["speech"]


# HA 2026.11 asks for the context that opens a chat session (the first user
# owns the conversation); before, the function took none.
_SESSION_TAKES_CONTEXT = (
    "context" in inspect.signature(chat_session.async_get_chat_session).parameters
)


@contextmanager
def open_chat_session(
    hass: HomeAssistant,
    conversation_id: str | None = None,
    context: Context | None = None,
) -> Iterator[chat_session.ChatSession]:
    """A chat session opened as HA's Assist pipeline opens it, on every HA."""
    kwargs = {"context": context} if _SESSION_TAKES_CONTEXT else {}
    with chat_session.async_get_chat_session(
        hass, conversation_id, **kwargs
    ) as session:
        yield session


@contextmanager
def open_chat_log(
    hass: HomeAssistant, conversation_id: str
) -> Iterator[conversation.ChatLog]:
    """A finished conversation's chat log, to read what it recorded."""
    with (
        open_chat_session(hass, conversation_id) as session,
        conversation.async_get_chat_log(hass, session) as chat_log,
    ):
        yield chat_log


async def async_converse_streamed(
    hass: HomeAssistant, text: str, language: str | None = None
) -> tuple[conversation.ConversationResult, list[dict]]:
    """Converse the way an Assist pipeline does, capturing every streamed delta.

    As the pipeline does before each run, the agent is prepared for the
    language first (Toolbelt loads HA's sentences for its honesty guard).
    """
    deltas: list[dict] = []
    context = Context()
    await conversation.async_prepare_agent(
        hass, agent_id(hass), language or hass.config.language
    )
    with (
        open_chat_session(hass, context=context) as session,
        conversation.async_get_chat_log(
            hass,
            session,
            chat_log_delta_listener=lambda _log, delta: deltas.append(dict(delta)),
        ),
    ):
        result = await conversation.async_converse(
            hass,
            text,
            session.conversation_id,
            context,
            language,
            agent_id=agent_id(hass),
        )
    return result, deltas


def streamed_text(deltas: list[dict]) -> str:
    """Everything that went to TTS."""
    return "".join(d.get("content") or "" for d in deltas if "tool_call_id" not in d)
