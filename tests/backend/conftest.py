"""Fixtures for backend tests: a backend pointed at the scripted server.

The server fixtures themselves (openai_server, ...) come from tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from custom_components.toolbelt.backend.openai_compat import OpenAICompatBackend
from tests.openai_server import OpenAIServer

from .common import open_backend


@pytest_asyncio.fixture
async def backend(openai_server: OpenAIServer) -> AsyncIterator[OpenAICompatBackend]:
    """A llama.cpp-kind backend talking to the default scripted server."""
    async with open_backend(openai_server.base_url) as backend:
        yield backend
