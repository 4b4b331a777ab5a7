"""Check script/develop for real: start, log in, talk to Assist, Ctrl-C.

Runs script/develop twice on one config dir (a fresh temporary one unless
--config is given): a first start and a restart. Each time it waits for the
ready banner, logs in with the credentials the banner prints, checks the demo
entities, their areas and Assist exposure, has HA's built-in agent control
each device through /api/conversation/process, then sends Ctrl-C (SIGINT to
the process group, as a terminal does) and checks no process is left.

With --stub-server, script/develop also starts the stub model server
(dev_stub_server.py, TOOLBELT_STUB_SERVER=1) and adds Toolbelt on it; this
checks that Toolbelt is the Assist agent and answers, adds one agent per stub
model through the agent flow (the check names the model and gives its
verdict), and has each model that calls tools switch a demo device.

Every start's home-assistant.log must be free of the libturbojpeg error.

On the first start it then opens the UI in headless Chromium (dev_browser.py):
login, the overview with the demo home, Settings > Devices & services, and the
Assist dialog answering; it prints the screenshots' paths. --no-browser skips it.

Needs HA's port free (TOOLBELT_DEV_PORT, default 8123). Prints the measured
start times; exits 1 on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from pathlib import Path
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import aiohttp
from dev_browser import FORM_SHOTS, BrowserCheckFailed, check_ui
from dev_hass_api import HassApi
from dev_instance import READY_MARKER
from dev_provision import DEMO_DEVICES_FILE, DEMO_ENTITY_AREAS, REPO, dev_port
from dev_stub_server import GREETING, MODELS
import psutil

READY_TIMEOUT = 1500
STOP_TIMEOUT = 150

# (sentence, entity, service call that first sets the opposite state, expected)
CONVERSATIONS = [
    (
        "turn on the kitchen light",
        "light.kitchen_light",
        ("light", "turn_off", {}),
        lambda s: s["state"] == "on",
    ),
    (
        "set the living room lamp brightness to 40%",
        "light.living_room_lamp",
        ("light", "turn_on", {"brightness": 255}),
        lambda s: s["state"] == "on" and abs(s["attributes"]["brightness"] - 102) <= 2,
    ),
    (
        "set the living room blinds to 30%",
        "cover.living_room_blinds",
        ("cover", "open_cover", {}),
        lambda s: s["attributes"]["current_position"] == 30,
    ),
    (
        "open the garage door",
        "cover.garage_door",
        ("cover", "close_cover", {}),
        lambda s: s["state"] == "open",
    ),
    (
        "unlock the front door lock",
        "lock.front_door_lock",
        ("lock", "lock", {}),
        lambda s: s["state"] == "unlocked",
    ),
    (
        "set the thermostat to 22 degrees",
        "climate.thermostat",
        ("climate", "set_temperature", {"temperature": 19}),
        lambda s: s["attributes"]["temperature"] == 22,
    ),
]


class CheckFailed(Exception):
    pass


def say(text: str) -> None:
    print(f"[develop_check] {text}", flush=True)


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise CheckFailed(what)
    say(f"ok: {what}")


# ---- one run of script/develop ----------------------------------------------


class DevelopRun:
    """script/develop as a child in its own process group, output to a file."""

    def __init__(self, config_dir: Path, log: Path, env: dict[str, str]) -> None:
        self.log = log
        self.started = time.monotonic()
        self._log_file = log.open("w")
        self.proc = subprocess.Popen(
            [str(REPO / "script" / "develop")],
            env={**env, "TOOLBELT_DEV_CONFIG": str(config_dir)},
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.seen: dict[int, psutil.Process] = {}

    def _remember_processes(self) -> None:
        try:
            for proc in psutil.Process(self.proc.pid).children(recursive=True):
                self.seen.setdefault(proc.pid, proc)
        except psutil.NoSuchProcess:
            pass

    async def wait_ready(self) -> tuple[float, str]:
        """Wait for the banner; return (seconds, banner text)."""
        deadline = self.started + READY_TIMEOUT
        while time.monotonic() < deadline:
            self._remember_processes()
            text = self.log.read_text(errors="replace")
            if READY_MARKER in text:
                banner = text[text.index(READY_MARKER) :].split("=" * 20)[0]
                return time.monotonic() - self.started, banner
            if "PROVISIONING FAILED" in text:
                raise CheckFailed(f"provisioning failed, see {self.log}")
            if self.proc.poll() is not None:
                raise CheckFailed(f"script/develop exited early, see {self.log}")
            await asyncio.sleep(1)
        raise CheckFailed(f"no ready banner within {READY_TIMEOUT} s, see {self.log}")

    async def ctrl_c(self) -> float:
        """Send SIGINT to the process group; return seconds until all are gone."""
        self._remember_processes()
        expect(
            bool(self.seen),
            f"hass runs under script/develop ({len(self.seen)} processes)",
        )
        start = time.monotonic()
        os.killpg(self.proc.pid, signal.SIGINT)
        while self.proc.poll() is None:
            if time.monotonic() - start > STOP_TIMEOUT:
                raise CheckFailed(
                    f"script/develop still running {STOP_TIMEOUT} s after Ctrl-C"
                )
            await asyncio.sleep(0.2)
        took = time.monotonic() - start
        self._log_file.close()
        left = [
            p for p in self.seen.values() if p.is_running() and p.status() != "zombie"
        ]
        expect(not left, f"no process left after Ctrl-C (left: {left})")
        expect(
            self.proc.returncode == 0,
            f"script/develop exit code {self.proc.returncode}",
        )
        return took

    def kill(self) -> None:
        """Last resort on a failed check: stop what this run started."""
        self._remember_processes()
        if self.proc.poll() is None:
            self.proc.kill()
        for proc in self.seen.values():
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()


def parse_banner(banner: str) -> tuple[str, str, str]:
    url = re.search(r"Open:\s+(\S+)", banner)
    login = re.search(r"Login:\s+(\S+) / (\S+)", banner)
    if not url or not login:
        raise CheckFailed(f"banner lacks Open:/Login: lines:\n{banner}")
    return url.group(1), login.group(1), login.group(2)


# ---- what a user would look at -----------------------------------------------


async def check_instance(api: HassApi, banner: str, stub: bool) -> None:
    registry = {
        (e["platform"], e["unique_id"]): e
        for e in await api.ws("config/entity_registry/list")
    }
    area_names = {
        a["area_id"]: a["name"] for a in await api.ws("config/area_registry/list")
    }
    exposed = (await api.ws("homeassistant/expose_entity/list"))["exposed_entities"]
    for key, area in DEMO_ENTITY_AREAS.items():
        entry = registry.get(key)
        expect(entry is not None, f"{key[1]} is registered")
        entity_id = entry["entity_id"]
        expect(
            area_names.get(entry["area_id"]) == area, f"{entity_id} is in area {area}"
        )
        expect(
            exposed.get(entity_id, {}).get("conversation") is True,
            f"{entity_id} is exposed to Assist",
        )

    onboarding = await api.onboarding_status()
    expect(all(onboarding.values()), f"onboarding is complete {onboarding}")
    notifications = await api.ws("persistent_notification/get")
    expect(
        not [n for n in notifications if n["notification_id"] == "http-login"],
        "no 'Login attempt failed' notification",
    )
    status, page = await api.request("GET", "/", auth=False, allow_redirects=False)
    expect(
        status == 200 and "<html" in page.lower(),
        f"the UI serves its page at / (HTTP {status}), not the onboarding wizard",
    )

    for sentence, entity_id, (domain, service, data), ok in CONVERSATIONS:
        await api.post(
            f"/api/services/{domain}/{service}", {"entity_id": entity_id, **data}
        )
        before = await api.get(f"/api/states/{entity_id}")
        expect(not ok(before), f"{entity_id} starts in the other state")
        answer = await api.post(
            "/api/conversation/process",
            {
                "text": sentence,
                "language": "en",
                "agent_id": "conversation.home_assistant",
            },
        )
        speech = answer["response"]["speech"]["plain"]["speech"]
        after = await api.get(f"/api/states/{entity_id}")
        expect(
            answer["response"]["response_type"] == "action_done" and ok(after),
            f"{sentence!r} -> {speech!r}, {entity_id} is {after['state']}",
        )

    if stub:
        await check_toolbelt(api, banner)


async def check_toolbelt(api: HassApi, banner: str) -> None:
    line = next((ln.strip() for ln in banner.splitlines() if "Toolbelt:" in ln), "")
    if "SKIPPED" in line or "NOT added" in line:
        say(f"SKIPPED Toolbelt checks: {line}")
        return
    entries = await api.get("/api/config/config_entries/entry?domain=toolbelt")
    expect(
        len(entries) == 1 and entries[0]["state"] == "loaded",
        f"Toolbelt entry loaded ({line})",
    )
    entry_id = entries[0]["entry_id"]
    listing = await api.ws("assist_pipeline/pipeline/list")
    pipeline = next(
        p for p in listing["pipelines"] if p["id"] == listing["preferred_pipeline"]
    )
    agent = pipeline["conversation_engine"]
    registry = await api.ws("config/entity_registry/list")
    platform = next((e["platform"] for e in registry if e["entity_id"] == agent), None)
    expect(platform == "toolbelt", f"Assist pipeline agent {agent} is Toolbelt's")
    answer = await api.post(
        "/api/conversation/process",
        {"text": "hello", "language": "en", "agent_id": agent},
    )
    speech = answer["response"]["speech"]["plain"]["speech"]
    expect(GREETING in speech, f"Toolbelt answers through Assist: {speech!r}")

    agents = {"stub-hermes": agent}  # the entry's first agent (TOOLBELT_MODEL)
    for model in MODELS:
        if model not in agents:
            agents[model] = await add_stub_agent(api, entry_id, model)
    sentence, entity_id, (domain, service, data), ok = CONVERSATIONS[0]
    for model, agent_id in agents.items():
        if model == "stub-chat":
            continue  # it never calls a tool: its check said so
        await api.post(
            f"/api/services/{domain}/{service}", {"entity_id": entity_id, **data}
        )
        answer = await api.post(
            "/api/conversation/process",
            {"text": sentence, "language": "en", "agent_id": agent_id},
        )
        speech = answer["response"]["speech"]["plain"]["speech"]
        after = await api.get(f"/api/states/{entity_id}")
        expect(
            ok(after),
            f"{model} through Toolbelt: {sentence!r} -> {speech!r}, "
            f"{entity_id} is {after['state']}",
        )


# The check's verdict for each stub model, as the agent flow words it.
VERDICTS = {
    "stub-hermes": "Text tool calls",
    "stub-react": "Text tool calls",
    "stub-native": "Native tool calls",
    "stub-chat": "No tool call",
}


async def add_stub_agent(api: HassApi, entry_id: str, model: str) -> str:
    """Add an agent on ``model`` through the agent flow, as a person would.

    On a restart the agent is there already (named after its model).
    """
    if agent := await _agent_named(api, entry_id, model, tries=1):
        return agent
    base = "/api/config/config_entries/subentries/flow"
    step = await api.post(base, {"handler": [entry_id, "conversation"]})
    step = await api.post(
        f"{base}/{step['flow_id']}",
        {"model": model, "tool_format": "auto", "llm_hass_api": ["assist"]},
    )
    expect(step.get("step_id") == "check", f"the agent flow checks {model}")
    placeholders = step.get("description_placeholders") or {}
    said = " ".join(str(v) for v in placeholders.values())
    expect(
        model in said and VERDICTS[model] in said,
        f"the check names {model} and says {VERDICTS[model]!r}: {said!r}",
    )
    step = await api.post(f"{base}/{step['flow_id']}", {})
    if step.get("type") != "create_entry":
        raise CheckFailed(f"agent {model} not added: {step}")
    say(f"ok: agent {step['title']!r} added")
    # Named after its model (the suggested name follows the model).
    if agent := await _agent_named(api, entry_id, model, tries=30):
        return agent
    raise CheckFailed(f"no conversation entity for the {model} agent")


async def _agent_named(
    api: HassApi, entry_id: str, title: str, tries: int
) -> str | None:
    """The conversation entity of the agent titled ``title``, once it is loaded."""
    for _ in range(tries):  # the entry reloads with a new agent
        subentries = await api.ws("config_entries/subentries/list", entry_id=entry_id)
        ids = {s["subentry_id"] for s in subentries if s["title"] == title}
        for entity in await api.ws("config/entity_registry/list"):
            if entity.get("config_subentry_id") in ids and (
                entity["entity_id"].startswith("conversation.")
            ):
                return entity["entity_id"]
        if tries > 1:
            await asyncio.sleep(1)
    return None


def check_log(config_dir: Path) -> None:
    """HA's log so far: no libturbojpeg traceback (script/libturbojpeg), and no
    blocking call in Toolbelt's code (the model server's first request included)."""
    log = (config_dir / "home-assistant.log").read_text(errors="replace")
    expect(
        "Error loading libturbojpeg" not in log,
        "home-assistant.log has no 'Error loading libturbojpeg'",
    )
    blocking = [
        line
        for line in log.splitlines()
        if "Detected blocking call" in line and "toolbelt" in line
    ]
    expect(
        not blocking,
        f"home-assistant.log has no blocking call of Toolbelt's {blocking}",
    )


# ---- main --------------------------------------------------------------------


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


async def one_run(
    name: str,
    config_dir: Path,
    env: dict[str, str],
    stub: bool,
    shots: Path | None = None,
    docs: bool = False,
) -> tuple[float, float]:
    log = config_dir.parent / f"develop_{name}.log"
    say(f"{name}: starting script/develop (output in {log})")
    run = DevelopRun(config_dir, log, env)
    try:
        ready, banner = await run.wait_ready()
        say(f"{name}: ready after {ready:.0f} s")
        url, user, password = parse_banner(banner)
        async with aiohttp.ClientSession() as session:
            api = HassApi(session, url)
            await api.login(user, password)
            expect(True, f"logged in as {user!r} at {url}")
            try:
                check_log(config_dir)
                await check_instance(api, banner, stub)
            finally:
                await api.close()
        if shots is not None:
            try:
                stub_line = re.search(r"Stub:\s+model server at (\S+)", banner)
                taken = await check_ui(
                    url,
                    user,
                    password,
                    shots,
                    stub_url=stub_line.group(1) if stub and stub_line else None,
                    assist_says=GREETING if stub else "Turned on the light",
                    say=say,
                )
            except BrowserCheckFailed as err:
                raise CheckFailed(f"in the browser: {err}") from err
            for path in taken:
                say(f"screenshot: {path}")
            if docs:
                for path in taken:
                    name = path.stem.partition("_")[2]
                    if name in FORM_SHOTS:
                        target = REPO / "docs" / f"setup_{name}.png"
                        shutil.copy(path, target)
                        say(f"docs: {target.relative_to(REPO)}")
        check_log(config_dir)
        stopped = await run.ctrl_c()
        say(f"{name}: stopped {stopped:.1f} s after Ctrl-C")
    except BaseException:
        run.kill()
        raise
    return ready, stopped


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config", type=Path, help="config dir to use (default: a fresh temp dir)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp dir")
    parser.add_argument(
        "--stub-server",
        action="store_true",
        help="also check Toolbelt with a stub model server",
    )
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help="skip the headless Chromium check of the UI",
    )
    parser.add_argument(
        "--docs",
        action="store_true",
        help="with --stub-server: copy the form screenshots into docs/ for the README",
    )
    args = parser.parse_args()

    port = dev_port()
    if port_in_use(port):
        say(f"port {port} is in use: stop the running Home Assistant first")
        return 1
    workdir = Path(tempfile.mkdtemp(prefix="toolbelt_develop_check_"))
    config_dir = args.config.resolve() if args.config else workdir / "config"
    if not args.config:
        config_dir.mkdir()
        for name in ("configuration.yaml", DEMO_DEVICES_FILE):
            shutil.copy(REPO / "config" / name, config_dir / name)

    env = dict(os.environ)
    if args.stub_server:
        # script/develop starts the stub on a port no other instance uses.
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            stub_port = sock.getsockname()[1]
        env.update(
            TOOLBELT_STUB_SERVER="1",
            TOOLBELT_STUB_PORT=str(stub_port),
            # The stub takes any key; stored, Reconfigure must not show it.
            TOOLBELT_API_KEY="sk-dev-stub-key",
        )
        for name in ("TOOLBELT_BASE_URL", "TOOLBELT_MODEL", "TOOLBELT_SERVER_KIND"):
            env.pop(name, None)
    try:
        shots = (
            None
            if args.no_browser
            else Path(tempfile.mkdtemp(prefix="toolbelt_screenshots_"))
        )
        first = await one_run(
            "first_start",
            config_dir,
            env,
            args.stub_server,
            shots,
            docs=args.docs and args.stub_server,
        )
        again = await one_run("restart", config_dir, env, args.stub_server)
    except CheckFailed as err:
        say(f"FAILED: {err} (files kept in {workdir})")
        return 1
    say(
        f"PASSED. first start: ready in {first[0]:.0f} s, stop {first[1]:.1f} s; "
        f"restart: ready in {again[0]:.0f} s, stop {again[1]:.1f} s"
    )
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
