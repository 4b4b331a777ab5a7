"""Constants shared by the integration; HA-free so the toolcalls CLI can import it."""

from __future__ import annotations

import logging
from typing import Any

from .backend.base import DEFAULT_REQUEST_TIMEOUT

DOMAIN = "toolbelt"
LOGGER = logging.getLogger(__package__)

# Parent entry (the model server).
CONF_SERVER_KIND = "server_kind"
CONF_BASE_URL = "base_url"
CONF_API_KEY = "api_key"

# Agent subentry.
SUBENTRY_CONVERSATION = "conversation"
CONF_MODEL = "model"
CONF_PROMPT = "prompt"
CONF_LLM_HASS_API = "llm_hass_api"
CONF_TOOL_FORMAT = "tool_format"
CONF_TEMPERATURE = "temperature"
CONF_MAX_TOKENS = "max_tokens"
CONF_REQUEST_TIMEOUT = "request_timeout"
CONF_MAX_TOOL_CALLS = "max_tool_calls"
CONF_MAX_DEVICE_COMMANDS = "max_device_commands"
# Tool choice policy, "strict calls", and the constraint kinds the check saw honoured.
CONF_TOOL_CHOICE = "tool_choice"
CONF_STRICT_CALLS = "strict_calls"
CONF_CONSTRAINTS = "constraints"
# Not stored: Reconfigure asks for the check although nothing it depends on changed.
CONF_CHECK_AGAIN = "check_again"
# A round of device commands that all worked ends the turn with HA's own words.
CONF_INSTANT_CONFIRMATIONS = "instant_confirmations"
# A device command HA recognized, which the model would not run, is run by HA.
CONF_RUN_RECOGNIZED = "run_recognized_commands"
# Conversation agents (entity ids) the handoff tool may pass a request to.
CONF_HANDOFF_TARGETS = "handoff_targets"
# The warm-up (warmup.py): the agent's fixed prompt sent ahead to the server's
# cache; and, where the server takes it (Ollama), minutes it keeps the model
# loaded after a request (-1: always).
CONF_WARM_UP = "warm_up"
CONF_KEEP_ALIVE = "keep_alive"
DEFAULT_KEEP_ALIVE = -1
# Large home: auto, on or off (large_home.py: an index and find_devices).
CONF_LARGE_HOME = "large_home"
LARGE_HOME_MODES = ("auto", "on", "off")

# AI Task subentry (an ai_task entity on the same server).
SUBENTRY_AI_TASK = "ai_task_data"
DEFAULT_AI_TASK_NAME = "Toolbelt AI Task"

DEFAULT_AGENT_NAME = "Toolbelt agent"
DEFAULT_TOOL_FORMAT = "auto"
DEFAULT_TOOL_CHOICE = "auto"
DEFAULT_LARGE_HOME = "auto"
DEFAULT_TEMPERATURE = 0.3
DEFAULT_MAX_TOKENS = 1024
MAX_TOOL_CALLS_PER_TURN = 20
MAX_DEVICE_COMMANDS_PER_TURN = 3

# One source for what an unset option means: new agents store these, and a
# turn reads them for any option a subentry lacks.
OPTION_DEFAULTS: dict[str, Any] = {
    CONF_TOOL_FORMAT: DEFAULT_TOOL_FORMAT,
    CONF_TEMPERATURE: DEFAULT_TEMPERATURE,
    CONF_MAX_TOKENS: DEFAULT_MAX_TOKENS,
    CONF_REQUEST_TIMEOUT: DEFAULT_REQUEST_TIMEOUT,
    CONF_MAX_TOOL_CALLS: MAX_TOOL_CALLS_PER_TURN,
    CONF_MAX_DEVICE_COMMANDS: MAX_DEVICE_COMMANDS_PER_TURN,
    CONF_LARGE_HOME: DEFAULT_LARGE_HOME,
}

# Listing models answers fast on every server; a slow answer means a sick server.
CONNECT_TIMEOUT = 10.0
