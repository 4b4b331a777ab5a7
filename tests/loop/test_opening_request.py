"""The opening request (what a warm-up sends) is the first request a turn sends.

Built by the loop's own code, so the server sees the same bytes: messages,
tools, constraints and every other field, in every format.
"""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.toolbelt.ha import intent_tools as ha_tools
from custom_components.toolbelt.loop import LoopSettings, ToolLoop
from tests.loop.conftest import TOOLS, Harness

SETTINGS: dict[str, dict[str, Any]] = {
    "native": {},
    "hermes": {"tool_format": "hermes"},
    "react": {"tool_format": "react"},
    "native, required first": {
        "tool_choice": "required_first",
        "constraints": ("tool_choice",),
    },
    "hermes, grammar": {
        "tool_format": "hermes",
        "tool_choice": "required_first",
        "constraints": ("grammar",),
    },
}


@pytest.mark.parametrize("settings", list(SETTINGS.values()), ids=list(SETTINGS))
async def test_the_opening_request_is_the_turns_first(
    harness: Harness, settings: dict[str, Any]
) -> None:
    loop = ToolLoop(
        harness.backend,
        harness.house,
        LoopSettings(model="test-model", timeout=5, **settings),
        state=harness.state,
    )
    messages = [
        {"role": "system", "content": "You are a test assistant."},
        {"role": "user", "content": "hello"},
    ]
    guidance = ha_tools.device_guidance(t["function"]["name"] for t in TOOLS)
    harness.server.reply_text("Hi.")
    harness.server.reply_text("Hi.")

    opening = loop.opening_request(messages, TOOLS, guidance=guidance)
    async for _delta in harness.backend.complete(opening):
        pass
    events = [e async for e in loop.run(messages, TOOLS, guidance=guidance)]

    assert events
    sent, first = harness.server.requests
    assert sent.body == first.body
    assert "You are a test assistant." in sent.messages[0]["content"]
