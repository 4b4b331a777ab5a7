"""An HTTP client session for tool tests (local servers: tests/local_server.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio


@pytest_asyncio.fixture
async def session(socket_enabled: None) -> AsyncIterator[aiohttp.ClientSession]:
    """A plain client session, closed after the test."""
    async with aiohttp.ClientSession() as client:
        yield client
