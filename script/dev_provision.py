"""Make the dev instance ready to use: owner login, areas, Assist, Toolbelt.

Two halves:
- prepare_config_dir() runs before HA starts and only writes files: the
  symlink that loads Toolbelt from the repo, and the onboarding steps that
  would otherwise start network integrations (weather, radio, TTS).
- provision() runs against the live instance through HA's own HTTP and
  websocket APIs, so the same validation runs as in the UI. Every step checks
  first, so running it on every start is safe.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
import importlib.util
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from dev_hass_api import HassApi, HassApiError
import yaml

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DEV_PORT = 8123


def dev_port() -> int:
    """HA's port: TOOLBELT_DEV_PORT, else 8123 (see _set_http_port)."""
    return int(os.environ.get("TOOLBELT_DEV_PORT") or DEFAULT_DEV_PORT)


URL = f"http://localhost:{dev_port()}"
RUNNING_TIMEOUT = 600


@dataclass(frozen=True)
class Owner:
    name: str = "Dev"
    username: str = "dev"
    password: str = "dev-password"


OWNER = Owner()

# (platform, unique_id) of each demo entity in demo_devices.yaml -> its area.
DEMO_ENTITY_AREAS = {
    ("template", "toolbelt_demo_kitchen_light"): "Kitchen",
    ("template", "toolbelt_demo_living_room_lamp"): "Living Room",
    ("template", "toolbelt_demo_living_room_ceiling_light"): "Living Room",
    ("template", "toolbelt_demo_living_room_blinds"): "Living Room",
    ("template", "toolbelt_demo_living_room_temperature"): "Living Room",
    ("generic_thermostat", "toolbelt_demo_thermostat"): "Living Room",
    ("template", "toolbelt_demo_garage_door"): "Garage",
    ("template", "toolbelt_demo_front_door_lock"): "Hallway",
}
DEMO_DEVICES_FILE = "demo_devices.yaml"
DEV_HTTP_FILE = "dev_http.yaml"


# ---- before HA starts --------------------------------------------------------


def prepare_config_dir(config_dir: Path) -> list[str]:
    """Create what HA needs in config_dir that git does not carry.

    Returns a line per thing it did, for the console.
    """
    done = []
    config_dir.mkdir(parents=True, exist_ok=True)
    for name in ("configuration.yaml", DEMO_DEVICES_FILE):
        if not (config_dir / name).exists():
            raise FileNotFoundError(f"{config_dir / name} is missing")

    link = config_dir / "custom_components" / "toolbelt"
    target = REPO / "custom_components" / "toolbelt"
    wanted = os.path.relpath(target, link.parent)
    if not link.is_symlink() or os.readlink(link) != wanted:
        link.parent.mkdir(exist_ok=True)
        if link.is_symlink():
            link.unlink()
        elif link.exists():
            raise FileExistsError(f"{link} exists and is not our symlink")
        link.symlink_to(wanted, target_is_directory=True)
        done.append(f"linked {link} -> {wanted}")

    # configuration.yaml includes these; the UI editors write to them.
    for name, empty in (("automations.yaml", "[]\n"), ("scripts.yaml", "{}\n")):
        if not (config_dir / name).exists():
            (config_dir / name).write_text(empty)

    if _seed_onboarding(config_dir):
        done.append("marked onboarding's location/analytics/integration steps done")
    done += _set_http_port(config_dir, dev_port())
    return done


def _set_http_port(config_dir: Path, port: int) -> list[str]:
    """Serve HA on ``port``, wherever this HA keeps its HTTP settings.

    HA 2026.10+ keeps them in .storage/http, created on the first start with
    the SETUP_PORT default (hass_env sets it); a port changed later is written
    there. Older HAs read ``http:`` from YAML, here the dev_http.yaml package.
    """
    package = config_dir / DEV_HTTP_FILE
    if importlib.util.find_spec("homeassistant.components.http.config") is None:
        package.write_text(f"http:\n  server_port: {port}\n")
        return []
    package.write_text("{}\n")  # YAML http settings would raise a repair issue
    store = config_dir / ".storage" / "http"
    if not store.exists():
        return []
    stored = json.loads(store.read_text())
    slots = [
        c for c in (stored["data"].get("stable"), stored["data"].get("pending")) if c
    ]
    if all(c.get("server_port") == port for c in slots):
        return []
    for config in slots:
        config["server_port"] = port
    store.write_text(json.dumps(stored, indent=2))
    return [f"set HA's port to {port} in {store}"]


def _seed_onboarding(config_dir: Path) -> bool:
    """On a fresh config, pre-complete all onboarding steps but the user step.

    The core_config step would start met, radio_browser, google_translate and
    shopping_list, which need the internet and clutter Assist. The user step
    stays for provision(), so HA itself creates the owner, person and areas.
    """
    from homeassistant.components.onboarding import (
        STORAGE_KEY,
        STORAGE_VERSION,
    )
    from homeassistant.components.onboarding.const import (
        STEP_USER,
        STEPS,
    )

    store = config_dir / ".storage" / STORAGE_KEY
    if store.exists():
        return False
    store.parent.mkdir(exist_ok=True)
    data = {"done": [step for step in STEPS if step != STEP_USER]}
    store.write_text(
        json.dumps(
            {
                "version": STORAGE_VERSION,
                "minor_version": 1,
                "key": STORAGE_KEY,
                "data": data,
            },
            indent=2,
        )
    )
    return True


# ---- against the running instance --------------------------------------------


@dataclass(frozen=True)
class ToolbeltSettings:
    """The model server to connect Toolbelt to, from TOOLBELT_* variables."""

    base_url: str
    server_kind: str
    api_key: str | None
    model: str | None

    @classmethod
    def from_env(cls, env: dict[str, str]) -> ToolbeltSettings | None:
        base_url = env.get("TOOLBELT_BASE_URL", "").strip()
        if not base_url:
            return None
        return cls(
            base_url=base_url,
            server_kind=env.get("TOOLBELT_SERVER_KIND", "").strip()
            or guess_server_kind(base_url),
            api_key=env.get("TOOLBELT_API_KEY", "").strip() or None,
            model=env.get("TOOLBELT_MODEL", "").strip() or None,
        )


def guess_server_kind(base_url: str) -> str:
    """Pick a server kind only from an unmistakable host or port."""
    parts = urlsplit(base_url)
    if parts.hostname == "api.openai.com":
        return "openai"
    return {11434: "ollama", 1234: "lmstudio"}.get(parts.port or 0, "other")


async def provision(api: HassApi, config_dir: Path, env: dict[str, str]) -> list[str]:
    """Bring the running instance to the dev state; return lines for the banner."""
    lines = [await ensure_owner(api)]
    await api.wait_until_running(RUNNING_TIMEOUT)
    lines.append(await ensure_demo_devices(api, config_dir))
    lines.append(await ensure_toolbelt(api, ToolbeltSettings.from_env(env)))
    return lines


async def ensure_owner(api: HassApi) -> str:
    """Create the owner on a fresh instance, else log in as it."""
    if not (await api.onboarding_status()).get("user"):
        await api.onboard_owner(OWNER.name, OWNER.username, OWNER.password)
        return f"Owner:    created {OWNER.username!r}"
    try:
        await api.login(OWNER.username, OWNER.password)
    except HassApiError as err:
        raise HassApiError(
            f"cannot log in as {OWNER.username!r} ({err}); if you changed its "
            "password, delete config/.storage to start over"
        ) from err
    return f"Owner:    {OWNER.username!r} exists"


async def ensure_demo_devices(api: HassApi, config_dir: Path) -> str:
    """Put demo entities in their areas (if unset), expose them, hide helpers."""
    areas = {
        a["name"].casefold(): a["area_id"]
        for a in await api.ws("config/area_registry/list")
    }
    for name in sorted(set(DEMO_ENTITY_AREAS.values())):
        if name.casefold() not in areas:
            created = await api.ws("config/area_registry/create", name=name)
            areas[name.casefold()] = created["area_id"]

    registry = await api.ws("config/entity_registry/list")
    by_key = {(e["platform"], e["unique_id"]): e for e in registry}
    missing = [
        uid for platform, uid in DEMO_ENTITY_AREAS if (platform, uid) not in by_key
    ]
    if missing:
        raise HassApiError(
            f"demo entities not loaded: {missing}; see home-assistant.log"
        )

    demo_ids = []
    for key, area in DEMO_ENTITY_AREAS.items():
        entry = by_key[key]
        demo_ids.append(entry["entity_id"])
        if entry["area_id"] is None:
            await api.ws(
                "config/entity_registry/update",
                entity_id=entry["entity_id"],
                area_id=areas[area.casefold()],
            )
    await api.ws(
        "homeassistant/expose_entity",
        assistants=["conversation"],
        entity_ids=demo_ids,
        should_expose=True,
    )

    helpers = _helper_entity_ids(config_dir)
    for entry in registry:
        if entry["entity_id"] in helpers and entry["hidden_by"] is None:
            await api.ws(
                "config/entity_registry/update",
                entity_id=entry["entity_id"],
                hidden_by="user",
            )
    return f"Devices:  {len(demo_ids)} demo entities in areas, exposed to Assist"


def _helper_entity_ids(config_dir: Path) -> set[str]:
    """The input_* helpers that back the demo devices (not devices themselves)."""
    package = yaml.safe_load((config_dir / DEMO_DEVICES_FILE).read_text())
    return {
        f"{domain}.{object_id}"
        for domain in ("input_boolean", "input_number")
        for object_id in package.get(domain) or {}
    }


# ---- Toolbelt ---------------------------------------------------------------


class FlowFailed(Exception):
    """A config flow ended without creating or updating the entry."""


async def ensure_toolbelt(api: HassApi, settings: ToolbeltSettings | None) -> str:
    """Add Toolbelt through its config flow and make it the Assist agent."""
    entries = await api.get("/api/config/config_entries/entry?domain=toolbelt")
    if entries:
        ignored = "; TOOLBELT_* ignored (use Reconfigure in the UI)" if settings else ""
        return f"Toolbelt: entry {entries[0]['title']!r} exists{ignored}"
    if settings is None:
        return (
            "Toolbelt: not configured (set TOOLBELT_BASE_URL to add it at start, "
            "or add it in Settings > Devices & services)"
        )

    status, step = await api.request(
        "POST", "/api/config/config_entries/flow", json={"handler": "toolbelt"}
    )
    if status != 200:
        return f"Toolbelt: SKIPPED, HA cannot start its config flow (HTTP {status}: {step})"
    values = {
        "server_kind": settings.server_kind,
        "base_url": settings.base_url,
        "api_key": settings.api_key,
        "model": settings.model,
    }
    try:
        result, used = await run_flow(
            api, "/api/config/config_entries/flow", step, values
        )
    except FlowFailed as err:
        return (
            f"Toolbelt: NOT added, config flow said {err} (server {settings.base_url})"
        )
    entry_id = result["result"]["entry_id"]

    notes = [f"added for {settings.server_kind} server {settings.base_url}"]
    if settings.model and "model" not in used:
        notes.append(await _set_agent_model(api, entry_id, settings.model))
    notes.append(await _make_default_agent(api, entry_id))
    return "Toolbelt: " + "; ".join(notes)


async def run_flow(
    api: HassApi, base: str, step: dict[str, Any], values: dict[str, Any]
) -> tuple[dict[str, Any], set[str]]:
    """Answer each form the way a person in the UI would; return the result.

    A field gets our value if we have one, else its suggested value (what the
    UI pre-fills, e.g. the current setting); any other field is left to HA's
    default. Returns the final step and the names we set.
    """
    used: set[str] = set()
    for _ in range(10):
        kind = step.get("type")
        if kind == "create_entry":
            return step, used
        if kind == "abort":
            if str(step.get("reason", "")).endswith("_successful"):
                return step, used
            raise FlowFailed(f"abort: {step.get('reason')}")
        if kind != "form":
            raise FlowFailed(
                f"step {step.get('step_id')!r} of type {kind!r} needs a person"
            )
        if step.get("errors"):
            raise FlowFailed(f"step {step['step_id']!r}: errors {step['errors']}")
        answer = {}
        for field in step.get("data_schema") or []:
            name = field["name"]
            if values.get(name) is not None:
                answer[name] = values[name]
                used.add(name)
            elif "suggested_value" in (field.get("description") or {}):
                answer[name] = field["description"]["suggested_value"]
        status, step = await api.request(
            "POST", f"{base}/{step['flow_id']}", json=answer
        )
        if status != 200:
            raise FlowFailed(f"HTTP {status}: {step}")
    raise FlowFailed("more than 10 steps")


async def _set_agent_model(api: HassApi, entry_id: str, model: str) -> str:
    """Point the entry's default agent at TOOLBELT_MODEL via its reconfigure flow."""
    subentries = await api.ws("config_entries/subentries/list", entry_id=entry_id)
    agents = [s for s in subentries if s["subentry_type"] == "conversation"]
    if not agents:
        return "no agent subentry to set the model on"
    status, step = await api.request(
        "POST",
        "/api/config/config_entries/subentries/flow",
        json={
            "handler": [entry_id, "conversation"],
            "subentry_id": agents[0]["subentry_id"],
        },
    )
    if status != 200:
        return f"model NOT set (HTTP {status}: {step})"
    try:
        await run_flow(
            api, "/api/config/config_entries/subentries/flow", step, {"model": model}
        )
    except FlowFailed as err:
        return f"model NOT set, agent flow said {err}"
    return f"model {model}"


async def _make_default_agent(api: HassApi, entry_id: str) -> str:
    """Make the entry's first agent the conversation agent of the preferred pipeline."""
    agent = None
    for _ in range(30):
        registry = await api.ws("config/entity_registry/list")
        agent = next(
            (
                e["entity_id"]
                for e in registry
                if e["config_entry_id"] == entry_id
                and e["entity_id"].startswith("conversation.")
            ),
            None,
        )
        if agent:
            break
        await asyncio.sleep(1)
    if agent is None:
        return "no conversation entity appeared, Assist pipeline unchanged"
    listing = await api.ws("assist_pipeline/pipeline/list")
    pipeline = next(
        p for p in listing["pipelines"] if p["id"] == listing["preferred_pipeline"]
    )
    fields = {k: v for k, v in pipeline.items() if k != "id"}
    fields["conversation_engine"] = agent
    await api.ws(
        "assist_pipeline/pipeline/update", pipeline_id=pipeline["id"], **fields
    )
    return f"{agent} is the agent of Assist pipeline {pipeline['name']!r}"
