"""DuckDuckGo without a key: its plain HTML results page, parsed with lxml.

There is no official web-results API; the HTML endpoint is what keyless clients use.
It can rate-limit (a 202 'anomaly' page) and its markup can change, so errors say so.
"""

from __future__ import annotations

from typing import Any, override
from urllib.parse import parse_qs, urlparse

import lxml.html

from ..errors import ServiceRateLimitedError
from .base import SearchBackend, SearchKind, SearchResult, clean

DDG_URL = "https://html.duckduckgo.com/html/"


def _has_class(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


_RESULTS = f".//div[{_has_class('result')} and not({_has_class('result--ad')})]"
_TITLE = f".//a[{_has_class('result__a')}]"
_SNIPPET = f".//*[{_has_class('result__snippet')}]"
_DATE = f".//*[{_has_class('result__timestamp')}]"


class DuckDuckGoSearch(SearchBackend):
    """POST q=... to the HTML endpoint; 'news' narrows to the past week (df=w)."""

    name = "DuckDuckGo"
    default_url = DDG_URL

    @override
    async def search(
        self, query: str, kind: SearchKind, max_results: int
    ) -> list[SearchResult]:
        form = {"q": query, "kl": "wt-wt"}
        if kind == "news":
            form["df"] = "w"
        html = await self._request(
            "POST",
            self._url,
            data=form,
            expect_json=False,
            headers={
                "User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101"
                " Firefox/128.0",
                "Referer": "https://html.duckduckgo.com/",
            },
        )
        return parse_results(html, max_results)

    def _raise_for_status(self, status: int, headers: Any, body: str) -> None:
        """A 202 'anomaly' page, 403 or 429 is DuckDuckGo blocking us for a while."""
        if status in (202, 403, 429) or "anomaly-modal" in body:
            raise ServiceRateLimitedError(
                self.name,
                f"{self.name} is rate-limiting this address (bot check). Answer from "
                "what you know or try again in a few minutes.",
            )
        super()._raise_for_status(status, headers, body)


def parse_results(html: str, max_results: int) -> list[SearchResult]:
    """Pull title, real URL, snippet and date out of a DuckDuckGo HTML page."""
    if not html.strip():
        return []
    tree = lxml.html.fromstring(html)
    results: list[SearchResult] = []
    for node in tree.xpath(_RESULTS):
        links = node.xpath(_TITLE)
        if not links:
            continue
        url = _real_url(links[0].get("href", ""))
        if not url:
            continue
        snippet = node.xpath(_SNIPPET)
        date = node.xpath(_DATE)
        results.append(
            SearchResult(
                title=clean(links[0].text_content()),
                url=url,
                snippet=clean(snippet[0].text_content()) if snippet else "",
                date=clean(date[0].text_content()) or None if date else None,
            )
        )
        if len(results) >= max_results:
            break
    return results


def _real_url(href: str) -> str:
    """Undo DuckDuckGo's click-tracking redirect (//duckduckgo.com/l/?uddg=...)."""
    parsed = urlparse(href)
    if parsed.path.startswith("/l/"):
        target = parse_qs(parsed.query).get("uddg")
        return target[0] if target else ""
    if parsed.scheme in ("http", "https"):
        return href
    return ""
