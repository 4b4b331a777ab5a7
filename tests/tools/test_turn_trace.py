"""A turn's record: numbered references and the redacted trace ring buffer."""

from __future__ import annotations

from custom_components.toolbelt.tools.references import References
from custom_components.toolbelt.tools.trace import REDACTED, CallTrace, TraceLog


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
            error=f"ERROR: ServiceAuthError: key {secret} refused",
            arguments={
                "query": f"leak {secret}",
                "kind": "web",
                "api_key": "anything",
            },
        )
    )

    recent = log.recent()

    assert [t["turn_id"] for t in recent] == ["turn-2", "turn-3", "turn-4"]
    assert log.get("turn-0") is None
    call = recent[-1]["calls"][0]
    assert secret not in str(recent)
    assert call["error"] == f"ERROR: ServiceAuthError: key {REDACTED} refused"
    # A search query can be as personal as a memory: only its length shows.
    assert call["arguments"] == {
        "query": "<20 characters>",
        "kind": "web",
        "api_key": REDACTED,
    }
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


def test_trace_hides_personal_arguments_under_any_name() -> None:
    """A persona note sent as 'trait' or a profile value as 'val' is a length too;
    ids, limits and actions stay readable for debugging."""
    log = TraceLog()
    for tool, arguments in (
        ("self", {"action": "add", "trait": "I know Sam drinks"}),
        ("profile", {"action": "set", "attribute": "health", "val": "asthma"}),
        ("history", {"action": "forget", "turn_id": 7, "limit": 3}),
    ):
        log.turn("t").calls.append(
            CallTrace(tool, "x", "sqlite", "now", 1.0, True, arguments=arguments)
        )
    shown = [call["arguments"] for call in log.recent()[0]["calls"]]
    assert shown == [
        {"action": "add", "trait": "<17 characters>"},
        {"action": "set", "attribute": "<6 characters>", "val": "<6 characters>"},
        {"action": "forget", "turn_id": "7", "limit": "3"},
    ]
