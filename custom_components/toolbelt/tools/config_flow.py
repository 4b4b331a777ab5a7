"""UI for the tool backends: a 'tools' config subentry (one per Toolbelt entry).

Step 'backends' picks memory and search backends and fetch limits; 'mcp' and
'search' ask only for what the picked backend needs, and test it before saving so
a wrong URL or key shows here rather than mid-conversation.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import (
    SOURCE_RECONFIGURE,
    ConfigSubentryFlow,
    SubentryFlowResult,
)
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.selector import (
    BooleanSelector,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
import voluptuous as vol

from .const import (
    CONF_FETCH_ALLOW_LIST,
    CONF_FETCH_MAX_CHARS,
    CONF_HISTORY_DAYS,
    CONF_MCP_TOKEN,
    CONF_MCP_URL,
    CONF_MEMORY_BACKEND,
    CONF_MODEL_SWITCHING,
    CONF_PROFILE_IN_PROMPT,
    CONF_SEARCH_API_KEY,
    CONF_SEARCH_BACKEND,
    CONF_SEARCH_URL,
    CONF_SHARED_MEMORY_EDITORS,
    DEFAULT_FETCH_MAX_CHARS,
    DEFAULT_HISTORY_DAYS,
    DEFAULT_MODEL_SWITCHING,
    DEFAULT_PROFILE_IN_PROMPT,
    DEFAULT_SEARCH_BACKEND,
    DEFAULT_SHARED_MEMORY_EDITORS,
    MAX_HISTORY_DAYS,
    MCP_TOOL_KEYS,
    MEMORY_BACKENDS,
    MEMORY_MCP,
    MEMORY_SQLITE,
    MODEL_SWITCHING,
    SEARCH_BACKENDS,
    SEARCH_DUCKDUCKGO,
    SEARCH_NEEDS_KEY,
    SEARCH_NONE,
    SEARCH_SEARXNG,
    SHARED_MEMORY_EDITORS,
    SUBENTRY_TYPE_TOOLS,
)
from .errors import (
    ServiceAuthError,
    ServiceError,
    ServiceRateLimitedError,
    ServiceWrongApiError,
    ToolError,
)
from .fetch.ssrf import parse_allow_list
from .memory.mcp import DEFAULT_TOOL_NAMES
from .services import ToolSettings, build_mcp_memory, build_search

_MCP_KEYS = (CONF_MCP_URL, CONF_MCP_TOKEN, *MCP_TOOL_KEYS.values())
_SEARCH_KEYS = (CONF_SEARCH_URL, CONF_SEARCH_API_KEY)
_TITLES = {
    MEMORY_SQLITE: "SQLite",
    MEMORY_MCP: "MCP server",
    SEARCH_SEARXNG: "SearXNG",
    "brave": "Brave",
    "tavily": "Tavily",
    SEARCH_DUCKDUCKGO: "DuckDuckGo",
    SEARCH_NONE: "no search",
}


class ToolBackendsSubentryFlowHandler(ConfigSubentryFlow):
    """Add or reconfigure the backends behind memory, search and web_fetch."""

    def __init__(self) -> None:
        """Nothing chosen yet."""
        super().__init__()
        self._data: dict[str, Any] = {}

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """New subentry; only one per entry makes sense."""
        entry = self._get_entry()
        if any(
            sub.subentry_type == SUBENTRY_TYPE_TOOLS
            for sub in entry.subentries.values()
        ):
            return self.async_abort(reason="already_configured")
        return await self.async_step_backends()

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Start from the saved settings."""
        self._data = dict(self._get_reconfigure_subentry().data)
        return await self.async_step_backends()

    async def async_step_backends(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Pick the backends and fetch limits."""
        errors: dict[str, str] = {}
        if user_input is not None:
            allow_text = user_input.get(CONF_FETCH_ALLOW_LIST, "")
            try:
                allow = parse_allow_list(allow_text)
            except ValueError:
                errors[CONF_FETCH_ALLOW_LIST] = "invalid_allow_list"
            else:
                previous_search = self._data.get(CONF_SEARCH_BACKEND)
                self._data.update(user_input)
                if self._data[CONF_SEARCH_BACKEND] != previous_search:
                    _drop(self._data, _SEARCH_KEYS)
                self._data[CONF_FETCH_ALLOW_LIST] = sorted(allow.hosts) + [
                    str(net) for net in allow.networks
                ]
                self._data[CONF_FETCH_MAX_CHARS] = int(user_input[CONF_FETCH_MAX_CHARS])
                self._data[CONF_HISTORY_DAYS] = int(user_input[CONF_HISTORY_DAYS])
                if self._data[CONF_MEMORY_BACKEND] == MEMORY_MCP:
                    return await self.async_step_mcp()
                _drop(self._data, _MCP_KEYS)
                return await self._after_memory()
        return self._backends_form({**self._data, **(user_input or {})}, errors)

    def _backends_form(
        self, data: dict[str, Any], errors: dict[str, str]
    ) -> SubentryFlowResult:
        """The backends form, filled with ``data``."""
        allow_default = data.get(CONF_FETCH_ALLOW_LIST) or []
        if isinstance(allow_default, list):
            allow_default = "\n".join(allow_default)
        schema = vol.Schema(
            {
                vol.Required(
                    CONF_MEMORY_BACKEND,
                    default=data.get(CONF_MEMORY_BACKEND, MEMORY_SQLITE),
                ): _select(MEMORY_BACKENDS, "memory_backend"),
                vol.Required(
                    CONF_SHARED_MEMORY_EDITORS,
                    default=data.get(
                        CONF_SHARED_MEMORY_EDITORS, DEFAULT_SHARED_MEMORY_EDITORS
                    ),
                ): _select(SHARED_MEMORY_EDITORS, "shared_memory_editors"),
                vol.Required(
                    CONF_SEARCH_BACKEND,
                    default=data.get(CONF_SEARCH_BACKEND, DEFAULT_SEARCH_BACKEND),
                ): _select(SEARCH_BACKENDS, "search_backend"),
                vol.Required(
                    CONF_FETCH_MAX_CHARS,
                    default=data.get(CONF_FETCH_MAX_CHARS, DEFAULT_FETCH_MAX_CHARS),
                ): NumberSelector(
                    NumberSelectorConfig(
                        min=1000, max=100000, step=500, mode=NumberSelectorMode.BOX
                    )
                ),
                vol.Optional(
                    CONF_FETCH_ALLOW_LIST, default=allow_default
                ): TextSelector(TextSelectorConfig(multiline=True)),
                vol.Required(
                    CONF_HISTORY_DAYS,
                    default=data.get(CONF_HISTORY_DAYS, DEFAULT_HISTORY_DAYS),
                ): NumberSelector(
                    NumberSelectorConfig(
                        min=0,
                        max=MAX_HISTORY_DAYS,
                        step=1,
                        mode=NumberSelectorMode.BOX,
                        unit_of_measurement="days",
                    )
                ),
                vol.Required(
                    CONF_PROFILE_IN_PROMPT,
                    default=data.get(CONF_PROFILE_IN_PROMPT, DEFAULT_PROFILE_IN_PROMPT),
                ): BooleanSelector(),
                vol.Required(
                    CONF_MODEL_SWITCHING,
                    default=data.get(CONF_MODEL_SWITCHING, DEFAULT_MODEL_SWITCHING),
                ): _select(MODEL_SWITCHING, "model_switching"),
            }
        )
        return self.async_show_form(
            step_id="backends", data_schema=schema, errors=errors
        )

    async def async_step_mcp(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Where the MCP memory server is, and what its tools are called."""
        errors: dict[str, str] = {}
        if user_input is not None:
            candidate = {**self._data, **user_input}
            errors = await self._test_mcp(candidate)
            if not errors:
                self._data = candidate
                return await self._after_memory()
        data = {**self._data, **(user_input or {})}
        fields: dict[Any, Any] = {
            vol.Required(
                CONF_MCP_URL, default=data.get(CONF_MCP_URL, "")
            ): TextSelector(TextSelectorConfig(type=TextSelectorType.URL)),
            vol.Optional(CONF_MCP_TOKEN, default=data.get(CONF_MCP_TOKEN, "")): (
                TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))
            ),
        }
        for action, key in MCP_TOOL_KEYS.items():
            fields[
                vol.Optional(key, default=data.get(key) or DEFAULT_TOOL_NAMES[action])
            ] = TextSelector()
        return self.async_show_form(
            step_id="mcp", data_schema=vol.Schema(fields), errors=errors
        )

    async def async_step_search_searxng(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """SearXNG's address; a step of its own so its hints speak of it alone."""
        return await self.async_step_search(user_input)

    async def async_step_search_brave(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Brave's API key."""
        return await self.async_step_search(user_input)

    async def async_step_search_tavily(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Tavily's API key."""
        return await self.async_step_search(user_input)

    async def async_step_search(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """The URL or API key of the picked search engine, tested with one query."""
        backend = self._data[CONF_SEARCH_BACKEND]
        errors: dict[str, str] = {}
        if user_input is not None:
            candidate = {**self._data, **user_input}
            if not candidate.get(CONF_SEARCH_URL):
                candidate.pop(CONF_SEARCH_URL, None)
            errors = await self._test_search(candidate)
            if not errors:
                self._data = candidate
                return self._finish()
        data = {**self._data, **(user_input or {})}
        if backend == SEARCH_SEARXNG:
            fields = {
                vol.Required(
                    CONF_SEARCH_URL, default=data.get(CONF_SEARCH_URL, "")
                ): TextSelector(TextSelectorConfig(type=TextSelectorType.URL))
            }
        else:
            fields = {
                vol.Required(
                    CONF_SEARCH_API_KEY, default=data.get(CONF_SEARCH_API_KEY, "")
                ): TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD)),
                # Empty means the official service; set for a compatible proxy.
                vol.Optional(
                    CONF_SEARCH_URL, default=data.get(CONF_SEARCH_URL, "")
                ): TextSelector(TextSelectorConfig(type=TextSelectorType.URL)),
            }
        return self.async_show_form(
            step_id=f"search_{backend}",
            data_schema=vol.Schema(fields),
            errors=errors,
        )

    async def _after_memory(self) -> SubentryFlowResult:
        backend = self._data[CONF_SEARCH_BACKEND]
        if backend == SEARCH_SEARXNG or backend in SEARCH_NEEDS_KEY:
            return await self.async_step_search()
        _drop(self._data, _SEARCH_KEYS)
        # DuckDuckGo has nothing to ask for, but is tested like the others: an
        # HA that cannot reach it hears so here, not mid-conversation.
        if backend == SEARCH_DUCKDUCKGO and (
            errors := await self._test_search(self._data)
        ):
            return self._backends_form(
                self._data, {CONF_SEARCH_BACKEND: errors["base"]}
            )
        return self._finish()

    def _finish(self) -> SubentryFlowResult:
        title = (
            f"Memory: {_TITLES.get(self._data[CONF_MEMORY_BACKEND], '?')}, "
            f"search: {_TITLES.get(self._data[CONF_SEARCH_BACKEND], '?')}"
        )
        if self.source == SOURCE_RECONFIGURE:
            return self.async_update_and_abort(
                self._get_entry(),
                self._get_reconfigure_subentry(),
                title=title,
                data=self._data,
            )
        return self.async_create_entry(title=title, data=self._data)

    async def _test_mcp(self, data: dict[str, Any]) -> dict[str, str]:
        memory = build_mcp_memory(
            async_get_clientsession(self.hass), ToolSettings.from_data(data)
        )
        try:
            missing = await memory.missing_tools()
        except ServiceAuthError:
            return {"base": "invalid_auth"}
        except (ToolError, ValueError):
            return {"base": "cannot_connect"}
        return {MCP_TOOL_KEYS[missing[0]]: "mcp_tool_missing"} if missing else {}

    async def _test_search(self, data: dict[str, Any]) -> dict[str, str]:
        engine = build_search(
            async_get_clientsession(self.hass), ToolSettings.from_data(data)
        )
        if engine is None:
            return {"base": "cannot_connect"}
        try:
            await engine.search("home assistant", "web", 1)
        except ServiceAuthError:
            return {"base": "invalid_auth"}
        except ServiceRateLimitedError:
            return {}  # the key was accepted; the engine is only busy
        except ServiceWrongApiError as err:
            # Something answered: say what was found, not "could not reach".
            return {
                "base": "not_search_api"
                if err.problem == "not_found"
                else "bad_search_json"
            }
        except ServiceError:
            return {"base": "cannot_connect"}
        return {}


def _select(options: tuple[str, ...], translation_key: str) -> SelectSelector:
    return SelectSelector(
        SelectSelectorConfig(
            options=list(options),
            translation_key=translation_key,
            mode=SelectSelectorMode.LIST,
        )
    )


def _drop(data: dict[str, Any], keys: tuple[str, ...]) -> None:
    for key in keys:
        data.pop(key, None)
