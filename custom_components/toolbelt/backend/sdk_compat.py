"""The only place that knows how openai SDK versions differ (HA-free, like backend/).

openai 2.x (HA 2026.2) talks HTTP through ``httpx``; openai 3.x (HA 2026.3+)
through ``httpx2``, yet it still accepts a legacy ``httpx`` client, which is
what HA 2026.10's ``get_async_client`` hands out (2026.11 hands out httpx2).
So a transport error may come from either library: we catch both classes,
found by feature detection (whichever of the two is importable).
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType


def _http_libraries() -> tuple[ModuleType, ...]:
    found = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(import_module(name))
        except ImportError:
            continue
    return tuple(found)


HTTP_LIBRARIES = _http_libraries()
HTTP_ERRORS: tuple[type[Exception], ...] = tuple(
    lib.HTTPError for lib in HTTP_LIBRARIES
)
"""Anything either library raises for HTTP trouble."""
TIMEOUT_ERRORS: tuple[type[Exception], ...] = tuple(
    lib.TimeoutException for lib in HTTP_LIBRARIES
)
TRANSPORT_ERRORS: tuple[type[Exception], ...] = tuple(
    lib.TransportError for lib in HTTP_LIBRARIES
)
BROKEN_STREAM_ERRORS: tuple[type[Exception], ...] = tuple(
    cls for lib in HTTP_LIBRARIES for cls in (lib.RemoteProtocolError, lib.ReadError)
)
"""The server stopped mid-body: a cut stream, not a refused connection."""
