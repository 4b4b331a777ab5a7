"""The agent form's tool-call format list: one readable label per format."""

from __future__ import annotations

import json
from pathlib import Path

from custom_components.toolbelt.toolcalls.registry import dialect_names

INTEGRATION = Path(__file__).parents[1] / "custom_components" / "toolbelt"
# The formats issue 23 added; their labels are words, never ICU syntax.
ISSUE_23 = ("olmo3", "minicpm", "apriel", "longcat", "internlm", "gigachat")


def _labels(name: str) -> dict[str, str]:
    data = json.loads((INTEGRATION / name).read_text(encoding="utf-8"))
    return data["selector"]["tool_format"]["options"]


def test_every_format_in_the_form_has_a_label() -> None:
    for name in ("strings.json", "translations/en.json"):
        labels = _labels(name)
        assert set(labels) == {"auto", *dialect_names()}, name
        assert all(label.strip() for label in labels.values()), name


def test_new_format_labels_are_words_the_frontend_can_render() -> None:
    """HA's frontend reads a label as an ICU message: <, >, { and } break it
    ("Translation error"), so the markup is named in words."""
    for name in ("strings.json", "translations/en.json"):
        labels = _labels(name)
        for dialect in ISSUE_23:
            assert not set(labels[dialect]) & set("<>{}"), (name, labels[dialect])
