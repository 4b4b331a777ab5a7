"""Reddit's public JSON search (no key), for the search tool's 'reddit' action.

Used when the search backend is not SearXNG (SearXNG has its own reddit engine).
Reddit asks API clients for a descriptive User-Agent and blocks generic ones, so
ours names the integration. It may refuse busy or cloud addresses (HTTP 403 or
429); that is a passing refusal the model can explain, not a broken setting.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, override

from .base import SearchBackend, SearchKind, SearchResult, clean

REDDIT_URL = "https://www.reddit.com"
USER_AGENT = (
    "HomeAssistant-Toolbelt/0.1 (Home Assistant integration; "
    "+https://github.com/toolbelt-ha/toolbelt)"
)
MAX_SNIPPET = 300


class RedditSearch(SearchBackend):
    """GET {url}/search.json?q=...&limit=N; posts become numbered references."""

    name = "Reddit"
    default_url = REDDIT_URL
    refusal_is_auth = False
    auth_hint = (
        "It limits unauthenticated clients. Answer from what you know or try web "
        "search instead."
    )

    @override
    async def search(
        self, query: str, kind: SearchKind, max_results: int
    ) -> list[SearchResult]:
        data = await self._request(
            "GET",
            self._endpoint("search.json"),
            params={
                "q": query,
                "limit": str(max_results),
                "sort": "relevance",
                "raw_json": "1",
            },
            headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
        )
        listing = self._object(data).get("data")
        children = listing.get("children") if isinstance(listing, dict) else None
        results = []
        for child in children or []:
            post = child.get("data") if isinstance(child, dict) else None
            if isinstance(post, dict) and (result := self._result(post)):
                results.append(result)
        return results[:max_results]

    def _result(self, post: dict[str, Any]) -> SearchResult | None:
        permalink = str(post.get("permalink") or "")
        if not permalink.startswith("/"):
            return None
        subreddit = clean(post.get("subreddit_name_prefixed")) or (
            f"r/{clean(post.get('subreddit'))}" if post.get("subreddit") else ""
        )
        title = clean(post.get("title"))
        text = clean(post.get("selftext"))
        if len(text) > MAX_SNIPPET:
            text = text[: MAX_SNIPPET - 1] + "…"
        stats = f"{post.get('score', 0)} points, {post.get('num_comments', 0)} comments"
        snippet = f"{text} ({stats})" if text else f"({stats})"
        return SearchResult(
            title=f"{subreddit}: {title}" if subreddit else title,
            url=f"https://www.reddit.com{permalink}",
            snippet=snippet,
            date=_date(post.get("created_utc")),
        )


def _date(created: Any) -> str | None:
    try:
        return datetime.fromtimestamp(float(created), UTC).date().isoformat()
    except (TypeError, ValueError, OverflowError, OSError):
        return None
