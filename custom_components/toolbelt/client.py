"""Builds the model-server backend for a config entry, the one way we do it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from homeassistant.core import HomeAssistant
from homeassistant.helpers.httpx_client import get_async_client
import openai

from .backend.openai_compat import OpenAICompatBackend
from .backend.servers import PLACEHOLDER_API_KEY, get_server_kind
from .const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_SERVER_KIND,
    DEFAULT_REQUEST_TIMEOUT,
)


def server_label(data: Mapping[str, Any]) -> str:
    """How we name the server to people: "Ollama at localhost:11434"."""
    kind = get_server_kind(data.get(CONF_SERVER_KIND, "other"))
    host = urlsplit(data[CONF_BASE_URL]).netloc or data[CONF_BASE_URL]
    return f"{kind.name} at {host}"


async def async_create_backend(
    hass: HomeAssistant, data: Mapping[str, Any]
) -> OpenAICompatBackend:
    """An OpenAI SDK client on HA's shared httpx pool, wrapped as our backend.

    ``max_retries=0``: a voice turn must fail fast and say so, not retry silently
    for a minute. The per-request timeout comes from the agent's settings.
    """
    client = openai.AsyncOpenAI(
        base_url=data[CONF_BASE_URL],
        api_key=data.get(CONF_API_KEY) or PLACEHOLDER_API_KEY,
        http_client=get_async_client(hass),
        max_retries=0,
        timeout=DEFAULT_REQUEST_TIMEOUT,
    )
    # The SDK reads platform details from disk on first use; do it off the loop.
    await hass.async_add_executor_job(client.platform_headers)
    return OpenAICompatBackend(
        client,
        server_kind=data.get(CONF_SERVER_KIND, "other"),
        label=server_label(data),
    )
