"""The context size a server gives a request, where the server reports it.

The OpenAI API has no field for it; each local server says it in its own
place (``ServerKind.context_sources`` names which, in order):

- llama-server: ``/v1/models`` ``data[].meta.n_ctx``, the context of one slot
  (``-c`` divided among ``--parallel`` slots); older builds only in ``/props``
  ``default_generation_settings.n_ctx``.
- Ollama: ``/api/ps`` ``models[].context_length`` for a loaded model (what it
  runs with); else ``/api/show`` ``parameters`` ``num_ctx`` (the Modelfile's),
  capped by ``model_info`` ``<architecture>.context_length`` (what the model
  was trained for). Without either Ollama uses its server default, which
  depends on the machine: then nothing is reported.
- vLLM: ``/v1/models`` ``data[].max_model_len``.

Every request is bounded in time and size; a missing, slow, oversized or odd
answer means "not reported", never an error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
import json
import logging
from typing import Any

import aiohttp

_LOGGER = logging.getLogger(__name__)

TIMEOUT = 5.0
# Ollama's /api/show carries the model's license and template: room for them.
MAX_BYTES = 1_048_576
# A reported size outside this range is not believed.
_SMALLEST, _LARGEST = 16, 100_000_000

Fetch = Callable[[str, Mapping[str, Any] | None], Awaitable[Any]]


async def async_context_size(
    session: aiohttp.ClientSession,
    sources: tuple[str, ...],
    base_url: str,
    model: str,
    headers: Mapping[str, str] | None = None,
) -> int | None:
    """Tokens one request may fill, from the first source that says; never raises.

    ``base_url`` is the OpenAI base (``http://host:8080/v1``); the servers'
    own paths hang off its root.
    """

    async def fetch(path: str, payload: Mapping[str, Any] | None) -> Any:
        return await _json(session, _url(base_url, path), payload, headers or {})

    for source in sources:
        reader = _READERS.get(source)
        if reader is None:
            continue
        size = _tokens(await reader(fetch, model))
        if size is not None:
            return size
    return None


def _url(base_url: str, path: str) -> str:
    """``/v1/…`` on the OpenAI base, anything else on the server's root."""
    base = base_url.rstrip("/")
    if path.startswith("/v1/"):
        return base + path.removeprefix("/v1")
    return base.removesuffix("/v1") + path


async def _json(
    session: aiohttp.ClientSession,
    url: str,
    payload: Mapping[str, Any] | None,
    headers: Mapping[str, str],
) -> Any:
    """The JSON answer of one GET (POST with ``payload``); None for anything else."""
    try:
        async with asyncio.timeout(TIMEOUT):
            async with session.request(
                "POST" if payload is not None else "GET",
                url,
                json=payload,
                headers=dict(headers),
                allow_redirects=False,
            ) as response:
                if response.status != 200:
                    return None
                declared = response.content_length
                if declared is not None and declared > MAX_BYTES:
                    return None
                body = bytearray()
                async for chunk in response.content.iter_chunked(65_536):
                    body += chunk
                    if len(body) > MAX_BYTES:
                        return None
    except (aiohttp.ClientError, TimeoutError, ValueError, OSError) as err:
        _LOGGER.debug("No context size from %s: %s", url, err)
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        return None


def _tokens(value: Any) -> int | None:
    """A believable token count, else None (bools and floats are not counts)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if _SMALLEST <= value <= _LARGEST else None


def _entries(body: Any, key: str) -> list[dict[str, Any]]:
    items = body.get(key) if isinstance(body, dict) else None
    return [m for m in items if isinstance(m, dict)] if isinstance(items, list) else []


def _model_entry(body: Any, model: str) -> dict[str, Any] | None:
    """The /v1/models entry of ``model``; the only one if none has its id.

    llama-server serves one model under any name, listed by its file path.
    """
    entries = _entries(body, "data")
    named = [m for m in entries if m.get("id") == model]
    if named:
        return named[0]
    return entries[0] if len(entries) == 1 else None


async def _llamacpp_models(fetch: Fetch, model: str) -> Any:
    entry = _model_entry(await fetch("/v1/models", None), model)
    meta = entry.get("meta") if entry else None
    return meta.get("n_ctx") if isinstance(meta, dict) else None


async def _llamacpp_props(fetch: Fetch, _model: str) -> Any:
    body = await fetch("/props", None)
    settings = (
        body.get("default_generation_settings") if isinstance(body, dict) else None
    )
    return settings.get("n_ctx") if isinstance(settings, dict) else None


async def _vllm_models(fetch: Fetch, model: str) -> Any:
    entry = _model_entry(await fetch("/v1/models", None), model)
    return entry.get("max_model_len") if entry else None


def _ollama_names(model: str) -> set[str]:
    """A model's names in Ollama: without a tag it means ``:latest``."""
    return {model, f"{model}:latest"} if ":" not in model else {model}


async def _ollama_ps(fetch: Fetch, model: str) -> Any:
    names = _ollama_names(model)
    for entry in _entries(await fetch("/api/ps", None), "models"):
        if names & {entry.get("name"), entry.get("model")}:
            return entry.get("context_length")
    return None


async def _ollama_show(fetch: Fetch, model: str) -> Any:
    body = await fetch("/api/show", {"model": model})
    if not isinstance(body, dict):
        return None
    num_ctx = _num_ctx(body.get("parameters"))
    info = body.get("model_info")
    trained = [
        n
        for key, value in (info.items() if isinstance(info, dict) else ())
        if str(key).endswith(".context_length") and (n := _tokens(value))
    ]
    if num_ctx is None:
        return None
    return min(num_ctx, *trained) if trained else num_ctx


def _num_ctx(parameters: Any) -> int | None:
    """``num_ctx`` from Ollama's parameters text (``"num_ctx 8192\\nstop …"``)."""
    if not isinstance(parameters, str):
        return None
    for line in parameters.splitlines():
        name, _, value = line.strip().partition(" ")
        if name == "num_ctx" and value.strip().isdigit():
            return _tokens(int(value.strip()))
    return None


_READERS: dict[str, Callable[[Fetch, str], Awaitable[Any]]] = {
    "llamacpp_models": _llamacpp_models,
    "llamacpp_props": _llamacpp_props,
    "vllm_models": _vllm_models,
    "ollama_ps": _ollama_ps,
    "ollama_show": _ollama_show,
}
