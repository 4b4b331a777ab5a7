"""Each tool declares its facts once, on its ``Tool``; every table is derived.

What a user would notice if a fact were wrong: a delete running beside another
call, a memory's text in a posted diagnostics file, a forgotten turn kept in
the history, a read-only tool offered to HA as destructive.
"""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.toolbelt.ha import compat
from custom_components.toolbelt.tools.api import ToolbeltLlmTool
from custom_components.toolbelt.tools.definitions import ALL_TOOLS, TOOLS_BY_NAME
from custom_components.toolbelt.tools.tool import Tool
from custom_components.toolbelt.tools.trace import PERSONAL_TOOLS


def _actions(tool: Tool) -> set[str]:
    action = tool.schema["properties"].get("action", {})
    return set(action.get("enum", ()))


# Every fact of every tool, written out: a new tool fails here until its
# facts are said. (reads, erases, open world, personal, returns outside data,
# has a prompt line, actions with other names, other names of its own.)
FACTS: dict[str, tuple[Any, ...]] = {
    "memory": ({"search"}, {"delete"}, False, True, True, True, {"search", "store", "update", "delete"}, False),
    "history": ({"search", "recent"}, {"forget"}, False, True, True, True, {"search", "recent", "forget"}, False),
    "profile": ({"get"}, {"delete"}, False, True, False, True, {"get", "set", "delete"}, False),
    "self": ({"get"}, set(), False, True, False, False, {"add", "get"}, False),
    "search": (True, set(), True, True, True, True, {"web", "news", "reddit"}, False),
    "web_fetch": (True, set(), True, False, True, True, set(), True),
    "model": ({"list", "current"}, set(), False, False, False, False, {"list", "current", "switch"}, False),
    "time": (True, set(), False, False, False, False, set(), True),
}  # fmt: skip


def test_every_tool_declares_every_fact() -> None:
    declared = {
        tool.name: (
            tool.reads if isinstance(tool.reads, bool) else set(tool.reads),
            set(tool.erases),
            tool.open_world,
            tool.personal,
            tool.returns_outside_data,
            bool(tool.prompt),
            set(tool.action_aliases),
            bool(tool.aliases),
        )
        for tool in ALL_TOOLS
    }
    assert declared == FACTS


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_every_tool_declares_facts_its_schema_can_hold(tool: Tool) -> None:
    actions = _actions(tool)
    if isinstance(tool.reads, frozenset):
        assert tool.reads <= actions, tool.name
    assert tool.erases <= actions, tool.name
    assert not tool.erases & (
        tool.reads if isinstance(tool.reads, frozenset) else set()
    )
    assert tool.prompt == "" or f"`{tool.name}`" in tool.prompt
    assert set(tool.action_aliases) <= actions, tool.name
    assert not (tool.aliases and actions), f"{tool.name}: a name means one action"


# (tool, action): whether the call only reads, so it may run beside others.
READS = {
    ("memory", "search"): True,
    ("memory", "store"): False,
    ("memory", "update"): False,
    ("memory", "delete"): False,
    ("history", "search"): True,
    ("history", "recent"): True,
    ("history", "forget"): False,
    ("profile", "get"): True,
    ("profile", "set"): False,
    ("profile", "delete"): False,
    ("self", "get"): True,
    ("self", "add"): False,
    ("self", "remove"): False,
    ("model", "list"): True,
    ("model", "current"): True,
    ("model", "switch"): False,
    ("search", "web"): True,
    ("search", "news"): True,
    ("search", "reddit"): True,
    ("web_fetch", None): True,
    ("time", None): True,
}


def test_every_action_of_every_tool_is_known_to_read_or_write() -> None:
    declared = {
        (tool.name, action)
        for tool in ALL_TOOLS
        for action in (_actions(tool) or {None})
    }
    assert declared == set(READS)


@pytest.mark.parametrize(("name", "action"), list(READS))
def test_ha_runs_only_reads_side_by_side(name: str, action: str | None) -> None:
    ha_tool = ToolbeltLlmTool(TOOLS_BY_NAME[name], hub=None)  # type: ignore[arg-type]
    arguments: dict[str, Any] = (
        {} if action is None else {"action": f" {action.upper()}"}
    )

    assert ha_tool.is_read_only_call(arguments) is READS[(name, action)]


async def _anything(action: str) -> str:
    """Do anything.

    Args:
        action: what to do.
    """
    return action


def test_an_undeclared_tool_or_action_writes() -> None:
    assert not Tool(_anything).only_reads({"action": "get"})
    sorted_ = Tool(_anything, reads={"get"})
    assert sorted_.only_reads({"action": "get"})
    assert not sorted_.only_reads({"action": "purge"})


def test_ha_sees_each_tools_annotations() -> None:
    if compat.CURRENT.annotations_cls is None:
        pytest.skip("this HA does not annotate tools")
    seen = {
        tool.name: ToolbeltLlmTool(tool, hub=None).annotations  # type: ignore[arg-type]
        for tool in ALL_TOOLS
    }
    assert {name for name, a in seen.items() if a.read_only} == {
        "search",
        "web_fetch",
        "time",
    }
    assert {name for name, a in seen.items() if a.open_world} == {"search", "web_fetch"}


def test_erasing_calls_and_personal_arguments() -> None:
    assert {
        (tool.name, action)
        for tool in ALL_TOOLS
        for action in _actions(tool)
        if tool.erases_with(action)
    } == {("history", "forget"), ("memory", "delete"), ("profile", "delete")}
    assert TOOLS_BY_NAME["memory"].erases_with(" Delete ")
    assert {
        "memory",
        "history",
        "profile",
        "self",
        "search",
        "handoff",
    } == PERSONAL_TOOLS
