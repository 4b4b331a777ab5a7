"""Run the dev Home Assistant, provision it, and stop it cleanly.

script/develop execs this. It starts `hass` (through hass_launcher.py) as a
child in its own session, so a Ctrl-C reaches only this supervisor, which
forwards it once and waits for HA to finish stopping. A second Ctrl-C, or HA
still running after STOP_TIMEOUT, kills it. If this process dies anyway, the
launcher's parent-death signal stops HA, so no orphan keeps its port.
A restart asked from HA's UI (exit code 100) starts HA again.

Environment: TOOLBELT_DEV_CONFIG (config dir, default ./config),
TOOLBELT_DEV_PORT (HA's port, default 8123), TOOLBELT_TURBOJPEG_DIR (set by
script/develop: where libturbojpeg is), the TOOLBELT_* model-server variables
read by dev_provision, and TOOLBELT_STUB_SERVER=1, which starts the stub model
server (dev_stub_server.py) on 127.0.0.1:TOOLBELT_STUB_PORT (default: HA's port
+ 1) for as long as this runs, and points TOOLBELT_BASE_URL at it when unset.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
import signal
import sys
import time

import aiohttp
from aiohttp import web
from dev_hass_api import HassApi, HassApiError
from dev_provision import OWNER, REPO, URL, dev_port, prepare_config_dir, provision
from dev_stub_server import DEFAULT_MODEL, MODELS, start_stub_server

RESTART_EXIT_CODE = 100
START_TIMEOUT = 1200  # the first start installs the frontend and friends
STOP_TIMEOUT = 120
READY_MARKER = "Toolbelt dev instance is ready"


def say(text: str) -> None:
    print(f"[develop] {text}", flush=True)


def _since_develop_started() -> float | None:
    """Seconds since script/develop began (setup included), for the first banner."""
    try:
        return time.time() - float(os.environ.pop("TOOLBELT_DEVELOP_STARTED"))
    except (KeyError, ValueError):
        return None


def banner(seconds: float, lines: list[str]) -> None:
    rule = "=" * 72
    total = _since_develop_started()
    took = f"up in {seconds:.0f} s"
    if total is not None and total - seconds >= 1:
        took += f"; {total:.0f} s since script/develop started, setup included"
    body = [
        f"{READY_MARKER} ({took})",
        f"  Open:     {URL}",
        f"  Login:    {OWNER.username} / {OWNER.password}",
        *(f"  {line}" for line in lines),
        "  Stop:     Ctrl-C",
    ]
    print("\n".join([rule, *body, rule]), flush=True)


def hass_env() -> dict[str, str]:
    env = dict(os.environ)
    # HA installs integration requirements (frontend, ...) on first start.
    env.setdefault("PIP_IGNORE_REQUIRES_PYTHON", "1")
    env["TOOLBELT_DEV_PARENT_PID"] = str(os.getpid())
    # HA 2026.10+ takes its first port from SETUP_PORT (see dev_provision).
    env["SETUP_PORT"] = str(dev_port())
    # PyTurboJPEG (HA's camera) looks for libturbojpeg.so.0 on LD_LIBRARY_PATH.
    if turbojpeg := env.get("TOOLBELT_TURBOJPEG_DIR"):
        env["LD_LIBRARY_PATH"] = ":".join(
            p for p in (turbojpeg, env.get("LD_LIBRARY_PATH")) if p
        )
    return env


def wants_stub_server() -> bool:
    return os.environ.get("TOOLBELT_STUB_SERVER", "").lower() in ("1", "true", "yes")


async def start_stub() -> tuple[web.AppRunner, str]:
    """Start the stub model server; Toolbelt is added on it unless told otherwise."""
    port = int(os.environ.get("TOOLBELT_STUB_PORT") or dev_port() + 1)
    runner, base_url = await start_stub_server(port)
    if not os.environ.get("TOOLBELT_BASE_URL"):
        os.environ["TOOLBELT_BASE_URL"] = base_url
        os.environ.setdefault("TOOLBELT_SERVER_KIND", "other")
        os.environ.setdefault("TOOLBELT_MODEL", DEFAULT_MODEL)
    return runner, f"Stub:     model server at {base_url} ({', '.join(MODELS)})"


async def provision_and_announce(
    config_dir: Path,
    proc: asyncio.subprocess.Process,
    started: float,
    extra: list[str],
) -> None:
    async with aiohttp.ClientSession() as session:
        api = HassApi(session, URL)
        try:
            await api.wait_until_up(
                START_TIMEOUT,
                is_alive=lambda: proc.returncode is None,
                progress=lambda waited: say(
                    f"still waiting for {URL} after {waited:.0f} s "
                    "(installing requirements?)"
                ),
            )
            lines = [*await provision(api, config_dir, dict(os.environ)), *extra]
        except Exception as err:  # report any failure; HA keeps running
            kind = "" if isinstance(err, HassApiError) else f"{type(err).__name__}: "
            say(f"PROVISIONING FAILED: {kind}{err}")
            say(
                f"HA keeps running at {URL}; its log is {config_dir}/home-assistant.log"
            )
            return
        finally:
            await api.close()
    banner(time.monotonic() - started, lines)


async def run_once(config_dir: Path, stop: asyncio.Event, extra: list[str]) -> int:
    """Run HA until it exits or `stop` is set; return its exit code."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPO / "script" / "hass_launcher.py"),
        "--config",
        str(config_dir),
        env=hass_env(),
        start_new_session=True,
    )
    say(f"Home Assistant started (pid {proc.pid}); waiting for {URL} ...")
    provisioning = asyncio.create_task(
        provision_and_announce(config_dir, proc, started, extra)
    )
    exited = asyncio.create_task(proc.wait())
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({exited, stopping}, return_when=asyncio.FIRST_COMPLETED)
    provisioning.cancel()
    stopping.cancel()
    if not exited.done():
        say("stopping Home Assistant ...")
        proc.send_signal(signal.SIGTERM)
        stop.clear()
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait(
            {exited, stopping},
            timeout=STOP_TIMEOUT,
            return_when=asyncio.FIRST_COMPLETED,
        )
        stopping.cancel()
        if not exited.done():
            say("Home Assistant did not stop; killing it")
            proc.kill()
        await exited
    return proc.returncode


async def main(config_dir: Path) -> int:
    for line in prepare_config_dir(config_dir):
        say(line)
    say(f"config: {config_dir}; log: {config_dir / 'home-assistant.log'}")
    say("a first start installs the frontend and other requirements: a few minutes")

    stop = asyncio.Event()
    stop_requested = False

    def request_stop() -> None:
        nonlocal stop_requested
        stop_requested = True
        stop.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, request_stop)

    stub, extra = None, []
    if wants_stub_server():
        stub, line = await start_stub()
        extra.append(line)
        say(line.replace("Stub:     ", "stub "))
    try:
        while True:
            code = await run_once(config_dir, stop, extra)
            if code == RESTART_EXIT_CODE and not stop_requested:
                say("Home Assistant asked for a restart")
                continue
            say(f"Home Assistant exited with code {code}")
            return 0 if stop_requested and code in (0, -signal.SIGTERM) else code
    finally:
        if stub is not None:
            await stub.cleanup()


if __name__ == "__main__":
    sys.exit(
        asyncio.run(
            main(Path(os.environ.get("TOOLBELT_DEV_CONFIG", REPO / "config")).resolve())
        )
    )
