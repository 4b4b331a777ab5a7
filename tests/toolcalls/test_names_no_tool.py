"""The parser names no tool of Toolbelt's or HA's: its callers declare them.

A name written in ``toolcalls/`` would be a second home for a tool's facts (a
tool added or renamed on the HA side and forgotten here). Docstrings may show
an HA tool as an example; code may not name one.
"""

from __future__ import annotations

import ast
from pathlib import Path

from homeassistant.helpers import intent

from custom_components.toolbelt.ha.intent_tools import (
    DEVICE_COMMAND_TOOLS,
    HA_TOOL_ALIASES,
    READ_ONLY_TOOLS,
)
from custom_components.toolbelt.tools.definitions import ALL_TOOLS

TOOLCALLS = Path(__file__).parents[2] / "custom_components" / "toolbelt" / "toolcalls"
HA_TOOLS = (
    DEVICE_COMMAND_TOOLS
    | READ_ONLY_TOOLS
    | {alias.tool for alias in HA_TOOL_ALIASES}
    | {n for alias in HA_TOOL_ALIASES for n in alias.names}
    | {v for k, v in vars(intent).items() if k.startswith("INTENT_")}
) - {tool.name for tool in ALL_TOOLS}
TOOLBELT_NAMES = {tool.name for tool in ALL_TOOLS} | {
    name for tool in ALL_TOOLS for alias in tool.alias_groups for name in alias.names
}
# Argument keys models invent (catalog._KEY_ALIASES): "search" and "memory"
# there are keys of any tool's arguments, not our tools.
ARGUMENT_KEY_TABLE = "_KEY_ALIASES"


def _strings(tree: ast.AST) -> list[ast.Constant]:
    """String constants, less docstrings and the argument-key table's keys."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(
            node.value, ast.Dict
        ):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(getattr(t, "id", "") == ARGUMENT_KEY_TABLE for t in targets):
                skipped.update(id(key) for key in node.value.keys)
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skipped
    ]


def test_toolcalls_names_no_toolbelt_or_ha_tool() -> None:
    found = []
    for path in sorted(TOOLCALLS.rglob("*.py")):
        for node in _strings(ast.parse(path.read_text())):
            where = f"{path.relative_to(TOOLCALLS)}:{node.lineno}"
            if node.value in TOOLBELT_NAMES:
                found.append(f"{where}: {node.value}")
            found += [f"{where}: {name}" for name in HA_TOOLS if name in node.value]
    assert found == []


def test_the_check_sees_a_tool_name() -> None:
    """The scan above is not blind: it finds names where code would write them."""
    code = 'RENAMED = {"memorize": "memory"}\nSTOP = "HassTurnOff"\n'
    values = {node.value for node in _strings(ast.parse(code))}
    assert values & TOOLBELT_NAMES == {"memorize", "memory"}
    assert "HassTurnOff" in HA_TOOLS & values
