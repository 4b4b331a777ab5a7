"""Builds the model-server backend for a config entry, the one way we do it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.httpx_client import get_async_client
import openai

from ..backend.context_size import async_context_size
from ..backend.openai_compat import OpenAICompatBackend, warm_client
from ..backend.servers import PLACEHOLDER_API_KEY, ServerKind
from ..const import DEFAULT_REQUEST_TIMEOUT
from .server_names import basic_auth_header, spoken_name, without_credentials
from .settings import server_settings


async def async_create_backend(
    hass: HomeAssistant, data: Mapping[str, Any]
) -> OpenAICompatBackend:
    """An OpenAI SDK client on HA's shared httpx pool, wrapped as our backend.

    ``max_retries=0``: a voice turn must fail fast and say so, not retry silently
    for a minute. The per-request timeout comes from the agent's settings.
    The server kind is resolved here, once: the backend carries it.
    """
    server = server_settings(data)
    basic = basic_auth_header(server.base_url)
    client = openai.AsyncOpenAI(
        base_url=without_credentials(server.base_url),
        api_key=server.api_key or PLACEHOLDER_API_KEY,
        http_client=get_async_client(hass),
        max_retries=0,
        timeout=DEFAULT_REQUEST_TIMEOUT,
        default_headers={"Authorization": basic} if basic else None,
    )
    await hass.async_add_executor_job(warm_client, client)
    return OpenAICompatBackend(client, kind=server.kind, label=spoken_name(server.kind))


async def async_read_context_size(
    hass: HomeAssistant, data: Mapping[str, Any], kind: ServerKind, model: str
) -> int | None:
    """The context size the server reports for ``model``, with the entry's key.

    None when this kind reports none, or the server did not say.
    """
    if not kind.context_sources:
        return None
    server = server_settings(data)
    basic = basic_auth_header(server.base_url)
    key = server.api_key
    authorization = basic or (f"Bearer {key}" if key else None)
    return await async_context_size(
        async_get_clientsession(hass),
        kind.context_sources,
        without_credentials(server.base_url),
        model,
        {"Authorization": authorization} if authorization else None,
    )
