"""Fixtures shared by every test: the scripted model server, and a leak check."""

import asyncio
from collections.abc import AsyncIterator
import gc
import sys
from typing import Any

import pytest_asyncio

from tests.llama.server import llama  # noqa: F401 - a pytest fixture
from tests.local_server import local_server  # noqa: F401 - a pytest fixture
from tests.openai_server import (  # noqa: F401 - pytest fixtures
    closed_port_url,
    openai_server,
    openai_server_factory,
)


@pytest_asyncio.fixture(autouse=True)
async def no_async_generator_left_open() -> AsyncIterator[list[str]]:
    """Fail a test that leaves an async generator for the garbage collector.

    asyncio closes such a generator later, in a task of its own
    (``async_generator_athrow``); HA's harness only catches the ones still
    pending at teardown. This catches every one, on any path: a turn, a
    cancelled turn, a server error, an unload.
    """
    loop = asyncio.get_running_loop()
    original = loop._asyncgen_finalizer_hook
    stray: list[str] = []

    def record(agen: Any) -> None:
        code = getattr(agen, "ag_code", None)
        where = code.co_filename.rpartition("site-packages/")[2] if code else "?"
        stray.append(f"{agen.__qualname__} ({where})")
        original(agen)

    # run_forever installs the loop's hooks each time it starts: patch both.
    loop._asyncgen_finalizer_hook = record  # type: ignore[method-assign]
    firstiter, _ = sys.get_asyncgen_hooks()
    sys.set_asyncgen_hooks(firstiter, record)
    yield stray
    gc.collect()
    del loop._asyncgen_finalizer_hook
    sys.set_asyncgen_hooks(firstiter, original)
    assert stray == [], "async generators left open, closed by the GC"
