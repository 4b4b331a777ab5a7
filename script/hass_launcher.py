"""Run Home Assistant's own `hass` entry point for the dev instance.

HA 2026.2 refuses to start on Python older than REQUIRED_PYTHON_VER (3.13.2),
while dev machines may have an earlier 3.13 patch release that runs it fine.
On such an interpreter this skips that one check, says so, and changes nothing
else. Any other interpreter goes through HA's check unchanged.

When TOOLBELT_DEV_PARENT_PID is set (by dev_instance.py), HA also gets
SIGTERM if that supervisor dies, so no orphan HA keeps port 8123.

Usage: python script/hass_launcher.py [hass arguments...]
"""

import ctypes
import os
import signal
import sys

from homeassistant import __main__ as hass_main
from homeassistant.const import REQUIRED_PYTHON_VER


def _format(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def _skip_python_patch_check() -> None:
    """Neutralise only validate_python(), and only for an older 3.13 patch."""
    running = sys.version_info[:3]
    if running >= REQUIRED_PYTHON_VER or running[:2] != REQUIRED_PYTHON_VER[:2]:
        return
    print(
        f"hass_launcher: Python {_format(running)} is older than the "
        f"{_format(REQUIRED_PYTHON_VER)} Home Assistant requires; skipping only "
        "that version check (dev instance).",
        file=sys.stderr,
        flush=True,
    )
    hass_main.validate_python = lambda: None


def _stop_with_parent() -> None:
    """Ask Linux to send SIGTERM when the supervising process exits."""
    parent = os.environ.get("TOOLBELT_DEV_PARENT_PID")
    if not parent or not sys.platform.startswith("linux"):
        return
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != int(parent):  # the parent died before prctl took effect
        sys.exit("hass_launcher: supervisor already gone, not starting")


if __name__ == "__main__":
    _stop_with_parent()
    _skip_python_patch_check()
    sys.argv[0] = "hass"
    sys.exit(hass_main.main())
