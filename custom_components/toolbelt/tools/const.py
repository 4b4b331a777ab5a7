"""Keys and defaults of the tool-backend settings (the 'tools' config subentry)."""

from __future__ import annotations

from typing import Final

from ..const import DOMAIN  # noqa: F401 - re-exported for tools/

SUBENTRY_TYPE_TOOLS: Final = "tools"
API_ID: Final = "toolbelt_tools"
API_NAME: Final = "Toolbelt tools"

CONF_MEMORY_BACKEND: Final = "memory_backend"
CONF_MCP_URL: Final = "mcp_url"
CONF_MCP_TOKEN: Final = "mcp_token"
CONF_MCP_TOOL_SEARCH: Final = "mcp_tool_search"
CONF_MCP_TOOL_STORE: Final = "mcp_tool_store"
CONF_MCP_TOOL_UPDATE: Final = "mcp_tool_update"
CONF_MCP_TOOL_DELETE: Final = "mcp_tool_delete"
# Our memory action -> the setting that names the MCP server's tool for it.
MCP_TOOL_KEYS: Final = {
    "search": CONF_MCP_TOOL_SEARCH,
    "store": CONF_MCP_TOOL_STORE,
    "update": CONF_MCP_TOOL_UPDATE,
    "delete": CONF_MCP_TOOL_DELETE,
}

CONF_SEARCH_BACKEND: Final = "search_backend"
CONF_SEARCH_URL: Final = "search_url"
CONF_SEARCH_API_KEY: Final = "search_api_key"

CONF_FETCH_MAX_CHARS: Final = "fetch_max_chars"
CONF_SHARED_MEMORY_EDITORS: Final = "shared_memory_editors"
CONF_FETCH_ALLOW_LIST: Final = "fetch_allow_list"
CONF_MODEL_SWITCHING: Final = "model_switching"
CONF_HISTORY_DAYS: Final = "history_days"
CONF_PROFILE_IN_PROMPT: Final = "profile_in_prompt"
# Not in the form: where Reddit's public JSON search lives (tests point it home).
CONF_REDDIT_URL: Final = "reddit_url"

MEMORY_SQLITE: Final = "sqlite"
MEMORY_MCP: Final = "mcp"
MEMORY_BACKENDS: Final = (MEMORY_SQLITE, MEMORY_MCP)

SEARCH_SEARXNG: Final = "searxng"
SEARCH_BRAVE: Final = "brave"
SEARCH_TAVILY: Final = "tavily"
SEARCH_DUCKDUCKGO: Final = "duckduckgo"
SEARCH_NONE: Final = "none"
SEARCH_BACKENDS: Final = (
    SEARCH_SEARXNG,
    SEARCH_BRAVE,
    SEARCH_TAVILY,
    SEARCH_DUCKDUCKGO,
    SEARCH_NONE,
)
SEARCH_NEEDS_KEY: Final = frozenset({SEARCH_BRAVE, SEARCH_TAVILY})

# Who may update or delete shared memories (those stored without an HA user,
# e.g. from a voice satellite): any conversation, a logged-in user, an admin,
# or no one (shared facts can then only be added).
EDITORS_ANYONE: Final = "anyone"
EDITORS_USERS: Final = "users"
EDITORS_ADMINS: Final = "admins"
EDITORS_NOBODY: Final = "nobody"
SHARED_MEMORY_EDITORS: Final = (
    EDITORS_ADMINS,
    EDITORS_USERS,
    EDITORS_ANYONE,
    EDITORS_NOBODY,
)
DEFAULT_SHARED_MEMORY_EDITORS: Final = EDITORS_ADMINS

# Who may switch an agent's model with the model tool.
MODEL_SWITCH_OFF: Final = "off"
MODEL_SWITCH_ADMINS: Final = "admins"
MODEL_SWITCH_ANYONE: Final = "anyone"
MODEL_SWITCHING: Final = (MODEL_SWITCH_OFF, MODEL_SWITCH_ADMINS, MODEL_SWITCH_ANYONE)
DEFAULT_MODEL_SWITCHING: Final = MODEL_SWITCH_OFF

DEFAULT_HISTORY_DAYS: Final = 30
MAX_HISTORY_DAYS: Final = 3650
MAX_HISTORY_TURNS: Final = 2000
"""Most turns kept per user (and for the shared history); older ones are purged."""
DEFAULT_PROFILE_IN_PROMPT: Final = True
REDDIT_URL: Final = "https://www.reddit.com"

DEFAULT_MEMORY_BACKEND: Final = MEMORY_SQLITE
DEFAULT_SEARCH_BACKEND: Final = SEARCH_NONE
DEFAULT_FETCH_MAX_CHARS: Final = 8000
DEFAULT_SEARCH_RESULTS: Final = 5
MAX_SEARCH_RESULTS: Final = 10
SEARCH_TIMEOUT: Final = 10.0
FETCH_TIMEOUT: Final = 15.0
MCP_TIMEOUT: Final = 10.0
MEMORY_DB_FILENAME: Final = "toolbelt_memory.db"

ISSUE_SEARCH_AUTH: Final = "search_auth_failed"
ISSUE_MEMORY_AUTH: Final = "memory_auth_failed"
