"""Real local HTTP servers on 127.0.0.1, for tool backends and web pages.

Each test builds an aiohttp app that speaks the real service's wire shape and
serves it on 127.0.0.1 (the only address tests may reach).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
import contextlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
import pytest_asyncio


@dataclass
class LocalServer:
    """A running app; ``url`` has no trailing slash; ``requests`` records calls."""

    runner: web.AppRunner
    port: int
    requests: list[web.Request] = field(default_factory=list)

    @property
    def url(self) -> str:
        """http://127.0.0.1:<port>."""
        return f"http://127.0.0.1:{self.port}"


StartServer = Callable[[web.Application], Awaitable[LocalServer]]


@pytest_asyncio.fixture
async def local_server(socket_enabled: None) -> AsyncIterator[StartServer]:
    """Start apps on 127.0.0.1 with a free port; all are stopped after the test."""
    started: list[LocalServer] = []

    async def start(app: web.Application) -> LocalServer:
        holder: list[LocalServer] = []

        @web.middleware
        async def record(request: web.Request, handler: Any) -> web.StreamResponse:
            holder[0].requests.append(request)
            return await handler(request)

        app.middlewares.append(record)
        runner = web.AppRunner(
            app, handler_cancellation=True, shutdown_timeout=0.2, access_log=None
        )
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server = LocalServer(runner=runner, port=runner.addresses[0][1])
        holder.append(server)
        started.append(server)
        return server

    yield start
    for server in started:
        with contextlib.suppress(Exception):
            await server.runner.cleanup()
