"""Legacy tool names, the time-tool rule, references and the trace ring buffer."""

from __future__ import annotations

import pytest

from custom_components.toolbelt.tools.aliases import (
    LEGACY_TOOL_NAMES,
    resolve_tool_call,
    route_call,
    should_offer_time,
)
from custom_components.toolbelt.tools.definitions import TOOLS_BY_NAME
from custom_components.toolbelt.tools.references import References
from custom_components.toolbelt.tools.trace import REDACTED, CallTrace, TraceLog


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        (
            "search_memories",
            {"query": "tea"},
            ("memory", {"query": "tea", "action": "search"}),
        ),
        ("memory_search", {}, ("memory", {"action": "search"})),
        (
            "Store-Memory",
            {"content": "x"},
            ("memory", {"content": "x", "action": "store"}),
        ),
        ("save_memory", {"action": "delete"}, ("memory", {"action": "store"})),
        ("forget", {"memory_id": 3}, ("memory", {"memory_id": 3, "action": "delete"})),
        ("update_memory", {}, ("memory", {"action": "update"})),
        ("web_search", {"query": "q"}, ("search", {"query": "q", "action": "web"})),
        ("news_search", {"query": "q"}, ("search", {"query": "q", "action": "news"})),
        ("search_web", {}, ("search", {"action": "web"})),
        ("fetch_url", {"url": "u"}, ("web_fetch", {"url": "u"})),
        ("get_current_time", {}, ("time", {})),
        ("memory", {"action": "store"}, ("memory", {"action": "store"})),
        ("toolbelt-tools__web_search", {}, ("search", {"action": "web"})),
        ("HassTurnOn", {"name": "x"}, None),
        ("assist__fetch", {}, None),
    ],
)
def test_legacy_names_route(name: str, args: dict, expected: object) -> None:
    """Old names reach the action-based tools; the name's action wins; others are not ours."""
    assert resolve_tool_call(name, args) == expected


def test_route_to_the_offered_name() -> None:
    """Next to Assist our tools are namespaced; a legacy name still finds them."""
    merged = ["assist__HassTurnOn", "toolbelt-tools__memory", "toolbelt-tools__search"]
    assert route_call("store_memory", {"content": "x"}, merged) == (
        "toolbelt-tools__memory",
        {"content": "x", "action": "store"},
    )
    assert route_call("web_search", {}, ["search", "memory"]) == (
        "search",
        {"action": "web"},
    )
    assert route_call("fetch_url", {}, merged) is None
    assert route_call("HassTurnOn", {}, merged) is None


def test_every_legacy_target_exists() -> None:
    """Each legacy name points at a real tool and a valid action."""
    for tool_name, fixed in LEGACY_TOOL_NAMES.values():
        tool = TOOLS_BY_NAME[tool_name]
        if "action" in fixed:
            assert fixed["action"] in tool.schema["properties"]["action"]["enum"]


def test_time_only_without_getdatetime() -> None:
    """Our time tool steps aside when HA's GetDateTime is offered, namespaced or not."""
    assert should_offer_time(["HassTurnOn", "memory"])
    assert not should_offer_time(["GetDateTime"])
    assert not should_offer_time(["assist__GetDateTime", "toolbelt-tools__time"])


def test_references_are_numbered_once_per_url() -> None:
    """A URL keeps its number within a turn."""
    refs = References()
    first = refs.add("A", "https://a.example/x")
    second = refs.add("B", "https://b.example/")
    again = refs.add("A again", "https://a.example/x/")
    assert (first.number, second.number, again.number) == (1, 2, 1)
    assert len(refs) == 2


def test_trace_ring_buffer_and_redaction() -> None:
    """Only the last turns are kept; secrets never leave the trace."""
    secret = "tvly-SECRET-123"
    log = TraceLog(secrets=lambda: [secret], max_turns=3)
    for n in range(5):
        log.turn(f"turn-{n}")
    log.turn("turn-4").calls.append(
        CallTrace(
            tool="search",
            action="web",
            backend="Tavily",
            started="now",
            latency_ms=12.345,
            ok=False,
            error=f"ERROR: BackendAuthError: key {secret} refused",
            arguments={"query": f"leak {secret}", "api_key": "anything"},
        )
    )

    recent = log.recent()

    assert [t["turn_id"] for t in recent] == ["turn-2", "turn-3", "turn-4"]
    assert log.get("turn-0") is None
    call = recent[-1]["calls"][0]
    assert secret not in str(recent)
    assert call["error"] == f"ERROR: BackendAuthError: key {REDACTED} refused"
    assert call["arguments"] == {"query": f"leak {REDACTED}", "api_key": REDACTED}
    assert call["latency_ms"] == 12.3


def test_trace_keeps_remembered_facts_out_of_diagnostics() -> None:
    """Diagnostics end up in public bug reports: memory content shows only its size."""
    log = TraceLog()
    log.turn("t").calls.append(
        CallTrace(
            tool="memory",
            action="store",
            backend="sqlite",
            started="now",
            latency_ms=1.0,
            ok=True,
            arguments={"action": "store", "content": "My PIN is 4711"},
        )
    )
    arguments = log.recent()[0]["calls"][0]["arguments"]
    assert arguments == {"action": "store", "content": "<14 characters>"}
