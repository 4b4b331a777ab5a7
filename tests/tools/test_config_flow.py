"""The 'tools' subentry flow: pick backends, test them, save; reconfigure."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from homeassistant.config_entries import SOURCE_RECONFIGURE, SOURCE_USER
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import translation
from homeassistant.setup import async_setup_component
import pytest
import pytest_asyncio
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.toolbelt.tools.const import (
    CONF_FETCH_ALLOW_LIST,
    CONF_FETCH_MAX_CHARS,
    CONF_HISTORY_DAYS,
    CONF_MCP_TOKEN,
    CONF_MCP_TOOL_STORE,
    CONF_MCP_URL,
    CONF_MEMORY_BACKEND,
    CONF_MODEL_SWITCHING,
    CONF_PROFILE_IN_PROMPT,
    CONF_SEARCH_API_KEY,
    CONF_SEARCH_BACKEND,
    CONF_SEARCH_URL,
    CONF_SHARED_MEMORY_EDITORS,
    DOMAIN,
    SUBENTRY_TYPE_TOOLS,
)
from custom_components.toolbelt.tools.search.duckduckgo import DuckDuckGoSearch
from tests.local_server import StartServer
from tests.tools.test_search_backends import DDG_ANOMALY, DDG_HTML

from .test_memory_mcp import TOKEN, MemoryMcpServer


@pytest_asyncio.fixture(autouse=True)
async def ha_core(hass: HomeAssistant, enable_custom_integrations: None) -> None:
    """Toolbelt's flows need HA core set up (conversation depends on it)."""
    assert await async_setup_component(hass, "homeassistant", {})


def _entry(hass: HomeAssistant) -> MockConfigEntry:
    entry = MockConfigEntry(domain=DOMAIN, data={"base_url": "http://127.0.0.1:1/v1"})
    entry.add_to_hass(hass)
    return entry


async def _start(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    return await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_TYPE_TOOLS), context={"source": SOURCE_USER}
    )


async def _configure(hass: HomeAssistant, flow_id: str, data: dict[str, Any]) -> Any:
    return await hass.config_entries.subentries.async_configure(flow_id, data)


def _backends(**overrides: Any) -> dict[str, Any]:
    data = {
        CONF_MEMORY_BACKEND: "sqlite",
        CONF_SEARCH_BACKEND: "searxng",
        CONF_FETCH_MAX_CHARS: 6000,
        CONF_FETCH_ALLOW_LIST: "",
    }
    data.update(overrides)
    return data


async def test_searxng_is_tested_then_saved(
    hass: HomeAssistant, local_server: StartServer
) -> None:
    """A SearXNG without JSON enabled is reported; once it answers, it is saved."""
    json_enabled = {"on": False}

    async def search(request: web.Request) -> web.Response:
        if not json_enabled["on"]:
            return web.Response(status=403, text="Forbidden")
        return web.json_response({"results": []})

    app = web.Application()
    app.router.add_get("/search", search)
    server = await local_server(app)
    entry = _entry(hass)

    result = await _start(hass, entry)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "backends"
    result = await _configure(
        hass,
        result["flow_id"],
        _backends(**{CONF_FETCH_ALLOW_LIST: "192.168.1.0/24\nwiki.lan"}),
    )
    assert result["step_id"] == "search_searxng"
    result = await _configure(hass, result["flow_id"], {CONF_SEARCH_URL: server.url})
    assert result["errors"] == {"base": "invalid_auth"}

    json_enabled["on"] = True
    result = await _configure(hass, result["flow_id"], {CONF_SEARCH_URL: server.url})

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Memory: SQLite, search: SearXNG"
    subentry = next(iter(entry.subentries.values()))
    assert subentry.subentry_type == SUBENTRY_TYPE_TOOLS
    assert subentry.data == {
        CONF_MEMORY_BACKEND: "sqlite",
        CONF_SEARCH_BACKEND: "searxng",
        CONF_FETCH_MAX_CHARS: 6000,
        CONF_FETCH_ALLOW_LIST: ["wiki.lan", "192.168.1.0/24"],
        CONF_SEARCH_URL: server.url,
        CONF_SHARED_MEMORY_EDITORS: "admins",  # the default: only administrators
        # The defaults: a month of history, the profile in the prompt, and no
        # model switching.
        CONF_HISTORY_DAYS: 30,
        CONF_PROFILE_IN_PROMPT: True,
        CONF_MODEL_SWITCHING: "off",
    }


async def test_bad_allow_list_entry_is_shown(hass: HomeAssistant) -> None:
    """A typo in the allow-list stays on the form with an error."""
    result = await _start(hass, _entry(hass))
    result = await _configure(
        hass, result["flow_id"], _backends(**{CONF_FETCH_ALLOW_LIST: "10.0.0.0/33"})
    )
    assert result["step_id"] == "backends"
    assert result["errors"] == {CONF_FETCH_ALLOW_LIST: "invalid_allow_list"}


async def _duckduckgo(
    local_server: StartServer, monkeypatch: pytest.MonkeyPatch, page: web.Response
) -> list[str]:
    """DuckDuckGo's HTML endpoint on 127.0.0.1; returns the queries it got."""
    queries: list[str] = []

    async def search(request: web.Request) -> web.Response:
        queries.append((await request.post())["q"])
        return page

    app = web.Application()
    app.router.add_post("/html/", search)
    server = await local_server(app)
    monkeypatch.setattr(DuckDuckGoSearch, "default_url", f"{server.url}/html/")
    return queries


async def test_mcp_memory_and_duckduckgo(
    hass: HomeAssistant, local_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MCP memory is connected and its tool names checked; DuckDuckGo is tested
    with one search, as every search engine is, before saving."""
    server = await local_server(MemoryMcpServer().app())
    queries = await _duckduckgo(
        local_server, monkeypatch, web.Response(text=DDG_HTML, content_type="text/html")
    )
    entry = _entry(hass)

    result = await _start(hass, entry)
    result = await _configure(
        hass,
        result["flow_id"],
        _backends(**{CONF_MEMORY_BACKEND: "mcp", CONF_SEARCH_BACKEND: "duckduckgo"}),
    )
    assert result["step_id"] == "mcp"
    result = await _configure(
        hass,
        result["flow_id"],
        {CONF_MCP_URL: f"{server.url}/mcp", CONF_MCP_TOKEN: "nope"},
    )
    assert result["errors"] == {"base": "invalid_auth"}
    result = await _configure(
        hass,
        result["flow_id"],
        {
            CONF_MCP_URL: f"{server.url}/mcp",
            CONF_MCP_TOKEN: TOKEN,
            CONF_MCP_TOOL_STORE: "remember",
        },
    )
    assert result["errors"] == {CONF_MCP_TOOL_STORE: "mcp_tool_missing"}
    result = await _configure(
        hass,
        result["flow_id"],
        {
            CONF_MCP_URL: f"{server.url}/mcp",
            CONF_MCP_TOKEN: TOKEN,
            CONF_MCP_TOOL_STORE: "store_memory",
        },
    )

    assert result["type"] is FlowResultType.CREATE_ENTRY
    data = next(iter(entry.subentries.values())).data
    assert data[CONF_MEMORY_BACKEND] == "mcp"
    assert data[CONF_MCP_TOKEN] == TOKEN
    assert data[CONF_SEARCH_BACKEND] == "duckduckgo"
    assert CONF_SEARCH_URL not in data
    assert queries == ["home assistant"]


@pytest.mark.parametrize(
    ("page", "error"),
    [
        (None, "cannot_connect"),
        (web.Response(status=500, text="oops"), "cannot_connect"),
        (web.Response(status=202, text=DDG_ANOMALY, content_type="text/html"), None),
    ],
    ids=["unreachable", "server_error", "rate_limited"],
)
async def test_duckduckgo_is_tested_before_saving(
    hass: HomeAssistant,
    local_server: StartServer,
    monkeypatch: pytest.MonkeyPatch,
    closed_port_url: str,
    page: web.Response | None,
    error: str | None,
) -> None:
    """An HA that cannot reach DuckDuckGo is told on the form; a bot check
    (DuckDuckGo asking to wait) is no reason to refuse it."""
    if page is None:
        monkeypatch.setattr(DuckDuckGoSearch, "default_url", closed_port_url)
    else:
        await _duckduckgo(local_server, monkeypatch, page)
    entry = _entry(hass)
    result = await _start(hass, entry)
    result = await _configure(
        hass, result["flow_id"], _backends(**{CONF_SEARCH_BACKEND: "duckduckgo"})
    )
    if error is None:
        assert result["type"] is FlowResultType.CREATE_ENTRY
        return
    assert result["step_id"] == "backends"
    assert result["errors"] == {CONF_SEARCH_BACKEND: error}
    assert not entry.subentries


async def test_only_one_tools_subentry(
    hass: HomeAssistant, local_server: StartServer
) -> None:
    """A second 'add' aborts; reconfigure switches backends and drops stale keys."""
    app = web.Application()
    app.router.add_get(
        "/web/search", lambda r: web.json_response({"web": {"results": []}})
    )
    server = await local_server(app)
    entry = _entry(hass)
    result = await _start(hass, entry)
    await _configure(
        hass, result["flow_id"], _backends(**{CONF_SEARCH_BACKEND: "none"})
    )
    subentry = next(iter(entry.subentries.values()))

    again = await _start(hass, entry)
    assert again["type"] is FlowResultType.ABORT
    assert again["reason"] == "already_configured"

    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_TYPE_TOOLS),
        context={"source": SOURCE_RECONFIGURE, "subentry_id": subentry.subentry_id},
    )
    assert result["step_id"] == "backends"
    result = await _configure(
        hass, result["flow_id"], _backends(**{CONF_SEARCH_BACKEND: "brave"})
    )
    assert result["step_id"] == "search_brave"
    # A base URL is optional (a compatible proxy); here it is the local stand-in.
    result = await _configure(
        hass,
        result["flow_id"],
        {CONF_SEARCH_API_KEY: "BSA-key", CONF_SEARCH_URL: server.url},
    )

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    data = entry.subentries[subentry.subentry_id].data
    assert data[CONF_SEARCH_BACKEND] == "brave"
    assert data[CONF_SEARCH_API_KEY] == "BSA-key"


async def test_nobody_may_change_shared_memories_is_offered_and_saved(
    hass: HomeAssistant,
) -> None:
    """Every choice has a label; 'nobody' is saved and shown again on reconfigure."""
    entry = _entry(hass)
    result = await _start(hass, entry)
    key = next(
        k for k in result["data_schema"].schema if k == CONF_SHARED_MEMORY_EDITORS
    )
    options = result["data_schema"].schema[key].config["options"]
    assert options == ["admins", "users", "anyone", "nobody"]
    labels = await translation.async_get_translations(hass, "en", "selector", [DOMAIN])
    prefix = f"component.{DOMAIN}.selector.shared_memory_editors.options"
    assert labels[f"{prefix}.nobody"] == (
        "Nobody: shared memories can only be added, persona notes stay as they are"
    )
    assert all(f"{prefix}.{option}" in labels for option in options)

    result = await _configure(
        hass,
        result["flow_id"],
        _backends(
            **{CONF_SEARCH_BACKEND: "none", CONF_SHARED_MEMORY_EDITORS: "nobody"}
        ),
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_SHARED_MEMORY_EDITORS] == "nobody"

    subentry = next(iter(entry.subentries.values()))
    again = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_TYPE_TOOLS),
        context={"source": SOURCE_RECONFIGURE, "subentry_id": subentry.subentry_id},
    )
    key = next(
        k for k in again["data_schema"].schema if k == CONF_SHARED_MEMORY_EDITORS
    )
    assert key.default() == "nobody"


async def test_history_profile_and_model_switching_are_saved_and_shown_again(
    hass: HomeAssistant,
) -> None:
    """The three new settings have labels, are saved, and come back on reconfigure."""
    entry = _entry(hass)
    result = await _start(hass, entry)
    schema = {str(k): v for k, v in result["data_schema"].schema.items()}
    assert schema[CONF_MODEL_SWITCHING].config["options"] == ["off", "admins", "anyone"]
    labels = await translation.async_get_translations(hass, "en", "selector", [DOMAIN])
    prefix = f"component.{DOMAIN}.selector.model_switching.options"
    assert labels[f"{prefix}.admins"] == "Administrators only"
    fields = await translation.async_get_translations(
        hass, "en", "config_subentries", [DOMAIN]
    )
    step = f"component.{DOMAIN}.config_subentries.tools.step.backends"
    for key in (CONF_HISTORY_DAYS, CONF_PROFILE_IN_PROMPT, CONF_MODEL_SWITCHING):
        assert f"{step}.data.{key}" in fields
        assert f"{step}.data_description.{key}" in fields

    result = await _configure(
        hass,
        result["flow_id"],
        _backends(
            **{
                CONF_SEARCH_BACKEND: "none",
                CONF_HISTORY_DAYS: 7.0,  # the UI's number box sends a float
                CONF_PROFILE_IN_PROMPT: False,
                CONF_MODEL_SWITCHING: "admins",
            }
        ),
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_HISTORY_DAYS] == 7
    assert result["data"][CONF_PROFILE_IN_PROMPT] is False
    assert result["data"][CONF_MODEL_SWITCHING] == "admins"

    subentry = next(iter(entry.subentries.values()))
    again = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_TYPE_TOOLS),
        context={"source": SOURCE_RECONFIGURE, "subentry_id": subentry.subentry_id},
    )
    defaults = {str(k): k.default() for k in again["data_schema"].schema}
    assert defaults[CONF_HISTORY_DAYS] == 7
    assert defaults[CONF_PROFILE_IN_PROMPT] is False
    assert defaults[CONF_MODEL_SWITCHING] == "admins"


async def test_defaults_need_no_search_url(hass: HomeAssistant) -> None:
    """Submit on the defaults: SQLite, no web search, admins change shared memories."""
    result = await _start(hass, _entry(hass))
    result = await _configure(hass, result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_MEMORY_BACKEND] == "sqlite"
    assert result["data"][CONF_SEARCH_BACKEND] == "none"
    assert result["data"][CONF_SHARED_MEMORY_EDITORS] == "admins"


@pytest.mark.parametrize(
    ("route", "answer", "error"),
    [
        ("/elsewhere", web.json_response({"results": []}), "not_search_api"),
        ("/search", web.Response(text="<html>a web page</html>"), "bad_search_json"),
        ("/search", web.json_response(["not", "searxng"]), "bad_search_json"),
    ],
    ids=["404", "html", "other-json"],
)
async def test_a_reachable_url_that_is_not_searxng_says_what_was_found(
    hass: HomeAssistant,
    local_server: StartServer,
    route: str,
    answer: web.Response,
    error: str,
) -> None:
    """Not "could not reach": the form says the address is not SearXNG's JSON API."""
    app = web.Application()
    app.router.add_get(route, lambda request: answer)
    server = await local_server(app)
    result = await _start(hass, _entry(hass))
    result = await _configure(hass, result["flow_id"], _backends())
    result = await _configure(hass, result["flow_id"], {CONF_SEARCH_URL: server.url})
    assert result["step_id"] == "search_searxng"
    assert result["errors"] == {"base": error}
