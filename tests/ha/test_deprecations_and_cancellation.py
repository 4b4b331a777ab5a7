"""What HA checks of an integration on its current release, run on every lane.

A turn that uses Assist and our own tools makes HA log no deprecation (tools
return ToolResult and name their integration, nothing reads the deprecated
``ToolResultContent.tool_result``), and a turn that is cancelled half-way
leaves nothing running: the autouse leak check in tests/conftest.py fails any
test that leaves an async generator for the GC, and HA's harness fails one
that leaves a task.
"""

from __future__ import annotations

import asyncio
import logging

from homeassistant.core import HomeAssistant
from homeassistant.helpers import frame, llm
import pytest

from tests.ha.conftest import async_add_toolbelt, async_converse, bare, speech
from tests.openai_server import OpenAIServer

DEPRECATION_WORDS = ("deprecat", "without an integration", "report_usage", "breaks in")


async def test_a_turn_with_assist_and_our_tools_logs_no_deprecation(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.DEBUG)
    # HA reports each deprecation once per process: forget earlier tests' reports.
    monkeypatch.setattr(frame, "_REPORTED_INTEGRATIONS", set(), raising=False)
    entry = await async_add_toolbelt(
        hass, openai_server, llm_hass_api=[llm.LLM_API_ASSIST, "toolbelt_tools"]
    )
    openai_server.reply_text("Hello.")
    await async_converse(hass, "hello")
    names = {t["function"]["name"] for t in openai_server.requests[0].tools}
    memory = next(n for n in names if bare(n) == "memory")
    turn_on = next(n for n in names if bare(n) == "HassTurnOn")
    openai_server.reply_tool_calls(
        [
            {"name": memory, "arguments": {"action": "store", "content": "Tea at 5"}},
            {"name": turn_on, "arguments": {"name": "Kitchen light"}},
        ]
    )
    openai_server.reply_text("Done.")

    result = await async_converse(hass, "remember tea at 5 and light the kitchen")
    await hass.async_block_till_done()

    assert speech(result) == "Done."
    assert hass.states.get("light.kitchen_light").state == "on"
    results = [m for m in openai_server.requests[-1].messages if m["role"] == "tool"]
    assert "Stored memory" in results[0]["content"]
    assert "Kitchen light" in results[1]["content"]
    noisy = [
        f"{record.name}: {record.getMessage()}"
        for record in caplog.records
        # asyncio's slow-callback warning names this test, which says "deprecation".
        if record.name != "asyncio"
        and (
            any(word in record.getMessage().lower() for word in DEPRECATION_WORDS)
            or record.name == "homeassistant.helpers.frame"
        )
    ]
    assert noisy == []
    # Unloading the last entry closes the memory database and its thread.
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()


async def test_a_cancelled_turn_leaves_nothing_running(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """The user walks away mid-answer: the turn stops and the stream is closed."""
    openai_server.reply_text(
        "One two three.", chunks=["One", " two", " three."], chunk_delay=30
    )
    turn = hass.async_create_task(async_converse(hass, "count to three"))
    async with asyncio.timeout(10):
        while not (openai_server.requests and openai_server.requests[0].chunks):  # noqa: ASYNC110 - the server records, it does not signal
            await asyncio.sleep(0.01)

    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn
    await hass.async_block_till_done()

    # The agent still answers the next turn on the same server.
    openai_server.reply_text("Still here.")
    assert speech(await async_converse(hass, "hello")) == "Still here."
