"""Loaded first (``-p tests.ha_bridge.plugin``): see this package's docstring."""

import sys

# HA 2026.11 aliases httpx to httpx2 on import; that must come before any
# ``import httpx``. On older HAs it is a plain import, done a little earlier.
assert "httpx" not in sys.modules or "homeassistant" in sys.modules, (
    "httpx was imported before homeassistant: HA 2026.11's alias cannot apply"
)
import homeassistant  # noqa: E402, F401
from homeassistant.components import logger  # noqa: E402

if not hasattr(logger, "_clear_logger_overwrites"):
    from homeassistant.components.logger import helpers

    logger._clear_logger_overwrites = helpers._clear_logger_overwrites  # type: ignore[attr-defined]
