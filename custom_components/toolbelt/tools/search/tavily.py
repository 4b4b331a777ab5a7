"""Tavily: a search API made for LLM agents; needs an API key (tvly-...)."""

from __future__ import annotations

from typing import Any, override

from ..errors import ServiceAuthError
from .base import SearchBackend, SearchKind, SearchResult, clean

TAVILY_URL = "https://api.tavily.com"


class TavilySearch(SearchBackend):
    """POST /search with a bearer key; topic 'news' for news."""

    name = "Tavily"
    default_url = TAVILY_URL
    auth_hint = (
        "Check the Tavily API key (app.tavily.com) in the Toolbelt tools settings."
    )

    @override
    async def search(
        self, query: str, kind: SearchKind, max_results: int
    ) -> list[SearchResult]:
        data = await self._request(
            "POST",
            self._endpoint("search"),
            json={
                "query": query,
                "topic": "news" if kind == "news" else "general",
                "max_results": max_results,
                "search_depth": "basic",
            },
            headers={"Authorization": f"Bearer {self._api_key}"},
        )
        return [
            SearchResult(
                title=clean(item.get("title")),
                url=str(item["url"]),
                snippet=clean(item.get("content")),
                date=item.get("published_date") or None,
            )
            for item in self._object(data).get("results", [])
            if isinstance(item, dict) and item.get("url")
        ][:max_results]

    def _raise_for_status(self, status: int, headers: Any, body: str) -> None:
        """Tavily uses 432/433 for an exhausted plan: the user must act, like a bad key."""
        if status in (432, 433):
            raise ServiceAuthError(
                self.name,
                f"{self.name} says the plan's usage limit is reached (HTTP {status}). "
                "The user must upgrade the plan or wait for it to reset.",
                user_hint=f"The plan's usage limit is reached (HTTP {status}); "
                "upgrade the Tavily plan or wait for it to reset.",
            )
        super()._raise_for_status(status, headers, body)
