"""The memory database's life: closed in HA's stop stages, closed for good, a fresh
one after a reload; and a delete on a full disk that says what happened.

Every test runs HA's real stop sequence or a real unload, on a real SQLite file
in the test's config dir, and checks what a user would notice: what the model
reads, what the history holds, that no thread or file handle outlives HA.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
import sqlite3
import threading
from typing import Any

from homeassistant.components import conversation
from homeassistant.const import (
    EVENT_HOMEASSISTANT_FINAL_WRITE,
    EVENT_HOMEASSISTANT_STOP,
)
from homeassistant.core import Context, Event, HomeAssistant, callback
from homeassistant.helpers import llm
import pytest

from custom_components.toolbelt.const import DOMAIN
from custom_components.toolbelt.diagnostics import async_get_config_entry_diagnostics
from custom_components.toolbelt.ha.compat import unwrap_tool_result
from custom_components.toolbelt.tools.api import DATA_TOOLS
from custom_components.toolbelt.tools.const import API_ID, MEMORY_DB_FILENAME
from custom_components.toolbelt.tools.sqlite_db import SqliteDatabase, transaction
from tests.ha.conftest import agent_id, speech
from tests.ha.test_personal_tools import add_toolbelt, unload
from tests.openai_server import OpenAIServer
from tests.tools.test_personal_stores import held_files, vocabulary_of

CLOSED_FOR_STOP = (
    "The Toolbelt database is closed because Home Assistant is shutting down"
)
SECRET = "zanzibarquokka"


def database_threads() -> list[str]:
    """Threads of our database that are still alive."""
    return [t.name for t in threading.enumerate() if t.name.startswith("toolbelt_")]


def assert_all_closed(hass: HomeAssistant) -> None:
    """No database thread, no database file handle."""
    assert database_threads() == []
    assert held_files(hass.config.path(MEMORY_DB_FILENAME)) == []


def stored_rows(hass: HomeAssistant, sql: str) -> list[tuple[Any, ...]]:
    """Read the file itself, as the next start would (the hub is closed)."""
    conn = sqlite3.connect(hass.config.path(MEMORY_DB_FILENAME))
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


async def kept_api(hass: HomeAssistant, user_id: str | None = None) -> llm.APIInstance:
    """The tools API instance of one conversation, which HA 2026.11 keeps."""
    return await llm.async_get_api(
        hass,
        API_ID,
        llm.LLMContext(
            platform=DOMAIN,
            context=Context(user_id=user_id),
            language="en",
            assistant="conversation",
            device_id=None,
        ),
    )


async def call(api: llm.APIInstance, name: str, **args: Any) -> str:
    """What the model reads of one call: the result or the error text."""
    result = await api.async_call_tool(llm.ToolInput(tool_name=name, tool_args=args))
    data, _failed = unwrap_tool_result(result)
    return str(data.get("result") or data.get("error"))


def finish_turn_during(
    hass: HomeAssistant, event_type: str, turn: asyncio.Future[Any]
) -> list[bool]:
    """Hold HA's stop stage of ``event_type`` until the turn ends, as a slow model
    would; returns [whether the turn had ended when the stage began]."""
    seen: list[bool] = []

    async def wait_for_turn(_event: Event) -> None:
        seen.append(turn.done())
        await asyncio.wait([turn])

    hass.bus.async_listen_once(event_type, wait_for_turn)
    return seen


def start_turn(hass: HomeAssistant, text: str) -> asyncio.Task[Any]:
    """A voice turn in flight (no user), as a satellite's pipeline runs it."""
    return asyncio.ensure_future(
        conversation.async_converse(
            hass, text, None, Context(), agent_id=agent_id(hass)
        )
    )


# HA's chat session helper schedules its cleanup when a session ends, even one
# ending after HA stopped: that timer is HA's, not ours.
@pytest.mark.parametrize("expected_lingering_timers", [True])
async def test_a_turn_that_ends_after_stop_is_recorded_then_the_database_closes(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A turn still running when HA fires its stop event is recorded in the
    history; the database closes in the final-write stage, inside HA's stop, and
    nothing of it outlives HA."""
    await add_toolbelt(hass, openai_server)
    openai_server.reply_text("It is sunny.", delay=1.0)
    turn = start_turn(hass, "What is the weather like?")
    ended_at_stop = finish_turn_during(hass, EVENT_HOMEASSISTANT_STOP, turn)
    await openai_server.requests_seen(1)

    await hass.async_stop()

    assert ended_at_stop == [False]
    assert speech(await turn) == "It is sunny."
    assert_all_closed(hass)
    assert stored_rows(hass, "SELECT user_text, answer FROM history") == [
        ("What is the weather like?", "It is sunny.")
    ]
    assert "still running after final writes" not in caplog.text


@pytest.mark.parametrize("expected_lingering_timers", [True])
async def test_nothing_reopens_the_database_after_ha_stopped(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """After the final-write stage: a conversation's tool call is told the database
    is closed, diagnostics say so, and a turn that ends then is logged as not
    recorded; none of them reopens the file."""
    entry = await add_toolbelt(hass, openai_server)
    api = await kept_api(hass)
    assert (
        await call(api, "memory", action="store", content="Bins go out on Tuesday.")
    ).startswith("Stored memory 1")
    openai_server.reply_text("The bins go out on Tuesday.", delay=1.0)
    turn = start_turn(hass, "When do the bins go out?")
    ended_at_final_write = finish_turn_during(
        hass, EVENT_HOMEASSISTANT_FINAL_WRITE, turn
    )
    await openai_server.requests_seen(1)

    await hass.async_stop()

    assert ended_at_final_write == [False]
    assert speech(await turn) == "The bins go out on Tuesday."
    late = await call(api, "memory", action="store", content="Feed the cat.")
    assert late.startswith(f"ERROR: ToolError: {CLOSED_FOR_STOP}")
    assert "nothing was read or changed" in late
    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    assert diagnostics["stored"]["error"].startswith(CLOSED_FOR_STOP)
    await hass.async_block_till_done()
    assert_all_closed(hass)
    assert (
        "Toolbelt could not record the turn in the history: " + CLOSED_FOR_STOP
        in caplog.text
    )
    assert stored_rows(hass, "SELECT content FROM memories") == [
        ("Bins go out on Tuesday.",)
    ]
    assert stored_rows(hass, "SELECT count(*) FROM history") == [(0,)]


async def test_a_call_after_unload_is_refused_and_a_reload_opens_a_fresh_database(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """A conversation that outlives an unload gets a readable error, not a store on
    a database nobody closes; the reloaded entry opens the file again and works."""
    entry = await add_toolbelt(hass, openai_server)
    api = await kept_api(hass)
    await call(api, "memory", action="store", content="Bins go out on Tuesday.")

    await unload(hass, entry)
    assert_all_closed(hass)
    late = await call(api, "memory", action="store", content="Feed the cat.")

    assert late.startswith(
        "ERROR: ToolError: The Toolbelt database is closed because the Toolbelt"
        " integration was unloaded"
    )
    assert_all_closed(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    fresh = await kept_api(hass)
    assert (await call(fresh, "memory", action="store", content="Feed the cat.")) == (
        "Stored memory 2 for everyone in the home: Feed the cat."
    )
    found = await call(fresh, "memory", action="search", query="")
    assert "[id 2] Feed the cat." in found
    assert "[id 1] Bins go out on Tuesday." in found
    await unload(hass, entry)
    assert_all_closed(hass)


async def test_an_unload_still_closing_when_ha_stops_is_waited_for(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """HA waits at most 10 s for an unload's close, and its stop does not wait for
    tasks started before it: a close still queued behind a slow database job (a
    loaded machine) is waited for in the final-write stage, not cut off, so the
    database thread and its files do not outlive HA."""
    entry = await add_toolbelt(hass, openai_server)
    api = await kept_api(hass)
    await call(api, "memory", action="store", content="Bins go out on Tuesday.")
    slow_job_may_end = threading.Event()
    slow_job = asyncio.ensure_future(
        hass.data[DATA_TOOLS].database().run(lambda _: slow_job_may_end.wait(5))
    )
    unloading = asyncio.ensure_future(hass.config_entries.async_unload(entry.entry_id))
    while DATA_TOOLS in hass.data:  # noqa: ASYNC110 - the unload has queued the close once it drops the hub
        await asyncio.sleep(0.01)

    @callback
    def end_slow_job_soon(_event: Event) -> None:
        hass.loop.call_later(0.2, slow_job_may_end.set)

    hass.bus.async_listen_once(EVENT_HOMEASSISTANT_FINAL_WRITE, end_slow_job_soon)
    await hass.async_stop()

    assert "still running after final writes" not in caplog.text
    assert_all_closed(hass)
    assert await slow_job is True
    assert await unloading is True
    assert stored_rows(hass, "SELECT content FROM memories") == [
        ("Bins go out on Tuesday.",)
    ]


async def rest_of_final_write(
    hass: HomeAssistant, started_before: set[Any]
) -> list[str]:
    """HA's stop once it has fired the final-write event: wait for the tasks made
    since the stop began (not ``started_before``), then name the earlier tasks
    still running, which HA logs as cut off."""
    await asyncio.sleep(0)
    while pending := [
        t for t in hass._tasks - started_before if not t.done()
    ]:  # the set HA's stop waits for
        await asyncio.wait(pending)
    return [t.get_coro().__qualname__ for t in started_before if not t.done()]


async def test_a_close_that_has_ended_but_not_returned_when_ha_stops_is_waited_for(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The unload's close has ended on the database thread, but the unload's task
    has not woken up to return yet (a loop turn or two on a loaded machine; a
    fresh-clone CI run caught it) when HA's final-write stage begins: the stage
    still ends only after that task has returned, so HA logs nothing as cut off."""
    entry = await add_toolbelt(hass, openai_server)
    api = await kept_api(hass)
    await call(api, "memory", action="store", content="Bins go out on Tuesday.")
    stage: list[asyncio.Task[list[str]]] = []
    close = SqliteDatabase.async_close

    async def close_then_wake_late(self: SqliteDatabase, reason: str) -> None:
        first = self._closing is None  # only the unload's own close is late
        await close(self, reason)
        if first:
            before = set(hass._tasks)  # HA's stop does not wait for these
            hass.bus.async_fire_internal(EVENT_HOMEASSISTANT_FINAL_WRITE)
            stage.append(hass.loop.create_task(rest_of_final_write(hass, before)))
            for _ in range(3):
                await asyncio.sleep(0)

    monkeypatch.setattr(SqliteDatabase, "async_close", close_then_wake_late)
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert await stage[0] == []
    assert_all_closed(hass)
    assert stored_rows(hass, "SELECT content FROM memories") == [
        ("Bins go out on Tuesday.",)
    ]


def fill(table: str, owner: str, count: int) -> Callable[[sqlite3.Connection], None]:
    """A job that adds ``count`` varied rows to ``table`` (and its FTS index): a
    home that has used Toolbelt for a while."""
    now = datetime.now(UTC).isoformat(timespec="seconds")

    def run(conn: sqlite3.Connection) -> None:
        words = [f"word{n} garden{n * 7} kettle{n % 97}" for n in range(count)]
        with transaction(conn):
            if table == "memories":
                conn.executemany(
                    "INSERT INTO memories(owner, content, created, updated) "
                    "VALUES (?, ?, ?, ?)",
                    [(owner, f"Fact {w}.", now, now) for w in words],
                )
            else:
                conn.executemany(
                    "INSERT INTO history(owner, created, user_text, answer) "
                    "VALUES (?, ?, ?, ?)",
                    [(owner, now, f"Asked {w}", f"Answered {w}") for w in words],
                )

    return run


def disk_room(pages: int | None) -> Callable[[sqlite3.Connection], None]:
    """Leave the file room for ``pages`` more pages (None: no limit), as a disk
    with that much free space would: SQLite itself fails a write past it with
    SQLITE_FULL ("database or disk is full"), at whichever step needs the room."""

    def run(conn: sqlite3.Connection) -> None:
        count = conn.execute("PRAGMA page_count").fetchone()[0]
        limit = 2_000_000_000 if pages is None else count + pages
        conn.execute(f"PRAGMA max_page_count = {limit}").fetchone()

    return run


def file_bytes(hass: HomeAssistant) -> bytes:
    """Everything SQLite keeps on disk for the database: the file and its WAL."""
    db = Path(hass.config.path(MEMORY_DB_FILENAME))
    wal = db.with_name(db.name + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


FULL = (
    "It is deleted, but the space it used in the database file could not be"
    " overwritten yet (database or disk is full); Toolbelt retries before its next"
    " use of the database and at every start."
)


async def test_a_delete_on_a_full_disk_says_what_happened_and_the_wipe_is_retried(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer, hass_admin_user
) -> None:
    """With room for the deletion's commit but not for rewriting the index: the
    model is told the memory or turn is deleted and what is still pending, not
    that the delete failed; the wipe finishes once there is room, or at the next
    start."""
    entry = await add_toolbelt(hass, openai_server)
    user = hass_admin_user.id
    api = await kept_api(hass, user)
    db = hass.data[DATA_TOOLS].database()
    await db.run(fill("memories", user, 2000))
    stored = await call(api, "memory", action="store", content=f"Code {SECRET}.")
    memory_id = stored.split()[2]

    await db.run(disk_room(4))
    deleted = await call(api, "memory", action="delete", memory_id=memory_id)

    assert deleted.startswith(f"Deleted memory {memory_id}. {FULL} It said:\n")
    assert "No memories found" in await call(
        api, "memory", action="search", query=SECRET
    )
    assert SECRET.encode() in file_bytes(hass)  # as the model was told
    await db.run(disk_room(None))  # room again
    await call(api, "memory", action="search", query="kettle5")
    assert SECRET.encode() not in file_bytes(hass)
    assert SECRET not in await db.run(vocabulary_of("memories_fts"))

    # History: the room comes back only with the next start.
    await db.run(fill("history", user, 2000))
    await db.run(
        lambda conn: conn.execute(
            "INSERT INTO history(owner, created, user_text, answer) "
            "VALUES (?, ?, ?, 'Noted.')",
            (user, datetime.now(UTC).isoformat(), f"My locker word is {SECRET}"),
        )
    )
    await db.run(disk_room(4))
    forgot = await call(api, "history", action="forget", query=SECRET)
    assert forgot.startswith("Deleted 1 past turn(s) (ids 2001). " + FULL)
    await unload(hass, entry)
    assert SECRET.encode() in file_bytes(hass)

    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()  # the purge at start-up opens the file
    assert SECRET.encode() not in file_bytes(hass)
    db = hass.data[DATA_TOOLS].database()
    assert SECRET not in await db.run(vocabulary_of("history_fts"))
    await unload(hass, entry)
