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


PACKAGE = LOOP.parent
# The HA-free core; the parser CLI (toolcalls/__main__.py) is an application
# that gives the core Toolbelt's tool names, as the HA side does.
CORE = ("loop", "toolcalls")
HA_SIDE = ("ha", "tools")


def _package_imports(path: Path) -> list[str]:
    """The package modules a file imports, as dotted names inside the package."""
    here = path.relative_to(PACKAGE).parent.parts
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(here[: len(here) - node.level + 1])
            found.append(".".join([*base, *(node.module or "").split(".")]).strip("."))
    return found


def test_the_core_imports_nothing_of_the_ha_side() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}: {module}"
        for folder in CORE
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        if path.relative_to(PACKAGE).as_posix() != "toolcalls/__main__.py"
        for module in _package_imports(path)
        if module.split(".")[0] in HA_SIDE
    ]
    assert found == []


def test_the_check_sees_an_import_of_the_ha_side() -> None:
    main = PACKAGE / "toolcalls" / "__main__.py"
    assert "tools.definitions" in _package_imports(main)
