"""What a config entry and its agents store, read in one place.

A server entry's data and an agent subentry's data are read only here: each
key once, its default (``OPTION_DEFAULTS``) and its type applied once. The rest
of the integration reads the fields. The server kind is resolved here too, once
per entry; its traits travel with the backend (``OpenAICompatBackend.kind``) and
into the loop's settings (``LoopSettings.server``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..backend.servers import ServerKind, get_server_kind
from ..const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_CONSTRAINTS,
    CONF_HANDOFF_TARGETS,
    CONF_INSTANT_CONFIRMATIONS,
    CONF_KEEP_ALIVE,
    CONF_LARGE_HOME,
    CONF_LLM_HASS_API,
    CONF_MAX_DEVICE_COMMANDS,
    CONF_MAX_TOKENS,
    CONF_MAX_TOOL_CALLS,
    CONF_MODEL,
    CONF_PROMPT,
    CONF_REQUEST_TIMEOUT,
    CONF_RUN_RECOGNIZED,
    CONF_SERVER_KIND,
    CONF_STRICT_CALLS,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    CONF_TOOL_FORMAT,
    CONF_WARM_UP,
    DEFAULT_KEEP_ALIVE,
    DEFAULT_TOOL_CHOICE,
    OPTION_DEFAULTS,
)
from ..loop import LoopSettings, Phrasebook
from ..loop.phrasebook import ENGLISH
from ..tools.definitions import ALIASES


@dataclass(frozen=True, slots=True)
class ServerSettings:
    """A server entry's data: the kind of server, where it is, its key."""

    kind: ServerKind
    base_url: str
    api_key: str


def server_settings(data: Mapping[str, Any]) -> ServerSettings:
    """The entry's data; an unknown or missing kind acts as "other"."""
    return ServerSettings(
        kind=get_server_kind(data.get(CONF_SERVER_KIND, "other")),
        base_url=data.get(CONF_BASE_URL, ""),
        api_key=data.get(CONF_API_KEY) or "",
    )


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """An agent subentry's data (a conversation agent or an AI Task)."""

    model: str
    prompt: str | None
    llm_apis: tuple[str, ...]
    tool_format: str
    temperature: float
    max_tokens: int
    timeout: float
    max_tool_calls: int
    max_device_commands: int
    tool_choice: str
    strict_calls: bool
    constraints: tuple[str, ...]
    large_home: str
    warm_up: bool
    keep_alive: float
    instant_confirmations: bool
    run_recognized: bool
    handoff_targets: tuple[str, ...]

    def loop(
        self,
        server: ServerKind,
        *,
        silent_answers: bool = False,
        phrases: Phrasebook = ENGLISH,
    ) -> LoopSettings:
        """The loop's settings for a turn of this agent on a ``server`` kind.

        ``silent_answers``: an empty answer may stay silent (an Assist agent on
        an HA that keeps silent responses; never an AI Task, which must answer).
        ``phrases``: what the loop says itself, in the conversation's language.
        """
        return LoopSettings(
            model=self.model,
            tool_format=self.tool_format,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            max_tool_calls=self.max_tool_calls,
            max_device_commands=self.max_device_commands,
            tool_choice=self.tool_choice,
            strict_calls=self.strict_calls,
            constraints=self.constraints,
            server=server,
            silent_answers=silent_answers,
            phrases=phrases,
            aliases=ALIASES,
        )


def agent_settings(data: Mapping[str, Any]) -> AgentSettings:
    """A subentry's data as settings (the UI stores floats; unset: the defaults)."""
    options = {**OPTION_DEFAULTS, **data}
    apis = options.get(CONF_LLM_HASS_API) or ()
    return AgentSettings(
        model=str(options.get(CONF_MODEL) or ""),
        prompt=options.get(CONF_PROMPT),
        # One API id alone is how older versions stored it.
        llm_apis=(apis,) if isinstance(apis, str) else tuple(apis),
        tool_format=options[CONF_TOOL_FORMAT],
        temperature=float(options[CONF_TEMPERATURE]),
        max_tokens=int(options[CONF_MAX_TOKENS]),
        timeout=float(options[CONF_REQUEST_TIMEOUT]),
        max_tool_calls=int(options[CONF_MAX_TOOL_CALLS]),
        max_device_commands=int(options[CONF_MAX_DEVICE_COMMANDS]),
        tool_choice=str(options.get(CONF_TOOL_CHOICE) or DEFAULT_TOOL_CHOICE).strip(),
        strict_calls=bool(options.get(CONF_STRICT_CALLS, False)),
        constraints=tuple(options.get(CONF_CONSTRAINTS) or ()),
        large_home=options[CONF_LARGE_HOME],
        warm_up=bool(options.get(CONF_WARM_UP, True)),
        keep_alive=float(options.get(CONF_KEEP_ALIVE, DEFAULT_KEEP_ALIVE)),
        instant_confirmations=bool(options.get(CONF_INSTANT_CONFIRMATIONS, False)),
        run_recognized=bool(options.get(CONF_RUN_RECOGNIZED, False)),
        handoff_targets=tuple(options.get(CONF_HANDOFF_TARGETS) or ()),
    )


def loop_settings(
    data: Mapping[str, Any],
    server: ServerKind,
    *,
    silent_answers: bool = False,
    phrases: Phrasebook = ENGLISH,
) -> LoopSettings:
    """A subentry's data as the loop's settings on a ``server`` kind."""
    return agent_settings(data).loop(
        server, silent_answers=silent_answers, phrases=phrases
    )
