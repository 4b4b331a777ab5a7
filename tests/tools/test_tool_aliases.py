"""Other names for our tools reach the same tool and action, parsed or called by HA."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web
from homeassistant.core import HomeAssistant
import pytest

from custom_components.toolbelt.ha.intent_tools import HA_TOOL_ALIASES
from custom_components.toolbelt.toolcalls import Catalog, ToolSpec, parse
from custom_components.toolbelt.tools.api import OUR_CATALOG, async_get_turn_record
from custom_components.toolbelt.tools.const import CONF_SEARCH_BACKEND, CONF_SEARCH_URL
from custom_components.toolbelt.tools.definitions import (
    ALIASES as DECLARED,
    ALL_TOOLS,
    TOOLS_BY_NAME,
)
from tests.local_server import StartServer

from .test_api import call, llm_context, setup_api, tools_entry

__all__ = ["setup_api"]

# Every name each tool declares, and HA's tools of the same meaning.
ALIASES = [
    (name, alias.tool, alias.arguments.get("action"))
    for alias in (*(a for t in ALL_TOOLS for a in t.alias_groups), *HA_TOOL_ALIASES)
    for name in alias.names
]
# Written out, not read from the table: the names issue #15 found broken and
# a sample of the rest.
KNOWN = {
    "memorize": ("memory", "store"),
    "forget": ("memory", "delete"),
    "remember": ("memory", "store"),
    "recall": ("memory", "search"),
    "Store-Memory": ("memory", "store"),
    "forget_history": ("history", "forget"),
    "get_user_profile": ("profile", "get"),
    "bot_trait": ("self", "add"),
    "switch_model": ("model", "switch"),
    "reddit_search": ("search", "reddit"),
    "news": ("search", "news"),
    "google": ("search", "web"),
    "fetch_url": ("web_fetch", None),
    "now": ("time", None),
}
# Next to Assist, HA namespaces our tools.
MERGED = Catalog(
    [ToolSpec("assist__HassTurnOn")]
    + [ToolSpec(f"toolbelt-tools__{t.name}", "", t.parameters) for t in OUR_CATALOG],
    DECLARED,
)


def test_every_alias_targets_a_real_tool_and_action() -> None:
    """A table entry with a typo would send the model to nothing."""
    for _name, tool, action in ALIASES:
        enum = TOOLS_BY_NAME[tool].schema["properties"].get("action", {}).get("enum")
        assert action in (enum or [None]), (tool, action)


@pytest.mark.parametrize("catalog", [OUR_CATALOG, MERGED], ids=["alone", "merged"])
def test_the_parser_reads_every_alias_as_tool_and_action(catalog: Catalog) -> None:
    """A text call by another name becomes our tool with the name's action."""
    cases = [*ALIASES, *((n, *meaning) for n, meaning in KNOWN.items())]
    for name, tool, action in cases:
        reply = f'<tool_call>{{"name": "{name}", "arguments": {{"x": 1}}}}</tool_call>'
        result = parse(reply, catalog, "hermes")
        assert not result.rejected, (name, result.rejected)
        (found,) = result.calls
        assert found.name.rsplit("__", 1)[-1] == tool, name
        assert found.arguments.get("action") == action, name
        assert result.content == ""


def test_an_alias_prefers_an_exposed_tool_of_the_same_meaning() -> None:
    """A memory server's own search_memory is used as is, without an action."""
    catalog = Catalog([ToolSpec("search_memory"), ToolSpec("memory")], DECLARED)
    (found,) = parse(
        '<tool_call>{"name": "recall", "arguments": {"query": "tea"}}</tool_call>',
        catalog,
        "hermes",
    ).calls
    assert (found.name, found.arguments) == ("search_memory", {"query": "tea"})


async def test_every_alias_runs_its_tool_and_action_through_the_api(
    hass: HomeAssistant, setup_api: Callable[..., Any], local_server: StartServer
) -> None:
    """Any HA agent may call an old name: the turn's trace shows what ran."""
    searx = web.Application()
    searx.router.add_get("/search", lambda _: web.json_response({"results": []}))
    server = await local_server(searx)
    await setup_api(
        tools_entry(**{CONF_SEARCH_BACKEND: "searxng", CONF_SEARCH_URL: server.url})
    )
    for name, tool, action in [*ALIASES, *((n, *m) for n, m in KNOWN.items())]:
        context = llm_context()
        await call(hass, name, {"action": "wrong", "x": 1}, context)
        record = async_get_turn_record(hass, context.context.id)
        assert record is not None
        (ran,) = record.calls
        assert (ran.tool, ran.action) == (tool, action or "wrong"), name


async def test_old_memory_names_store_find_and_forget(
    hass: HomeAssistant,
    setup_api: Callable[..., Any],
    local_server: StartServer,
    hass_admin_user: Any,
) -> None:
    """memorize stores, recall finds, forget deletes; search names pick the kind."""
    searx = web.Application()

    async def search(request: web.Request) -> web.Response:
        scope = request.query.get("categories") or request.query.get("engines")
        hit = {"url": f"https://{scope}.example/", "title": scope, "content": "x"}
        return web.json_response({"results": [hit]})

    searx.router.add_get("/search", search)
    server = await local_server(searx)
    await setup_api(
        tools_entry(**{CONF_SEARCH_BACKEND: "searxng", CONF_SEARCH_URL: server.url})
    )

    async def text(name: str, **args: Any) -> str:
        data = await call(hass, name, args, llm_context(hass_admin_user.id))
        return data.get("result") or data["error"]

    assert (await text("memorize", content="The bins go out on Tuesday.")).startswith(
        "Stored memory 1 for this user"
    )
    assert "[id 1] The bins go out on Tuesday." in await text("recall", query="bins")
    assert (await text("edit_memory", memory_id=1, content="Bins: Wednesday.")) == (
        "Updated memory 1: Bins: Wednesday."
    )
    assert (await text("forget", memory_id=1)).startswith("Deleted memory 1")
    assert await text("search_memories", query="bins") == (
        "No memories found matching 'bins'."
    )
    assert "general.example" in await text("google", query="tea")
    assert "news.example" in await text("news_search", query="tea")
    assert "reddit.example" in await text("reddit_search", query="tea")
