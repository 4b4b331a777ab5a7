"""What history keeps: no erasing requests, one turn per hand-off, the retention
applied even when nobody talks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
import sqlite3

from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.toolbelt.tools.api import DATA_TOOLS
from custom_components.toolbelt.tools.const import (
    CONF_HISTORY_DAYS,
    SUBENTRY_TYPE_TOOLS,
)
from tests.ha.conftest import async_add_toolbelt, speech
from tests.ha.test_handoff import agent_of, converse as converse_with, set_targets
from tests.ha.test_personal_tools import (
    TOOLS_ONLY,
    add_toolbelt,
    converse,
    tool_result,
    unload,
)
from tests.openai_server import OpenAIServer


async def recorded(hass: HomeAssistant, user: str | None) -> list[str]:
    """The user's words of every recorded turn, newest first."""
    turns = await hass.data[DATA_TOOLS].stores().history.recent(user, 20)
    return [t.user_text for t in turns]


async def age_turns(hass: HomeAssistant, days: int, *texts: str) -> None:
    """Make the turns with these words look ``days`` old."""
    created = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")

    def run(conn: sqlite3.Connection) -> None:
        conn.executemany(
            "UPDATE history SET created = ? WHERE user_text = ?",
            [(created, text) for text in texts],
        )

    await hass.data[DATA_TOOLS].database().run(run)


async def test_a_forget_request_is_not_recorded_either(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, hass_admin_user
) -> None:
    """After 'forget what I said about my divorce', neither turn is in history."""
    entry = await add_toolbelt(hass, openai_server)
    user = hass_admin_user.id
    openai_server.reply_text("I am sorry to hear that.")
    await converse(hass, "My divorce hearing is on Monday.", user)
    openai_server.reply_tool_calls(
        [{"name": "history", "arguments": {"action": "forget", "query": "divorce"}}]
    )
    openai_server.reply_text("I have forgotten it.")
    forgot = await converse(hass, "Forget what I said about my divorce.", user)
    assert speech(forgot) == "I have forgotten it."
    assert tool_result(openai_server, 2).startswith("Deleted 1 past turn(s) for good")

    openai_server.reply_tool_calls(
        [{"name": "history", "arguments": {"action": "recent"}}]
    )
    openai_server.reply_text("We have not talked before.")
    await converse(hass, "What did we talk about?", user)

    assert tool_result(openai_server, 4) == "No past conversations are recorded yet."
    assert await recorded(hass, user) == ["What did we talk about?"]
    await unload(hass, entry)


async def test_memory_and_profile_deletes_are_not_recorded(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, hass_admin_user
) -> None:
    """A turn that deleted a memory (even by the old name 'forget') or a profile
    attribute leaves no history; the turn that stored them does."""
    entry = await add_toolbelt(hass, openai_server)
    user = hass_admin_user.id
    stores = hass.data[DATA_TOOLS].stores()
    await stores.profiles.set(user, "nickname", "Bunny")
    openai_server.reply_tool_calls(
        [{"name": "memory", "arguments": {"action": "store", "content": "PIN 4711"}}]
    )
    openai_server.reply_text("Stored.")
    await converse(hass, "Remember my PIN is 4711.", user)
    openai_server.reply_tool_calls([{"name": "forget", "arguments": {"memory_id": 1}}])
    openai_server.reply_text("Forgotten.")
    await converse(hass, "Forget my PIN 4711.", user)
    openai_server.reply_tool_calls(
        [{"name": "profile", "arguments": {"action": "delete", "key": "nickname"}}]
    )
    openai_server.reply_text("Deleted.")
    await converse(hass, "Stop calling me Bunny.", user)

    assert tool_result(openai_server, 3).startswith("Deleted memory 1")
    assert tool_result(openai_server, 5).startswith("Deleted 'nickname'")
    assert await recorded(hass, user) == ["Remember my PIN is 4711."]
    await unload(hass, entry)


async def test_old_turns_are_purged_daily_without_a_new_turn(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, hass_admin_user
) -> None:
    """Nobody talks for a day: the turn past the retention is gone anyway."""
    entry = await add_toolbelt(hass, openai_server)
    user = hass_admin_user.id
    openai_server.reply_text("Noted.")
    await converse(hass, "My old secret.", user)
    openai_server.reply_text("Noted.")
    await converse(hass, "Something recent.", user)
    await age_turns(hass, 31, "My old secret.")
    assert await recorded(hass, user) == ["Something recent.", "My old secret."]

    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(days=1, seconds=1))
    await hass.async_block_till_done()

    assert await recorded(hass, user) == ["Something recent."]
    assert len(openai_server.requests) == 2  # no turn was needed
    await unload(hass, entry)


def tools_subentry(entry: MockConfigEntry):
    """The entry's Toolbelt tools subentry."""
    return next(
        s for s in entry.subentries.values() if s.subentry_type == SUBENTRY_TYPE_TOOLS
    )


async def test_a_shorter_retention_applies_when_saved(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, hass_admin_user
) -> None:
    """Lowering the retention purges at once; 0 days empties the history."""
    entry = await add_toolbelt(hass, openai_server)
    user = hass_admin_user.id
    for text in ("Ten days ago.", "Yesterday."):
        openai_server.reply_text("Noted.")
        await converse(hass, text, user)
    await age_turns(hass, 10, "Ten days ago.")
    await age_turns(hass, 1, "Yesterday.")

    for days, kept in ((7, ["Yesterday."]), (0, [])):
        subentry = tools_subentry(entry)
        hass.config_entries.async_update_subentry(
            entry, subentry, data={**subentry.data, CONF_HISTORY_DAYS: days}
        )
        await hass.async_block_till_done()  # the reload and its purge
        assert await recorded(hass, user) == kept
    assert len(openai_server.requests) == 2
    await unload(hass, entry)


async def test_a_handed_off_turn_is_recorded_once_with_the_final_answer(
    hass: HomeAssistant, ha_ready, openai_server_factory
) -> None:
    """Two Toolbelt agents with our tools: only the first one records the turn."""
    server_a = await openai_server_factory()
    server_b = await openai_server_factory()
    entry_a = await async_add_toolbelt(hass, server_a, llm_hass_api=TOOLS_ONLY)
    entry_b = await async_add_toolbelt(hass, server_b, llm_hass_api=TOOLS_ONLY)
    a, b = agent_of(hass, entry_a), agent_of(hass, entry_b)
    await set_targets(hass, entry_a, [b])
    server_a.reply_tool_calls([{"name": "handoff", "arguments": {"agent": b}}])
    server_b.reply_text("It is 21 degrees in the lounge.")

    result = await converse_with(hass, "how warm is it here?", a)
    await hass.async_block_till_done()

    assert speech(result) == "It is 21 degrees in the lounge."
    turns = await hass.data[DATA_TOOLS].stores().history.recent(None, 10)
    assert [(t.user_text, t.answer, t.tools) for t in turns] == [
        ("how warm is it here?", "It is 21 degrees in the lounge.", ("handoff",))
    ]
    await unload(hass, entry_b)
    await unload(hass, entry_a)
