"""A recording proxy in front of llama-server: each chat reply's prompt timings.

llama-server reports per request how many prompt tokens it processed
(``timings.prompt_n``) and how many it reused from its cache
(``timings.cache_n``); Toolbelt does not read them, so tests and benches that
measure the cache put this proxy between Toolbelt and the server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from typing import Any, Self

from aiohttp import ClientSession, web


@dataclass
class TimingProxy:
    """Forwards every request to llama-server; keeps each chat reply's timings."""

    upstream: str
    timings: list[dict[str, int]] = field(default_factory=list)
    # The body of each chat request, in order.
    bodies: list[dict[str, Any]] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    port: int = 0

    async def start(self) -> Self:
        """Listen on 127.0.0.1 on a free port."""
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to give Toolbelt."""
        return f"http://127.0.0.1:{self.port}/v1"

    def share(self, index: int) -> float:
        """The share of request ``index``'s prompt that came from the cache."""
        timing = self.timings[index]
        total = timing["prompt_n"] + timing["cache_n"]
        return timing["cache_n"] / total if total else 0.0

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        chat = request.path.endswith("/chat/completions")
        if chat:
            self.bodies.append(json.loads(body))
        async with (
            ClientSession() as session,
            session.request(
                request.method,
                self.upstream + request.path,
                data=body or None,
                headers={
                    "Content-Type": "application/json",
                    **{
                        k: v
                        for k, v in request.headers.items()
                        if k.lower() == "authorization"
                    },
                },
            ) as upstream,
        ):
            response = web.StreamResponse(status=upstream.status)
            response.content_type = upstream.content_type
            await response.prepare(request)
            seen = b""
            async for chunk in upstream.content.iter_any():
                seen += chunk
                await response.write(chunk)
            await response.write_eof()
        if chat:
            self.timings.append(_timings(seen.decode()))
        return response


def _timings(body: str) -> dict[str, int]:
    """prompt_n and cache_n of a whole reply or of an SSE stream's last chunk."""
    found: dict[str, Any] = {}
    for line in body.splitlines() or [body]:
        payload = line.removeprefix("data: ").strip()
        if payload.startswith("{") and '"timings"' in payload:
            found = json.loads(payload)["timings"]
    return {"prompt_n": found.get("prompt_n", -1), "cache_n": found.get("cache_n", -1)}
