"""History, profiles and persona notes against a real SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import os
from pathlib import Path
import sqlite3

import pytest
import pytest_asyncio

from custom_components.toolbelt.tools.const import MAX_HISTORY_TURNS
from custom_components.toolbelt.tools.errors import ToolError
from custom_components.toolbelt.tools.history_store import HistoryStore
from custom_components.toolbelt.tools.memory.sqlite import SqliteMemory
from custom_components.toolbelt.tools.persona_store import (
    MAX_NOTES,
    PersonaStore,
    persona_line,
)
from custom_components.toolbelt.tools.profile_store import (
    ProfileStore,
    normalise_key,
    profile_line,
)
from custom_components.toolbelt.tools.sqlite_db import SqliteDatabase

ALICE = "user-alice"
BOB = "user-bob"
SECRET = "zanzibarquokka"


@pytest_asyncio.fixture
async def db(tmp_path: Path) -> AsyncIterator[SqliteDatabase]:
    """One database file shared by every store, closed after the test."""
    database = SqliteDatabase(tmp_path / "toolbelt_memory.db")
    yield database
    await database.async_close()


def file_bytes(db: SqliteDatabase) -> bytes:
    """Everything SQLite keeps on disk for this database: the file and its WAL."""
    data = db.path.read_bytes()
    wal = db.path.with_name(db.path.name + "-wal")
    return data + (wal.read_bytes() if wal.exists() else b"")


async def test_history_is_per_user_and_searchable(db: SqliteDatabase) -> None:
    """Each owner sees only their turns; no-user turns form their own history."""
    history = HistoryStore(db)
    a1 = await history.record(
        ALICE,
        "What is the wifi password?",
        "It is on the router.",
        ["memory"],
        retention_days=30,
    )
    await history.record(
        BOB, "Book a table for the wifi meeting", "Done.", [], retention_days=30
    )
    await history.record(
        None,
        "Turn on the porch light",
        "The porch light is on.",
        ["HassTurnOn", "HassTurnOn"],
        retention_days=30,
    )

    found = await history.search(ALICE, "wifi", 5)
    assert [t.id for t in found] == [a1]
    assert found[0].tools == ("memory",)
    assert [t.user_text for t in await history.search(BOB, "wifi", 5)] == [
        "Book a table for the wifi meeting"
    ]
    shared = await history.recent(None, 5)
    assert [t.answer for t in shared] == ["The porch light is on."]
    assert shared[0].tools == ("HassTurnOn",)
    assert await history.search(None, "wifi", 5) == []

    # Bob guesses Alice's id: nothing of hers is found or deleted.
    assert await history.forget(BOB, turn_id=a1) == []
    assert [t.id for t in await history.recent(ALICE, 5)] == [a1]
    assert await history.counts() == {"turns": 3, "shared_turns": 1, "users": 2}


async def test_forget_really_deletes_rows_index_and_bytes(
    db: SqliteDatabase,
) -> None:
    """After forget, the words are in no query and nowhere in the file or WAL."""
    history = HistoryStore(db)
    keep = await history.record(
        ALICE, "Remind me about the dentist", "Noted.", [], retention_days=30
    )
    await history.record(
        ALICE,
        f"My locker code word is {SECRET}",
        f"I heard {SECRET}.",
        [],
        retention_days=30,
    )
    assert SECRET.encode() in file_bytes(db)

    gone = await history.forget(ALICE, query=SECRET)

    assert [t.user_text for t in gone] == [f"My locker code word is {SECRET}"]
    assert await history.search(ALICE, SECRET, 5) == []
    assert [t.id for t in await history.recent(ALICE, 5)] == [keep]
    assert SECRET.encode() not in file_bytes(db)
    # The FTS index has no trace of the word either (its vocabulary table).

    assert SECRET not in await db.run(vocabulary_of("history_fts"))
    with pytest.raises(ToolError, match="turn_id"):
        await history.forget(ALICE)


def held_files(db_path: str | Path) -> list[str]:
    """The database's files (.db, -wal, -shm) this process holds open."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed since listed
            continue
        if target.startswith(str(db_path)):
            held.append(Path(target).name)
    return sorted(held)


def vocabulary_of(table: str):
    """A query listing every word the FTS index of ``table`` still holds."""

    def vocabulary(conn: sqlite3.Connection) -> list[str]:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_{table} "
            f"USING fts5vocab(main, {table}, row)"
        )
        return [row[0] for row in conn.execute(f"SELECT term FROM temp.v_{table}")]

    return vocabulary


async def test_forget_by_words_deletes_only_turns_holding_every_word(
    db: SqliteDatabase,
) -> None:
    """'the trip to Paris' forgets the Paris turn, not every turn saying 'the'."""
    history = HistoryStore(db)
    for text in (
        "turn on the kitchen light",
        "what is the weather",
        "play some jazz",
        "book the trip to Paris",
        "is Paris nice in May",
    ):
        await history.record(ALICE, text, "Done.", [], retention_days=30)

    # Search ranks by any word, but 'the' and 'to' no longer match everything.
    found = await history.search(ALICE, "the trip to Paris", 10)
    assert [t.user_text for t in found] == [
        "book the trip to Paris",
        "is Paris nice in May",
    ]

    gone = await history.forget(ALICE, query="the trip to Paris")

    assert [t.user_text for t in gone] == ["book the trip to Paris"]
    assert [t.user_text for t in await history.recent(ALICE, 10)] == [
        "is Paris nice in May",
        "play some jazz",
        "what is the weather",
        "turn on the kitchen light",
    ]


async def test_forget_by_words_matching_many_turns_deletes_nothing(
    db: SqliteDatabase,
) -> None:
    """Words in more than three turns are refused: search, then forget by id."""
    history = HistoryStore(db)
    for room in ("kitchen", "hall", "porch", "garage"):
        await history.record(
            ALICE, f"turn on the {room} light", "Done.", [], retention_days=30
        )

    with pytest.raises(ToolError, match="matches 4 past turns") as refused:
        await history.forget(ALICE, query="light")

    assert "forget the turns the user means by turn_id" in str(refused.value)
    assert len(await history.recent(ALICE, 10)) == 4
    assert [t.user_text for t in await history.forget(ALICE, query="porch light")] == [
        "turn on the porch light"
    ]


async def test_retention_and_size_cap_purge_old_turns(db: SqliteDatabase) -> None:
    """Turns past the retention go on the next record; 0 days keeps nothing."""
    history = HistoryStore(db)
    old = await history.record(
        ALICE, "old question", "old answer", [], retention_days=30
    )

    def age(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE history SET created = '2000-01-01T00:00:00+00:00' WHERE id = ?",
            (old,),
        )

    await db.run(age)
    await history.record(BOB, "new question", "new answer", [], retention_days=30)
    assert await history.recent(ALICE, 5) == []
    assert await history.search(ALICE, "old", 5) == []

    assert await history.record(BOB, "x", "y", [], retention_days=0) is None
    assert await history.recent(BOB, 5) == []

    capped = HistoryStore(db, max_turns=3)
    ids = [
        await capped.record(ALICE, f"question {n}", "a", [], retention_days=30)
        for n in range(5)
    ]
    assert [t.id for t in await capped.recent(ALICE, 10)] == ids[:1:-1]
    assert MAX_HISTORY_TURNS >= 1000  # the real cap is generous


async def test_purge_applies_the_retention_without_a_new_turn(
    db: SqliteDatabase, tmp_path: Path
) -> None:
    """purge() (setup, daily) drops old turns of every owner; 0 days drops all."""
    history = HistoryStore(db)
    old = await history.record(
        ALICE, f"old {SECRET}", "old answer", [], retention_days=30
    )
    new = await history.record(None, "new question", "new", [], retention_days=30)

    def age(conn: sqlite3.Connection) -> None:
        conn.execute(
            "UPDATE history SET created = '2000-01-01T00:00:00+00:00' WHERE id = ?",
            (old,),
        )

    await db.run(age)

    assert await history.purge(30) == 1
    assert await history.recent(ALICE, 5) == []
    assert [t.id for t in await history.recent(None, 5)] == [new]
    assert SECRET.encode() not in file_bytes(db)
    assert await history.purge(0) == 1
    assert await history.recent(None, 5) == []

    # No database yet: nothing is created just to purge it.
    fresh = SqliteDatabase(tmp_path / "none" / "toolbelt_memory.db")
    assert await HistoryStore(fresh).purge(30) == 0
    assert not fresh.path.parent.exists()
    await fresh.async_close()


async def test_long_turns_are_clipped(db: SqliteDatabase) -> None:
    """A huge paste is stored cut, never refused (the turn already happened)."""
    history = HistoryStore(db)
    await history.record(ALICE, "x" * 10_000, "y" * 10_000, [], retention_days=30)
    (turn,) = await history.recent(ALICE, 1)
    assert len(turn.user_text) == 2000
    assert len(turn.answer) == 4000
    assert turn.answer.endswith("…")


async def test_profile_is_per_user_and_its_line_is_stable(db: SqliteDatabase) -> None:
    """Keys normalise; Bob never reads or deletes Alice's attributes."""
    profiles = ProfileStore(db)
    await profiles.set(ALICE, "Units", "metric")
    await profiles.set(ALICE, "Preferred Name", "Ali")
    assert await profiles.get(ALICE) == {"preferred_name": "Ali", "units": "metric"}
    line = profile_line(await profiles.get(ALICE))
    assert line == (
        "The user's profile (from the profile tool): preferred_name: Ali; "
        "units: metric."
    )
    # Same rows, same bytes, whatever order they were written in.
    await profiles.set(BOB, "preferred_name", "Bob")
    assert profile_line(await profiles.get(ALICE)) == line

    assert await profiles.get(BOB) == {"preferred_name": "Bob"}
    with pytest.raises(ToolError, match="no attribute 'units'"):
        await profiles.delete(BOB, "units")
    assert (await profiles.get(ALICE))["units"] == "metric"

    assert await profiles.delete(ALICE, "units") == "metric"
    assert await profiles.get(ALICE) == {"preferred_name": "Ali"}
    assert profile_line({}) == ""
    assert normalise_key("  Régime alimentaire ") == "régime_alimentaire"
    with pytest.raises(ToolError, match="key"):
        normalise_key("!!!")
    with pytest.raises(ToolError, match="under 200"):
        await profiles.set(ALICE, "bio", "x" * 201)


async def test_persona_notes_are_per_agent_and_capped(db: SqliteDatabase) -> None:
    """Notes list by id; another agent's ids cannot be removed; at most MAX_NOTES."""
    persona = PersonaStore(db)
    first = await persona.add("agent-a", "I like short answers.")
    again = await persona.add("agent-a", "i like short answers.")
    assert again.id == first.id
    await persona.add("agent-b", "I speak like a pirate.")
    assert persona_line(await persona.get("agent-a")) == (
        "Your own persona notes (from the self tool): (1) I like short answers."
    )
    with pytest.raises(ToolError, match="no note with id"):
        await persona.remove("agent-b", first.id)
    for n in range(MAX_NOTES - 1):
        await persona.add("agent-a", f"Note {n}.")
    with pytest.raises(ToolError, match="remove one first"):
        await persona.add("agent-a", "One too many.")
    removed = await persona.remove("agent-a", first.id)
    assert removed.note == "I like short answers."
    assert len(await persona.get("agent-a")) == MAX_NOTES - 1
    assert persona_line([]) == ""


async def test_profile_delete_leaves_no_bytes(db: SqliteDatabase) -> None:
    """A deleted attribute's value is in neither the file nor its WAL."""
    profiles = ProfileStore(db)
    await profiles.set(ALICE, "units", "metric")
    await profiles.set(ALICE, "nickname", SECRET)
    assert SECRET.encode() in file_bytes(db)

    assert await profiles.delete(ALICE, "nickname") == SECRET

    assert SECRET.encode() not in file_bytes(db)
    assert await profiles.get(ALICE) == {"units": "metric"}


async def test_persona_remove_leaves_no_bytes(db: SqliteDatabase) -> None:
    """A removed note is in neither the file nor its WAL."""
    persona = PersonaStore(db)
    keep = await persona.add("agent-a", "I like short answers.")
    note = await persona.add("agent-a", f"I call the user {SECRET}.")
    assert SECRET.encode() in file_bytes(db)

    await persona.remove("agent-a", note.id)

    assert SECRET.encode() not in file_bytes(db)
    assert await persona.get("agent-a") == [keep]


async def test_memory_delete_leaves_no_bytes_and_no_index_word(
    db: SqliteDatabase,
) -> None:
    """A deleted memory's words are in no file page, no WAL frame, no FTS term."""
    memory = SqliteMemory(db)
    keep = await memory.store(ALICE, "Alice likes tea.")
    fact = await memory.store(ALICE, f"Alice's locker code is {SECRET}.")
    assert SECRET.encode() in file_bytes(db)

    await memory.delete(ALICE, fact.id)

    assert SECRET.encode() not in file_bytes(db)
    assert SECRET not in await db.run(vocabulary_of("memories_fts"))
    assert [m.id for m in await memory.search(ALICE, "", 5)] == [keep.id]


async def test_stores_share_one_file_with_memory(db: SqliteDatabase) -> None:
    """Memory on a shared database is not closed by the store; all tables coexist."""
    memory = SqliteMemory(db)
    history = HistoryStore(db)
    await memory.store(ALICE, "Alice likes tea.")
    await history.record(ALICE, "tea?", "Tea.", ["memory"], retention_days=30)
    await memory.async_close()  # a no-op: the database belongs to its opener
    assert [m.content for m in await memory.search(ALICE, "tea", 5)] == [
        "Alice likes tea."
    ]

    def tables(conn: sqlite3.Connection) -> set[str]:
        return {
            row[0]
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }

    assert {"memories", "history"} <= await db.run(tables)


async def test_a_closed_database_stays_closed(tmp_path: Path) -> None:
    """Work queued before close finishes; work after it (a write queued behind
    the close, a purge) is refused with a reason, and nothing reopens the file."""
    db = SqliteDatabase(tmp_path / "toolbelt_memory.db")
    memory = SqliteMemory(db)
    first = asyncio.ensure_future(memory.store(ALICE, "Alice likes tea."))
    await asyncio.sleep(0)  # on the database thread's queue
    closing = asyncio.ensure_future(db.async_close())
    await asyncio.sleep(0)  # the close is queued behind it

    with pytest.raises(ToolError, match="The Toolbelt database is closed"):
        await memory.store(ALICE, "Alice likes coffee.")
    await closing
    assert (await first).content == "Alice likes tea."
    with pytest.raises(ToolError, match="The Toolbelt database is closed"):
        await HistoryStore(db).purge(30)
    with pytest.raises(ToolError, match="The Toolbelt database is closed"):
        await memory.search(ALICE, "tea", 5)

    assert held_files(db.path) == []
    conn = sqlite3.connect(db.path)
    try:
        rows = conn.execute("SELECT content FROM memories").fetchall()
    finally:
        conn.close()
    assert rows == [("Alice likes tea.",)]
