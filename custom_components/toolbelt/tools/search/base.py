"""What every search backend returns, and how it sends a request.

Backends are HA-free: they take an aiohttp session and raise our readable errors; the
search tool turns an auth error into an HA repair issue.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
import json
from typing import Any, Literal

import aiohttp

from ..errors import ServiceWrongApiError
from ..service_http import raise_for_status, service_call

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

    default_url: str = ""
    """The public service's address; '' when the user must give one (SearXNG)."""

    refusal_is_auth: bool = True
    """Whether HTTP 401/403 means wrong settings (see ``service_http``)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        timeout: float,
        url: str = "",
        api_key: str = "",
    ) -> None:
        """An empty ``url`` means the public service (``default_url``)."""
        self._session = session
        self.timeout = timeout
        self._url = url or self.default_url
        self._api_key = api_key

    def _endpoint(self, path: str) -> str:
        """``path`` under the configured address."""
        return f"{self._url.rstrip('/')}/{path}"

    @abstractmethod
    async def search(
        self, query: str, kind: SearchKind, max_results: int
    ) -> list[SearchResult]:
        """Return at most max_results hits, best first."""

    async def _request(
        self, method: str, url: str, *, expect_json: bool = True, **kwargs: Any
    ) -> Any:
        """Send one request under the timeout; map failures to readable errors."""
        async with (
            service_call(self.name, self.timeout),
            self._session.request(method, url, **kwargs) as resp,
        ):
            text = await resp.text(errors="replace")
            self._raise_for_status(resp.status, resp.headers, text)
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
        raise_for_status(
            self.name,
            status,
            headers,
            auth_hint=self.auth_hint,
            refusal_is_auth=self.refusal_is_auth,
        )


def clean(text: Any) -> str:
    """Collapse whitespace in an engine's field; None becomes ''."""
    return " ".join(str(text).split()) if text else ""
