"""What every search backend returns, and the HTTP error mapping they share.

Backends are HA-free: they take an aiohttp session and raise our readable errors; the
search tool turns an auth error into an HA repair issue.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
import asyncio
from dataclasses import dataclass
import json
from typing import Any, Literal

import aiohttp

from ..errors import (
    ServiceAuthError,
    ServiceRateLimitedError,
    ServiceUnavailableError,
    ServiceWrongApiError,
)

SearchKind = Literal["web", "news", "reddit"]


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One hit, normalised across engines."""

    title: str
    url: str
    snippet: str
    date: str | None = None


class SearchBackend(ABC):
    """A web search engine; one subclass per file."""

    name: str
    """Human name used in errors and traces, e.g. 'Brave Search'."""

    auth_hint: str = "Check the search settings of the Toolbelt tools."
    """What the user should fix when the backend refuses us."""

    def __init__(self, session: aiohttp.ClientSession, timeout: float) -> None:
        self._session = session
        self.timeout = timeout

    @abstractmethod
    async def search(
        self, query: str, kind: SearchKind, max_results: int
    ) -> list[SearchResult]:
        """Return at most max_results hits, best first."""

    async def _request(
        self, method: str, url: str, *, expect_json: bool = True, **kwargs: Any
    ) -> Any:
        """Send one request under the timeout; map failures to readable errors."""
        try:
            async with (
                asyncio.timeout(self.timeout),
                self._session.request(method, url, **kwargs) as resp,
            ):
                text = await resp.text(errors="replace")
                self._raise_for_status(resp.status, resp.headers, text)
        except TimeoutError as err:
            raise ServiceUnavailableError(
                self.name, f"{self.name} did not answer within {self.timeout:g} s."
            ) from err
        except aiohttp.ClientError as err:
            raise ServiceUnavailableError(
                self.name, f"Could not reach {self.name}: {type(err).__name__}."
            ) from err
        if not expect_json:
            return text
        try:
            return json.loads(text)
        except ValueError as err:
            raise ServiceWrongApiError(
                self.name,
                f"{self.name} answered with something that is not JSON.",
                problem="not_json",
            ) from err

    def _object(self, data: Any) -> dict[str, Any]:
        """The engine's JSON must be an object; anything else means it is broken."""
        if not isinstance(data, dict):
            raise ServiceWrongApiError(
                self.name,
                f"{self.name} answered JSON of an unexpected shape.",
                problem="bad_shape",
            )
        return data

    def _raise_for_status(self, status: int, headers: Any, body: str) -> None:
        """Map an HTTP status to a readable error; subclasses add engine quirks."""
        if status in (401, 403):
            raise ServiceAuthError(
                self.name,
                f"{self.name} refused the request (HTTP {status}): the API key or "
                f"access settings are wrong. {self.auth_hint} Tell the user; retrying "
                "will not help.",
                user_hint=f"HTTP {status}. {self.auth_hint}",
            )
        if status == 429:
            wait = headers.get("Retry-After")
            after = f" It asks to wait {wait} s." if wait else ""
            raise ServiceRateLimitedError(
                self.name,
                f"{self.name} is rate-limiting us (HTTP 429).{after} Answer from what "
                "you know or try again later.",
            )
        if status in (404, 405):
            raise ServiceWrongApiError(
                self.name,
                f"{self.name} has no search API at the configured address "
                f"(HTTP {status}).",
                problem="not_found",
            )
        if status >= 400:
            raise ServiceUnavailableError(
                self.name, f"{self.name} failed with HTTP {status}."
            )


def clean(text: Any) -> str:
    """Collapse whitespace in an engine's field; None becomes ''."""
    return " ".join(str(text).split()) if text else ""
