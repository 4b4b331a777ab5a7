"""The agent form's tool-call format list: one readable label per format."""

from __future__ import annotations

import json
from pathlib import Path

from custom_components.toolbelt.toolcalls.registry import dialect_names

INTEGRATION = Path(__file__).parents[1] / "custom_components" / "toolbelt"


def _labels(name: str) -> dict[str, str]:
    data = json.loads((INTEGRATION / name).read_text(encoding="utf-8"))
    return data["selector"]["tool_format"]["options"]


def test_every_format_in_the_form_has_a_label() -> None:
    for name in ("strings.json", "translations/en.json"):
        labels = _labels(name)
        assert set(labels) == {"auto", *dialect_names()}, name
        assert all(label.strip() for label in labels.values()), name
