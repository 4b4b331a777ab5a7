"""The loop is HA-free: no Home Assistant import, and no HA tool known by name."""

from __future__ import annotations

import ast
from pathlib import Path

from custom_components.toolbelt.ha.intent_tools import (
    DEVICE_COMMAND_TOOLS,
    READ_ONLY_TOOLS,
)

LOOP = Path(__file__).parents[2] / "custom_components" / "toolbelt" / "loop"


def test_loop_neither_imports_ha_nor_names_its_tools() -> None:
    ha_names = DEVICE_COMMAND_TOOLS | READ_ONLY_TOOLS
    found = []
    for path in sorted(LOOP.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom | ast.Import):
                modules = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [alias.name for alias in node.names]
                )
                found += [
                    f"{path.name}: {m}"
                    for m in modules
                    if m.startswith("homeassistant")
                ]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found += [f"{path.name}: {n}" for n in ha_names if n in node.value]
    assert found == []
