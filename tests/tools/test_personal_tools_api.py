"""history, profile and reddit search through HA's LLM API, as another agent calls them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import issue_registry as ir, llm

from custom_components.toolbelt.tools.api import DATA_TOOLS
from custom_components.toolbelt.tools.const import (
    CONF_REDDIT_URL,
    CONF_SEARCH_BACKEND,
    CONF_SEARCH_URL,
)
from tests.local_server import StartServer

from .test_api import call, setup_api, tools_entry

__all__ = ["setup_api"]


def openai_agent(user_id: str | None = None) -> llm.LLMContext:
    """The context HA's OpenAI agent passes: another platform than ours."""
    return llm.LLMContext(
        platform="openai_conversation",
        context=Context(user_id=user_id),
        language="en",
        assistant="conversation",
        device_id=None,
    )


def text(data: dict[str, Any]) -> str:
    """The result or the error text."""
    return data.get("result") or data["error"]


async def test_history_is_private_to_each_user_whatever_id_is_guessed(
    hass: HomeAssistant,
    setup_api: Callable[..., Any],
    hass_admin_user: Any,
    hass_read_only_user: Any,
) -> None:
    """Bob neither finds nor forgets Alice's turns; forget really removes hers."""
    await setup_api(tools_entry())
    alice, bob = hass_admin_user.id, hass_read_only_user.id
    history = hass.data[DATA_TOOLS].stores().history
    turn = await history.record(
        alice, "When is the plumber coming?", "On Tuesday.", [], retention_days=30
    )
    await history.record(None, "plumber?", "Tuesday.", [], retention_days=30)

    found = text(
        await call(
            hass,
            "history",
            {"action": "search", "query": "plumber"},
            openai_agent(alice),
        )
    )
    assert f"[turn {turn}]" in found
    assert "On Tuesday." in found
    for args in (
        {"action": "search", "query": "plumber"},
        {"action": "recent"},
    ):
        seen = text(await call(hass, "history", args, openai_agent(bob)))
        assert "Tuesday" not in seen
        assert seen.startswith("No past conversation")
    guessed = text(
        await call(
            hass, "history", {"action": "forget", "turn_id": turn}, openai_agent(bob)
        )
    )
    assert (
        guessed
        == f"No past conversation of this user matches id {turn}; nothing deleted."
    )
    forgot = text(
        await call(hass, "forget_history", {"turn_id": str(turn)}, openai_agent(alice))
    )
    assert forgot == f"Deleted 1 past turn(s) for good (ids {turn})."
    again = text(
        await call(
            hass,
            "history",
            {"action": "search", "query": "plumber"},
            openai_agent(alice),
        )
    )
    assert again == "No past conversation matches 'plumber'."
    # The satellite's shared turn is still there, for conversations without a user.
    shared = text(await call(hass, "get_recent_history", {}, openai_agent()))
    assert "user: plumber?" in shared


async def test_profile_is_private_and_needs_a_user(
    hass: HomeAssistant,
    setup_api: Callable[..., Any],
    hass_admin_user: Any,
    hass_read_only_user: Any,
) -> None:
    """Each user has their own profile; a satellite is told why it has none."""
    await setup_api(tools_entry())
    alice, bob = hass_admin_user.id, hass_read_only_user.id
    stored = text(
        await call(
            hass,
            "set_user_attribute",
            {"key": "diet", "value": "vegetarian"},
            openai_agent(alice),
        )
    )
    assert stored == "Stored in the user's profile: diet = vegetarian."
    # On disk before the model is told: a fresh read of the file has it.
    assert await hass.data[DATA_TOOLS].stores().profiles.get(alice) == {
        "diet": "vegetarian"
    }
    assert (
        text(await call(hass, "profile", {"action": "get"}, openai_agent(bob)))
        == "The user's profile is empty."
    )
    refused = text(
        await call(
            hass, "profile", {"action": "delete", "key": "diet"}, openai_agent(bob)
        )
    )
    assert refused.startswith("ERROR: ToolError: The profile has no attribute 'diet'")
    assert (
        text(await call(hass, "get_user_profile", {}, openai_agent(alice)))
        == "The user's profile:\n- diet: vegetarian"
    )
    satellite = text(await call(hass, "profile", {"action": "get"}, openai_agent()))
    assert satellite.startswith(
        "ERROR: ToolError: Profiles belong to a Home Assistant user"
    )


async def test_bad_arguments_come_back_as_errors_the_model_can_fix(
    hass: HomeAssistant, setup_api: Callable[..., Any], hass_admin_user: Any
) -> None:
    """Every validation failure is an ERROR text naming what is needed."""
    await setup_api(tools_entry())
    user = openai_agent(hass_admin_user.id)
    cases = [
        ("history", {"action": "erase"}, "history takes: action: search|recent|forget"),
        ("history", {"action": "search"}, "search needs 'query'"),
        ("history", {"action": "forget"}, "forget needs 'turn_id'"),
        ("history", {"action": "forget", "turn_id": "last"}, "turn_id"),
        ("profile", {"action": "set", "value": "x"}, "set needs 'key'"),
        ("profile", {"action": "set", "key": "diet"}, "set needs 'value'"),
        ("profile", {"action": "set", "key": "?!", "value": "x"}, "short attribute"),
        ("model", {"action": "upgrade"}, "model takes: action: list|current|switch"),
        ("search", {"query": "x", "action": "reddit"}, "Web search is not set up"),
    ]
    for name, args, expected in cases:
        data = await call(hass, name, args, user)
        assert "error" in data, (name, args, data)
        assert data["error"].startswith("ERROR: "), data
        assert expected in data["error"], (expected, data["error"])


REDDIT_LISTING = {
    "kind": "Listing",
    "data": {
        "children": [
            {
                "kind": "t3",
                "data": {
                    "title": "Best  heat pump for a cold climate?",
                    "permalink": "/r/heatpumps/comments/abc/best_heat_pump/",
                    "subreddit_name_prefixed": "r/heatpumps",
                    "selftext": "We are in Quebec and looking at Mitsubishi.",
                    "score": 42,
                    "num_comments": 17,
                    "created_utc": 1767225600,
                },
            },
            {"kind": "t3", "data": {"title": "no permalink"}},
            {
                "kind": "t3",
                "data": {
                    "title": "Heat pump in Norway, 3 winters later",
                    "permalink": "/r/Norway/comments/def/heat_pump/",
                    "subreddit": "Norway",
                    "score": 7,
                    "num_comments": 3,
                },
            },
        ]
    },
}


async def test_reddit_search_without_searxng_uses_reddits_json(
    hass: HomeAssistant, setup_api: Callable[..., Any], local_server: StartServer
) -> None:
    """Numbered references from Reddit's search.json, asked with our User-Agent."""

    async def search(request: web.Request) -> web.Response:
        return web.json_response(REDDIT_LISTING)

    app = web.Application()
    app.router.add_get("/search.json", search)
    server = await local_server(app)
    await setup_api(
        tools_entry(**{CONF_SEARCH_BACKEND: "duckduckgo", CONF_REDDIT_URL: server.url})
    )

    data = await call(
        hass,
        "reddit_search",
        {"query": "heat pump cold climate", "max_results": 3},
        openai_agent(),
    )

    assert data["result"] == (
        "Reddit results for 'heat pump cold climate':\n"
        '<outside-data source="search">\n'
        "[1] r/heatpumps: Best heat pump for a cold climate? (2026-01-01)\n"
        "    https://www.reddit.com/r/heatpumps/comments/abc/best_heat_pump/\n"
        "    We are in Quebec and looking at Mitsubishi. (42 points, 17 comments)\n"
        "[2] r/Norway: Heat pump in Norway, 3 winters later\n"
        "    https://www.reddit.com/r/Norway/comments/def/heat_pump/\n"
        "    (7 points, 3 comments)\n"
        "</outside-data>\n"
        "Cite sources as [n] in your answer."
    )
    (request,) = server.requests
    assert request.query["q"] == "heat pump cold climate"
    assert request.query["limit"] == "3"
    assert "Toolbelt" in request.headers["User-Agent"]


async def test_reddit_refusal_is_readable_and_raises_no_repair(
    hass: HomeAssistant, setup_api: Callable[..., Any], local_server: StartServer
) -> None:
    """Reddit's 403 for unauthenticated clients is a passing refusal, not a bad key."""

    async def blocked(request: web.Request) -> web.Response:
        return web.Response(status=403, text="Blocked")

    app = web.Application()
    app.router.add_get("/search.json", blocked)
    server = await local_server(app)
    await setup_api(
        tools_entry(**{CONF_SEARCH_BACKEND: "duckduckgo", CONF_REDDIT_URL: server.url})
    )
    data = await call(
        hass, "search", {"query": "x", "action": "reddit"}, openai_agent()
    )
    assert data["error"].startswith(
        "ERROR: ServiceRateLimitedError: Reddit refused the request (HTTP 403)"
    )
    assert not ir.async_get(hass).issues


async def test_reddit_search_through_searxng_uses_its_reddit_engine(
    hass: HomeAssistant, setup_api: Callable[..., Any], local_server: StartServer
) -> None:
    """With SearXNG as the backend, the reddit action asks for engines=reddit."""

    async def search(request: web.Request) -> web.Response:
        return web.json_response(
            {
                "results": [
                    {
                        "title": "Heat pumps in Canada",
                        "url": "https://www.reddit.com/r/canada/comments/x/",
                        "content": "Works down to -25 C.",
                    }
                ]
            }
        )

    app = web.Application()
    app.router.add_get("/search", search)
    server = await local_server(app)
    await setup_api(
        tools_entry(**{CONF_SEARCH_BACKEND: "searxng", CONF_SEARCH_URL: server.url})
    )

    data = await call(
        hass, "search", {"query": "heat pump", "action": "reddit"}, openai_agent()
    )

    assert "[1] Heat pumps in Canada\n" in data["result"]
    assert data["result"].startswith("Reddit results for 'heat pump':")
    (request,) = server.requests
    assert request.query["engines"] == "reddit"
    assert "categories" not in request.query
