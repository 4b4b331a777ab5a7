"""Each search backend against a local server speaking that engine's API shape."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
import time
from typing import Any

import aiohttp
from aiohttp import web
import pytest

from custom_components.toolbelt.tools.errors import (
    ServiceAuthError,
    ServiceRateLimitedError,
    ServiceUnavailableError,
)
from custom_components.toolbelt.tools.search.base import SearchBackend
from custom_components.toolbelt.tools.search.brave import BraveSearch
from custom_components.toolbelt.tools.search.duckduckgo import DuckDuckGoSearch
from custom_components.toolbelt.tools.search.searxng import SearxngSearch
from custom_components.toolbelt.tools.search.tavily import TavilySearch
from tests.local_server import StartServer

KEY = "good-key-123"

SEARXNG_JSON = {
    "query": "solar eclipse",
    "results": [
        {
            "url": "https://example.org/eclipse",
            "title": "Solar  eclipse\n2026",
            "content": "A total solar eclipse crosses Spain.",
            "publishedDate": "2026-08-12T00:00:00",
            "engine": "bing",
        },
        {"url": "https://example.net/b", "title": "Second", "content": None},
    ],
}
BRAVE_WEB_JSON = {
    "type": "search",
    "web": {
        "type": "search",
        "results": [
            {
                "title": "Solar eclipse 2026",
                "url": "https://example.org/eclipse",
                "description": "A total <strong>solar</strong> eclipse crosses Spain.",
                "page_age": "2026-08-01T10:00:00",
                "age": "August 1, 2026",
            },
            {"title": "Second", "url": "https://example.net/b", "description": "b"},
        ],
    },
}
BRAVE_NEWS_JSON = {
    "type": "news",
    "results": [
        {
            "title": "Eclipse watchers gather",
            "url": "https://news.example.org/1",
            "description": "Crowds in Spain.",
            "age": "2 hours ago",
        }
    ],
}
TAVILY_JSON = {
    "query": "solar eclipse",
    "answer": None,
    "results": [
        {
            "title": "Solar eclipse 2026",
            "url": "https://example.org/eclipse",
            "content": "A total solar eclipse crosses Spain.",
            "score": 0.93,
            "published_date": "Wed, 12 Aug 2026 09:00:00 GMT",
        },
        {"title": "Second", "url": "https://example.net/b", "content": "b"},
    ],
    "response_time": 0.8,
}
DDG_HTML = """<!DOCTYPE html><html><body><div id="links" class="results">
<div class="result results_links results_links_deep result--ad">
  <h2 class="result__title"><a class="result__a" href="https://ads.example/x">Buy now</a></h2>
  <a class="result__snippet">An ad.</a>
</div>
<div class="result results_links results_links_deep web-result ">
  <div class="links_main links_deep result__body">
    <h2 class="result__title">
      <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Feclipse&amp;rut=abc">Solar <b>eclipse</b> 2026</a>
    </h2>
    <div class="result__extras"><span class="result__timestamp">2026-08-12</span></div>
    <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">A total <b>solar</b> eclipse crosses Spain.</a>
  </div>
</div>
<div class="result results_links web-result">
  <h2 class="result__title"><a class="result__a" href="https://example.net/b">Second</a></h2>
  <a class="result__snippet">b</a>
</div>
</div></body></html>"""
DDG_ANOMALY = '<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div></body></html>'


@dataclass
class Engine:
    """How to serve and build one backend."""

    name: str
    method: str
    path: str
    make: Callable[[aiohttp.ClientSession, str, str, float], SearchBackend]
    success: Callable[[web.Request], web.StreamResponse]
    key_ok: Callable[[web.Request], bool]
    auth_failure: Callable[[], web.StreamResponse]


def _json(data: Any) -> Callable[[web.Request], web.StreamResponse]:
    return lambda request: web.json_response(data)


ENGINES = [
    Engine(
        name="searxng",
        method="GET",
        path="/search",
        make=lambda s, url, key, t: SearxngSearch(s, t, url),
        success=_json(SEARXNG_JSON),
        key_ok=lambda r: r.query.get("format") == "json",
        # SearXNG answers 403 when the JSON format is not enabled in settings.yml.
        auth_failure=lambda: web.Response(status=403, text="Forbidden"),
    ),
    Engine(
        name="brave",
        method="GET",
        path="/web/search",
        make=lambda s, url, key, t: BraveSearch(s, t, url, key),
        success=_json(BRAVE_WEB_JSON),
        key_ok=lambda r: r.headers.get("X-Subscription-Token") == KEY,
        auth_failure=lambda: web.json_response(
            {
                "type": "ErrorResponse",
                "error": {"code": "SUBSCRIPTION_TOKEN_INVALID", "status": 422},
            },
            status=422,
        ),
    ),
    Engine(
        name="tavily",
        method="POST",
        path="/search",
        make=lambda s, url, key, t: TavilySearch(s, t, url, key),
        success=_json(TAVILY_JSON),
        key_ok=lambda r: r.headers.get("Authorization") == f"Bearer {KEY}",
        auth_failure=lambda: web.json_response(
            {"detail": {"error": "Unauthorized: missing or invalid API key."}},
            status=401,
        ),
    ),
    Engine(
        name="duckduckgo",
        method="POST",
        path="/html/",
        make=lambda s, url, key, t: DuckDuckGoSearch(s, t, url=f"{url}/html/"),
        success=lambda r: web.Response(text=DDG_HTML, content_type="text/html"),
        key_ok=lambda r: True,
        # No key: the failure the user must know about is being blocked.
        auth_failure=lambda: web.Response(
            status=202, text=DDG_ANOMALY, content_type="text/html"
        ),
    ),
]
IDS = [engine.name for engine in ENGINES]


async def _serve(
    start: StartServer, engine: Engine, handler: Callable[..., Any]
) -> str:
    app = web.Application()
    app.router.add_route(engine.method, engine.path, handler)
    server = await start(app)
    return server.url


@pytest.mark.parametrize("engine", ENGINES, ids=IDS)
async def test_success_is_normalised(
    engine: Engine, local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """Title, url, snippet and date come back clean, in order, capped."""
    seen: list[web.Request] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request)
        if engine.method == "POST":
            await request.read()
        return engine.success(request)

    url = await _serve(local_server, engine, handler)
    backend = engine.make(session, url, KEY, 2.0)

    results = await backend.search("solar eclipse", "web", 5)

    assert engine.key_ok(seen[0])
    assert [r.url for r in results] == [
        "https://example.org/eclipse",
        "https://example.net/b",
    ]
    first = results[0]
    assert (
        first.title.startswith("Solar eclipse 2026")
        or first.title == "Solar eclipse 2026"
    )
    assert "solar eclipse crosses Spain" in first.snippet.replace(
        "<strong>", ""
    ).replace("</strong>", "")
    assert "\n" not in first.title
    assert first.date
    assert results[1].snippet in ("", "b")

    assert len(await backend.search("solar eclipse", "web", 1)) == 1


@pytest.mark.parametrize("engine", ENGINES, ids=IDS)
async def test_bad_key_or_block_is_readable(
    engine: Engine, local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """A refused key says what to fix; DuckDuckGo's bot check says to wait."""

    async def handler(request: web.Request) -> web.StreamResponse:
        return engine.auth_failure()

    url = await _serve(local_server, engine, handler)
    backend = engine.make(session, url, "wrong", 2.0)

    expected = (
        ServiceRateLimitedError if engine.name == "duckduckgo" else ServiceAuthError
    )
    with pytest.raises(expected) as caught:
        await backend.search("q", "web", 3)
    message = str(caught.value)
    assert backend.name in message
    if expected is ServiceAuthError:
        assert "settings" in message.lower() or "settings.yml" in message
        assert "retrying will not help" in message


@pytest.mark.parametrize("engine", ENGINES, ids=IDS)
async def test_429_is_readable(
    engine: Engine, local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """Rate limiting tells the model to answer without search or retry later."""

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.json_response(
            {"error": "rate limited"}, status=429, headers={"Retry-After": "30"}
        )

    url = await _serve(local_server, engine, handler)
    backend = engine.make(session, url, KEY, 2.0)

    with pytest.raises(ServiceRateLimitedError) as caught:
        await backend.search("q", "web", 3)
    assert "try again" in str(caught.value)


@pytest.mark.parametrize("engine", ENGINES, ids=IDS)
async def test_timeout_is_readable_and_on_time(
    engine: Engine, local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """A stalled engine fails within its timeout, saying so."""

    async def handler(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(5)
        return engine.success(request)

    url = await _serve(local_server, engine, handler)
    backend = engine.make(session, url, KEY, 0.3)

    started = time.monotonic()
    with pytest.raises(ServiceUnavailableError) as caught:
        await backend.search("q", "web", 3)
    assert time.monotonic() - started < 1.5
    assert "did not answer within 0.3 s" in str(caught.value)


async def test_brave_news_uses_news_endpoint(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """kind=news goes to /news/search, whose results sit at the top level."""
    app = web.Application()
    app.router.add_get("/news/search", _json(BRAVE_NEWS_JSON))
    server = await local_server(app)

    results = await BraveSearch(session, 2.0, server.url, KEY).search(
        "eclipse", "news", 5
    )

    assert [(r.title, r.date) for r in results] == [
        ("Eclipse watchers gather", "2 hours ago")
    ]


async def test_searxng_and_tavily_news_ask_for_news(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """News maps to SearXNG's news category and Tavily's news topic."""
    bodies: list[Any] = []

    async def tavily(request: web.Request) -> web.StreamResponse:
        bodies.append(await request.json())
        return web.json_response(TAVILY_JSON)

    app = web.Application()
    app.router.add_get("/search", _json(SEARXNG_JSON))
    app.router.add_post("/search", tavily)
    server = await local_server(app)

    await SearxngSearch(session, 2.0, server.url).search("x", "news", 3)
    await TavilySearch(session, 2.0, server.url, KEY).search("x", "news", 3)

    assert server.requests[0].query["categories"] == "news"
    assert bodies[0]["topic"] == "news"
    assert bodies[0]["max_results"] == 3


async def test_garbage_json_is_readable(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """An engine that answers HTML instead of JSON gives a readable error."""
    app = web.Application()
    app.router.add_get("/search", lambda r: web.Response(text="<html>oops</html>"))
    server = await local_server(app)

    with pytest.raises(ServiceUnavailableError, match="not JSON"):
        await SearxngSearch(session, 2.0, server.url).search("x", "web", 3)


async def test_unreachable_engine_is_readable(session: aiohttp.ClientSession) -> None:
    """Nothing listening: a readable connection error, not a stack trace."""
    with pytest.raises(ServiceUnavailableError, match="Could not reach SearXNG"):
        await SearxngSearch(session, 2.0, "http://127.0.0.1:9").search("x", "web", 3)
