"""Brave Search API: an independent index; needs a subscription token."""

from __future__ import annotations

from typing import Any, override

from ..errors import ServiceAuthError
from .base import SearchBackend, SearchKind, SearchResult, clean

BRAVE_URL = "https://api.search.brave.com/res/v1"


class BraveSearch(SearchBackend):
    """GET /web/search or /news/search with the X-Subscription-Token header."""

    name = "Brave Search"
    default_url = BRAVE_URL
    auth_hint = (
        "Check the Brave Search API key (api-dashboard.search.brave.com) in the "
        "Toolbelt tools settings."
    )

    @override
    async def search(
        self, query: str, kind: SearchKind, max_results: int
    ) -> list[SearchResult]:
        data = await self._request(
            "GET",
            self._endpoint(f"{'news' if kind == 'news' else 'web'}/search"),
            params={"q": query, "count": str(max_results)},
            headers={
                "Accept": "application/json",
                "X-Subscription-Token": self._api_key,
            },
        )
        data = self._object(data)
        items = data.get("results") if kind == "news" else data.get("web", {})
        if isinstance(items, dict):
            items = items.get("results")
        return [
            SearchResult(
                title=clean(item.get("title")),
                url=str(item["url"]),
                snippet=clean(item.get("description")),
                date=item.get("page_age") or item.get("age") or None,
            )
            for item in items or []
            if isinstance(item, dict) and item.get("url")
        ][:max_results]

    def _raise_for_status(self, status: int, headers: Any, body: str) -> None:
        """Brave answers an invalid token with 422 SUBSCRIPTION_TOKEN_INVALID."""
        if status == 422 and "TOKEN" in body.upper():
            raise ServiceAuthError(
                self.name,
                f"{self.name} says the subscription token is invalid. "
                f"{self.auth_hint} Tell the user; retrying will not help.",
                user_hint=f"The subscription token is invalid. {self.auth_hint}",
            )
        super()._raise_for_status(status, headers, body)
