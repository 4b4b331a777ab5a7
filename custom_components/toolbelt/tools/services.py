"""The configured backends, built from the 'tools' subentry data.

Settings are read each time the API hands out an instance, and backends are rebuilt
only when the settings change, so a reconfigure takes effect on the next turn
without reloading the integration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.aiohttp_client import async_get_clientsession

from .const import (
    CONF_FETCH_ALLOW_LIST,
    CONF_FETCH_MAX_CHARS,
    CONF_HISTORY_DAYS,
    CONF_MCP_TOKEN,
    CONF_MCP_URL,
    CONF_MEMORY_BACKEND,
    CONF_MODEL_SWITCHING,
    CONF_PROFILE_IN_PROMPT,
    CONF_REDDIT_URL,
    CONF_SEARCH_API_KEY,
    CONF_SEARCH_BACKEND,
    CONF_SEARCH_URL,
    CONF_SHARED_MEMORY_EDITORS,
    DEFAULT_FETCH_MAX_CHARS,
    DEFAULT_HISTORY_DAYS,
    DEFAULT_MEMORY_BACKEND,
    DEFAULT_MODEL_SWITCHING,
    DEFAULT_PROFILE_IN_PROMPT,
    DEFAULT_SEARCH_BACKEND,
    DEFAULT_SHARED_MEMORY_EDITORS,
    DOMAIN,
    FETCH_TIMEOUT,
    ISSUE_MEMORY_AUTH,
    ISSUE_SEARCH_AUTH,
    MAX_HISTORY_DAYS,
    MCP_TIMEOUT,
    MCP_TOOL_KEYS,
    REDDIT_URL,
    SEARCH_BRAVE,
    SEARCH_DUCKDUCKGO,
    SEARCH_SEARXNG,
    SEARCH_TAVILY,
    SEARCH_TIMEOUT,
)
from .errors import ServiceAuthError
from .fetch.fetcher import WebFetcher
from .fetch.ssrf import AllowList, parse_allow_list
from .history_store import HistoryStore
from .memory.base import MemoryBackend
from .memory.mcp import McpClient, McpMemory
from .persona_store import PersonaStore
from .profile_store import ProfileStore
from .search.base import SearchBackend
from .search.brave import BraveSearch
from .search.duckduckgo import DuckDuckGoSearch
from .search.reddit import RedditSearch
from .search.searxng import SearxngSearch
from .search.tavily import TavilySearch
from .sqlite_db import SqliteDatabase


@dataclass(frozen=True, slots=True)
class ToolSettings:
    """The tools subentry, parsed; missing keys take the defaults."""

    memory_backend: str = DEFAULT_MEMORY_BACKEND
    mcp_url: str = ""
    mcp_token: str = ""
    mcp_tool_names: Mapping[str, str] = field(default_factory=dict)
    search_backend: str = DEFAULT_SEARCH_BACKEND
    search_url: str = ""
    search_api_key: str = ""
    fetch_max_chars: int = DEFAULT_FETCH_MAX_CHARS
    allow_list: AllowList = field(default_factory=AllowList)
    shared_memory_editors: str = DEFAULT_SHARED_MEMORY_EDITORS
    model_switching: str = DEFAULT_MODEL_SWITCHING
    history_days: int = DEFAULT_HISTORY_DAYS
    profile_in_prompt: bool = DEFAULT_PROFILE_IN_PROMPT
    reddit_url: str = REDDIT_URL

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> ToolSettings:
        """Parse subentry data; an unparsable allow-list entry is ignored."""
        try:
            allow = parse_allow_list(data.get(CONF_FETCH_ALLOW_LIST))
        except ValueError:
            allow = AllowList()
        tool_names = {
            action: name
            for action, key in MCP_TOOL_KEYS.items()
            if (name := str(data.get(key) or "").strip())
        }
        return cls(
            memory_backend=data.get(CONF_MEMORY_BACKEND) or DEFAULT_MEMORY_BACKEND,
            mcp_url=data.get(CONF_MCP_URL) or "",
            mcp_token=data.get(CONF_MCP_TOKEN) or "",
            mcp_tool_names=tool_names,
            search_backend=data.get(CONF_SEARCH_BACKEND) or DEFAULT_SEARCH_BACKEND,
            search_url=data.get(CONF_SEARCH_URL) or "",
            search_api_key=data.get(CONF_SEARCH_API_KEY) or "",
            shared_memory_editors=data.get(CONF_SHARED_MEMORY_EDITORS)
            or DEFAULT_SHARED_MEMORY_EDITORS,
            fetch_max_chars=int(
                data.get(CONF_FETCH_MAX_CHARS) or DEFAULT_FETCH_MAX_CHARS
            ),
            allow_list=allow,
            model_switching=data.get(CONF_MODEL_SWITCHING) or DEFAULT_MODEL_SWITCHING,
            history_days=_history_days(data.get(CONF_HISTORY_DAYS)),
            profile_in_prompt=bool(
                data.get(CONF_PROFILE_IN_PROMPT, DEFAULT_PROFILE_IN_PROMPT)
            ),
            reddit_url=data.get(CONF_REDDIT_URL) or REDDIT_URL,
        )

    @property
    def secrets(self) -> list[str]:
        """Values that must never appear in traces or diagnostics."""
        return [s for s in (self.mcp_token, self.search_api_key) if s]


@dataclass(frozen=True, slots=True)
class Stores:
    """The tables that always live in the SQLite file, whatever the memory backend."""

    history: HistoryStore
    profiles: ProfileStore
    persona: PersonaStore
    database: SqliteDatabase
    """The file they share (whether a deletion is overwritten on disk yet)."""


class ToolServices:
    """Backends for one set of settings; close() releases them."""

    def __init__(
        self,
        hass: HomeAssistant,
        settings: ToolSettings,
        *,
        memory: MemoryBackend,
        stores: Stores,
    ) -> None:
        """Build backends; memory and stores come from the hub, which owns the file."""
        self.hass = hass
        self.settings = settings
        self.stores = stores
        session = async_get_clientsession(hass)
        self.memory = memory
        self.search = build_search(session, settings)
        self.reddit = build_reddit(session, settings, self.search)
        self.fetcher = WebFetcher(
            session,
            allow=settings.allow_list,
            run_blocking=hass.async_add_executor_job,
            timeout=FETCH_TIMEOUT,
        )

    def report_auth_error(self, err: ServiceAuthError, *, memory: bool = False) -> None:
        """Raise a repair issue that tells the user what to fix."""
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            ISSUE_MEMORY_AUTH if memory else ISSUE_SEARCH_AUTH,
            is_fixable=False,
            is_persistent=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key=ISSUE_MEMORY_AUTH if memory else ISSUE_SEARCH_AUTH,
            translation_placeholders={"backend": err.service, "details": err.user_hint},
        )

    def clear_auth_issue(self, *, memory: bool = False) -> None:
        """A backend worked again: drop its repair issue."""
        ir.async_delete_issue(
            self.hass, DOMAIN, ISSUE_MEMORY_AUTH if memory else ISSUE_SEARCH_AUTH
        )


def build_mcp_memory(session: Any, settings: ToolSettings) -> McpMemory:
    """Memory on the configured MCP server; the setup form tests this same one."""
    client = McpClient(
        session, settings.mcp_url, token=settings.mcp_token or None, timeout=MCP_TIMEOUT
    )
    return McpMemory(client, settings.mcp_tool_names)


def _history_days(value: Any) -> int:
    """The retention in days; 0 keeps no history. Missing or broken: the default."""
    try:
        days = int(value)
    except (TypeError, ValueError):
        return DEFAULT_HISTORY_DAYS
    return max(0, min(days, MAX_HISTORY_DAYS))


def build_reddit(
    session: Any, settings: ToolSettings, search: SearchBackend | None
) -> SearchBackend | None:
    """SearXNG's reddit engine, else Reddit's public JSON; None when search is off."""
    if search is None:
        return None
    if isinstance(search, SearxngSearch):
        return search
    return RedditSearch(session, SEARCH_TIMEOUT, settings.reddit_url)


SEARCH_ENGINES: Mapping[str, type[SearchBackend]] = {
    SEARCH_SEARXNG: SearxngSearch,
    SEARCH_BRAVE: BraveSearch,
    SEARCH_TAVILY: TavilySearch,
    SEARCH_DUCKDUCKGO: DuckDuckGoSearch,
}


def build_search(session: Any, settings: ToolSettings) -> SearchBackend | None:
    """The configured search engine, or None when search is off or has no address."""
    engine = SEARCH_ENGINES.get(settings.search_backend)
    if engine is None or not (settings.search_url or engine.default_url):
        return None
    return engine(session, SEARCH_TIMEOUT, settings.search_url, settings.search_api_key)
