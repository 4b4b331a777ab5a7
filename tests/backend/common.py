"""Helpers shared by backend tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import openai

from custom_components.toolbelt.backend.base import CompletionRequest, Delta
from custom_components.toolbelt.backend.errors import BackendError
from custom_components.toolbelt.backend.openai_compat import (
    OpenAICompatBackend,
    warm_client,
)
from custom_components.toolbelt.backend.servers import get_server_kind

API_KEY = "sk-test-123"
LABEL = "Test server"


@asynccontextmanager
async def open_backend(
    base_url: str, kind: str = "llamacpp", api_key: str = API_KEY
) -> AsyncIterator[OpenAICompatBackend]:
    """A backend as the integration builds it (SDK client, no retries, warmed
    off the event loop), then closed."""
    client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)
    await asyncio.to_thread(warm_client, client)
    try:
        yield OpenAICompatBackend(client, kind=get_server_kind(kind), label=LABEL)
    finally:
        await client.close()


async def collect(
    backend: OpenAICompatBackend, request: CompletionRequest
) -> list[Delta]:
    """Run one request to the end and return every delta."""
    return [delta async for delta in backend.complete(request)]


async def collect_until_error(
    backend: OpenAICompatBackend, request: CompletionRequest
) -> tuple[list[Delta], BackendError]:
    """Deltas received before the request failed, and the failure (must fail)."""
    received: list[Delta] = []
    try:
        async for delta in backend.complete(request):
            received.append(delta)
    except BackendError as err:
        return received, err
    raise AssertionError(f"request did not fail; got {received}")


def ask(text: str = "turn on the kitchen light", **options: Any) -> CompletionRequest:
    """A one-message request with a short timeout, so failing tests stay fast."""
    options.setdefault("timeout", 5.0)
    return CompletionRequest(
        model="test-model", messages=[{"role": "user", "content": text}], **options
    )
