"""The capability check, run when an agent is created or changed: one place.

It probes with the agent's own turn-on tool, as the agent will send it (on
HA 2026.10+ that is ``intent__HassTurnOn``, further prefixed when APIs are
merged), so the check sees what a real turn sees. The server flow runs it for
the agent created with the server; the agent flow for every later one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import functools
import json
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.util.ulid import ulid_now

from ..backend.openai_compat import OpenAICompatBackend
from ..backend.servers import ServerKind
from ..const import DOMAIN
from ..loop.format_choice import NATIVE_FORMATS
from ..loop.probe import (
    ConstraintReport,
    ProbeReport,
    async_probe_constraints,
    async_probe_tool_mode,
)
from ..loop.tool_choice import TEXT_KINDS
from . import compat
from .client import async_read_context_size
from .intent_tools import PROBE_TOOL, device_guidance, plain_name
from .large_home import FIND_DEVICES_TOOL, exposed_devices
from .server_names import spoken_name
from .settings import agent_settings
from .turn_prompt import turn_prompt

# What a typical turn adds to the prompt before the answer: the user's words,
# one tool call and its result (in tokens).
TURN_TOKENS = 300
# Characters per token, as a tokenizer splits English text and JSON on
# average; the check estimates, the server counts.
CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class AgentCheck:
    """What the check found: the tool mode, and the constraints honoured."""

    report: ProbeReport
    constraints: ConstraintReport
    text_mode: bool
    context: ContextFit | None = None
    """The context the server reports, against the agent's prompt; None if unknown."""

    @property
    def verdict(self) -> str:
        """The tool mode in one sentence; then the context warning, if any."""
        if self.context is None or self.context.fits:
            return self.report.summary
        return f"{self.report.summary}\n\n{self.context.warning}"


@dataclass(frozen=True, slots=True)
class ContextFit:
    """Whether the agent's prompt, a typical turn and its answer fit the context."""

    context: int
    prompt_tokens: int
    answer_tokens: int
    server: str
    hint: str
    large_home: bool

    @property
    def needed(self) -> int:
        """Tokens a typical turn's last request fills: prompt, turn and answer."""
        return self.prompt_tokens + TURN_TOKENS + self.answer_tokens

    @property
    def fits(self) -> bool:
        """True when a typical turn fits the reported context."""
        return self.needed <= self.context

    @property
    def warning(self) -> str:
        """What does not fit and what to change, for the check's form."""
        other = (
            "expose fewer entities to Assist"
            if self.large_home
            else "turn on large-home mode in the agent's options"
        )
        return (
            f"Context too small: {self.server} gives this model"
            f" {self.context:,} tokens, but the agent's prompt takes about"
            f" {self.prompt_tokens:,}, and a typical turn ({TURN_TOKENS}) and its"
            f" answer (up to {self.answer_tokens:,}) bring a request to about"
            f" {self.needed:,}: turns will fail or lose the start of the prompt."
            f" To fix it, {self.hint}, or {other}."
        )


def _llm_context(hass: HomeAssistant) -> llm.LLMContext:
    """The context of a turn in the HA language, by no one in particular."""
    return llm.LLMContext(
        platform=DOMAIN,
        context=Context(),
        language=hass.config.language,
        assistant=conversation.DOMAIN,
        device_id=None,
    )


async def _async_agent_api(
    hass: HomeAssistant, options: dict[str, Any]
) -> llm.APIInstance | None:
    """The agent's LLM APIs as a turn gets them; None without any."""
    apis = agent_settings(options).llm_apis
    if not apis:
        return None
    try:
        return await llm.async_get_api(hass, list(apis), _llm_context(hass))
    except HomeAssistantError:
        return None


async def async_probe_tool(
    hass: HomeAssistant, options: dict[str, Any]
) -> dict[str, Any]:
    """The agent's turn-on tool as OpenAI sees it, else ``PROBE_TOOL``."""
    api = await _async_agent_api(hass, options)
    tools = api.tools if api else []
    chosen = next(
        (t for t in tools if plain_name(t.name) == "HassTurnOn"),
        tools[0] if tools else None,
    )
    if api is None or chosen is None:
        return PROBE_TOOL
    return compat.tool_to_openai(chosen, api.custom_serializer)


async def async_tool_names(hass: HomeAssistant, options: dict[str, Any]) -> list[str]:
    """The agent's tools by their plain names, for the tool choice list."""
    api = await _async_agent_api(hass, options)
    return sorted({plain_name(t.name) for t in api.tools}) if api else []


async def _async_prompt_chars(
    hass: HomeAssistant, options: Mapping[str, Any]
) -> tuple[int, bool]:
    """Characters of the agent's first request (system prompt, rules and tools).

    Built as a turn builds it; also whether large-home mode is on for this home.
    """
    agent = agent_settings(options)
    # A ChatLog of its own: no conversation is started, nothing is kept.
    chat_log = conversation.ChatLog(hass, ulid_now())
    try:
        await chat_log.async_provide_llm_data(
            _llm_context(hass), list(agent.llm_apis) or None, agent.prompt
        )
    except conversation.ConverseError:
        return 0, False
    devices = exposed_devices(hass, conversation.DOMAIN) if chat_log.llm_api else []
    prompt = turn_prompt(hass, chat_log, agent.large_home, devices)
    system = "".join(
        str(m.get("content") or "") for m in prompt.messages if m["role"] == "system"
    )
    names = [t["function"]["name"] for t in prompt.tools]
    rules = device_guidance(names)
    tools = json.dumps(prompt.tools, ensure_ascii=False, separators=(",", ":"))
    chars = len(system) + len(rules) + (len(tools) if prompt.tools else 0)
    return chars, FIND_DEVICES_TOOL in names


async def async_check_agent(
    hass: HomeAssistant,
    backend: OpenAICompatBackend,
    data: Mapping[str, Any],
    options: dict[str, Any],
) -> AgentCheck:
    """Probe the tool mode and the constraints this server kind may honour.

    Every probe is a turn's first request, with the agent's own settings.
    Then the context the server reports (after the probes, which load the
    model: Ollama reports a loaded model's) is held against the agent's prompt.
    """
    kind = backend.kind
    agent = agent_settings(options)
    settings = agent.loop(kind)
    tool = await async_probe_tool(hass, options)
    report = await async_probe_tool_mode(backend, settings, tool)
    text_mode = settings.tool_format not in NATIVE_FORMATS
    probe = functools.partial(async_probe_constraints, backend, settings, tool=tool)
    # Natively tool_choice forces a call; a text format needs a grammar or a
    # schema, and so does native mode on a server that ignores tool_choice
    # (Ollama): then they go with the tools, as a turn sends them.
    text_kinds = tuple(k for k in kind.constraints if k in TEXT_KINDS)
    if text_mode:
        constraints = await probe(kinds=text_kinds)
    else:
        native = tuple(k for k in kind.constraints if k not in TEXT_KINDS)
        constraints = await probe(kinds=native)
        if "tool_choice" not in constraints.honoured and text_kinds:
            constraints = constraints.merge(await probe(kinds=text_kinds))
    context = await _async_context_fit(hass, data, kind, options, agent.max_tokens)
    return AgentCheck(report, constraints, text_mode, context)


async def _async_context_fit(
    hass: HomeAssistant,
    data: Mapping[str, Any],
    kind: ServerKind,
    options: Mapping[str, Any],
    answer_tokens: int,
) -> ContextFit | None:
    """The reported context against the agent's prompt; None when not reported."""
    size = await async_read_context_size(
        hass, data, kind, agent_settings(options).model
    )
    if size is None:
        return None
    chars, large_home = await _async_prompt_chars(hass, options)
    return ContextFit(
        context=size,
        prompt_tokens=-(-chars // CHARS_PER_TOKEN),
        answer_tokens=answer_tokens,
        server=spoken_name(kind),
        hint=kind.context_hint,
        large_home=large_home,
    )
