"""What HACS and hassfest check of a custom integration, checked on every run."""

from __future__ import annotations

import json
from pathlib import Path
import re

ROOT = Path(__file__).parents[1]
INTEGRATION = ROOT / "custom_components" / "toolbelt"


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_manifest_keys_values_and_order() -> None:
    manifest = _json(INTEGRATION / "manifest.json")
    keys = list(manifest)
    # hassfest: domain, name, then the rest alphabetically.
    assert keys[:2] == ["domain", "name"]
    assert keys[2:] == sorted(keys[2:])
    assert manifest["domain"] == "toolbelt"
    assert manifest["name"] == "Toolbelt"
    assert manifest["config_flow"] is True
    assert manifest["dependencies"] == ["conversation"]
    assert manifest["after_dependencies"] == ["assist_pipeline", "intent"]
    assert manifest["integration_type"] == "service"
    assert manifest["iot_class"] == "local_polling"
    assert manifest["codeowners"]
    for key in ("documentation", "issue_tracker"):
        assert manifest[key].startswith("https://")
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])


def test_hacs_json() -> None:
    hacs = _json(ROOT / "hacs.json")
    allowed = {
        "name",
        "content_in_root",
        "zip_release",
        "filename",
        "hide_default_branch",
        "country",
        "homeassistant",
        "hacs",
        "persistent_directory",
    }
    assert set(hacs) <= allowed
    assert hacs["name"] == "Toolbelt"
    assert hacs["homeassistant"] == "2026.2.0"


def test_brand_icon_is_a_png() -> None:
    data = (INTEGRATION / "brand" / "icon.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_translations_match_strings() -> None:
    assert _json(INTEGRATION / "strings.json") == _json(
        INTEGRATION / "translations" / "en.json"
    )


def test_every_flow_step_and_error_has_text() -> None:
    """A step or error the code shows must have a string, or the UI shows a key."""
    strings = _json(INTEGRATION / "strings.json")
    flow = (INTEGRATION / "config_flow.py").read_text()
    for step in re.findall(r'step_id="(\w+)"', flow):
        in_config = step in strings["config"]["step"]
        in_agent = step in strings["config_subentries"]["conversation"]["step"]
        assert in_config or in_agent, step
    for error in re.findall(r'"base": "(\w+)"', flow):
        assert error in strings["config"]["error"], error
    for reason in re.findall(r'reason="(\w+)"', flow):
        assert reason in strings["config_subentries"]["conversation"]["abort"], reason
