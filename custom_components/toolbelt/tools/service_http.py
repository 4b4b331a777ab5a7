"""How a tool's web service is called over HTTP: the timeout, and what each failure means.

Search engines and the MCP memory server share it, so a refused key, a rate limit,
a wrong address and a dead server read the same for the model (``ERROR: ...``) and
for the setup forms (which catch the error classes).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import aiohttp

from .errors import (
    ServiceAuthError,
    ServiceRateLimitedError,
    ServiceUnavailableError,
    ServiceWrongApiError,
)


@asynccontextmanager
async def service_call(name: str, seconds: float) -> AsyncIterator[None]:
    """Give the request inside ``seconds``; no answer or no connection in time
    is a ``ServiceUnavailableError`` naming the service."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError as err:
        raise ServiceUnavailableError(
            name, f"{name} did not answer within {seconds:g} s."
        ) from err
    except aiohttp.ClientError as err:
        raise ServiceUnavailableError(
            name, f"Could not reach {name}: {type(err).__name__}."
        ) from err


def raise_for_status(
    name: str,
    status: int,
    headers: Mapping[str, str],
    *,
    auth_hint: str,
    refusal_is_auth: bool = True,
) -> None:
    """Raise the error an HTTP status means; ``auth_hint`` says what to do on a 401/403.

    ``refusal_is_auth=False`` is for a keyless service that refuses some
    clients for a while (Reddit): a 401/403 then means "not now", not "fix
    the settings", and raises no repair issue.
    """
    if status in (401, 403) and refusal_is_auth:
        raise ServiceAuthError(
            name,
            f"{name} refused the request (HTTP {status}): the API key or access "
            f"settings are wrong. {auth_hint} Tell the user; retrying will not help.",
            user_hint=f"HTTP {status}. {auth_hint}",
        )
    if status in (401, 403):
        raise ServiceRateLimitedError(
            name, f"{name} refused the request (HTTP {status}). {auth_hint}"
        )
    if status == 429:
        # Only a number of seconds is passed on: a header is the server's text.
        wait = (headers.get("Retry-After") or "").strip()
        seconds = wait.isascii() and wait.isdigit() and len(wait) <= 6
        after = f" It asks to wait {int(wait)} s." if seconds else ""
        raise ServiceRateLimitedError(
            name,
            f"{name} is rate-limiting us (HTTP 429).{after} Answer from what you "
            "know or try again later.",
        )
    if status in (404, 405):
        raise ServiceWrongApiError(
            name,
            f"{name} has no API at the configured address (HTTP {status}).",
            problem="not_found",
        )
    if status >= 400:
        raise ServiceUnavailableError(name, f"{name} failed with HTTP {status}.")
