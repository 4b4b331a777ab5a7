"""SearXNG: a self-hosted metasearch engine with a JSON API; no key, stays local."""

from __future__ import annotations

from typing import override

from .base import SearchBackend, SearchKind, SearchResult, clean

_SCOPES = {
    "web": {"categories": "general"},
    "news": {"categories": "news"},
    "reddit": {"engines": "reddit"},
}


class SearxngSearch(SearchBackend):
    """GET {url}/search?q=...&format=json.

    'news' maps to SearXNG's news category, 'reddit' to its reddit engine.
    """

    name = "SearXNG"
    auth_hint = (
        "SearXNG must allow the JSON format: add 'json' to search.formats in its "
        "settings.yml and restart it."
    )

    @override
    async def search(
        self, query: str, kind: SearchKind, max_results: int
    ) -> list[SearchResult]:
        data = await self._request(
            "GET",
            self._endpoint("search"),
            params={"q": query, "format": "json", **_SCOPES[kind]},
            headers={"Accept": "application/json"},
        )
        return [
            SearchResult(
                title=clean(item.get("title")) or clean(item.get("url")),
                url=str(item.get("url", "")),
                snippet=clean(item.get("content")),
                date=item.get("publishedDate") or None,
            )
            for item in self._object(data).get("results", [])
            if isinstance(item, dict) and item.get("url")
        ][:max_results]
