"""The embedded memory against a real SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
import sqlite3

import pytest
import pytest_asyncio

from custom_components.toolbelt.tools.errors import MemoryNotFoundError, ToolError
from custom_components.toolbelt.tools.memory.sqlite import SqliteMemory

ALICE = "user-alice"
BOB = "user-bob"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the memory file lives for this test."""
    return tmp_path / "memory.db"


@pytest_asyncio.fixture
async def store(db_path: Path) -> AsyncIterator[SqliteMemory]:
    """An open store, closed (thread joined) after the test."""
    memory = SqliteMemory(db_path)
    yield memory
    await memory.async_close()


async def test_store_search_update_delete_round_trip(store: SqliteMemory) -> None:
    """Facts come back ranked with ids; update and delete work by that id."""
    await store.store(ALICE, "Alice drinks her coffee black with no sugar.")
    await store.store(ALICE, "Alice's sister Marie lives in Lyon.")
    await store.store(ALICE, "The garage door code is changed every spring.")

    found = await store.search(ALICE, "how does alice take her coffee?", 5)
    assert found[0].content == "Alice drinks her coffee black with no sugar."
    coffee_id = found[0].id
    assert coffee_id
    assert coffee_id.isdigit()

    updated = await store.update(
        ALICE, coffee_id, "Alice drinks her coffee with oat milk."
    )
    assert updated.id == coffee_id
    found = await store.search(ALICE, "coffee", 5)
    assert [m.content for m in found] == ["Alice drinks her coffee with oat milk."]

    removed = await store.delete(ALICE, f"#{coffee_id}")
    assert removed.content == "Alice drinks her coffee with oat milk."
    assert await store.search(ALICE, "coffee", 5) == []
    with pytest.raises(MemoryNotFoundError):
        await store.delete(ALICE, coffee_id)


async def test_ranking_prefers_the_better_match(store: SqliteMemory) -> None:
    """BM25: the fact matching more (and rarer) query words ranks first."""
    await store.store(None, "The kids go to bed at eight on school nights.")
    await store.store(None, "The dog is walked at seven in the morning.")
    await store.store(None, "The dog's vet is Dr. Keller in the village.")

    found = await store.search(None, "when is the dog walked", 3)

    assert found[0].content == "The dog is walked at seven in the morning."
    assert {m.content for m in found} == {
        "The dog is walked at seven in the morning.",
        "The dog's vet is Dr. Keller in the village.",
    }


async def test_stemming_and_odd_queries(store: SqliteMemory) -> None:
    """'dogs' finds 'dog'; FTS syntax in a query is treated as words, not operators."""
    await store.store(None, "Our dog is called Biscuit.")

    assert (await store.search(None, "dogs", 3))[
        0
    ].content == "Our dog is called Biscuit."
    for query in ['what "is" the dog\'s name?', "dog AND OR NOT *", "NEAR(dog", "-dog"]:
        assert (await store.search(None, query, 3))[
            0
        ].content == "Our dog is called Biscuit."
    assert await store.search(None, "zebra", 3) == []


async def test_empty_query_lists_recent(store: SqliteMemory) -> None:
    """No query: the most recent facts, newest first."""
    for n in range(4):
        await store.store(None, f"Fact number {n}.")

    found = await store.search(None, "", 2)

    assert [m.content for m in found] == ["Fact number 3.", "Fact number 2."]


async def test_per_user_isolation(store: SqliteMemory) -> None:
    """A user's memories are invisible and untouchable for others; shared ones are seen by all."""
    mine = await store.store(ALICE, "Alice is allergic to peanuts.")
    shared = await store.store(None, "The wifi password is on the fridge.")
    assert not mine.shared
    assert shared.shared

    assert [m.content for m in await store.search(ALICE, "peanuts allergic", 5)] == [
        "Alice is allergic to peanuts."
    ]
    assert await store.search(BOB, "peanuts allergic", 5) == []
    assert await store.search(None, "peanuts allergic", 5) == []
    assert [m.id for m in await store.search(BOB, "wifi password", 5)] == [shared.id]
    assert [m.id for m in await store.search(ALICE, "wifi password", 5)] == [shared.id]

    assert mine.id is not None
    with pytest.raises(MemoryNotFoundError):
        await store.update(BOB, mine.id, "Alice loves peanuts.")
    with pytest.raises(MemoryNotFoundError):
        await store.delete(None, mine.id)
    assert (await store.search(ALICE, "peanuts", 5))[
        0
    ].content == "Alice is allergic to peanuts."


async def test_concurrent_writes_are_all_kept(
    store: SqliteMemory, db_path: Path
) -> None:
    """Many parallel stores, from one store object and a second one on the same file."""
    other = SqliteMemory(db_path)
    try:
        results = await asyncio.gather(
            *(
                store.store(ALICE, f"Parallel fact {n} from the first store.")
                for n in range(40)
            ),
            *(
                other.store(BOB, f"Parallel fact {n} from the second store.")
                for n in range(40)
            ),
        )
    finally:
        await other.async_close()

    ids = [m.id for m in results]
    assert len(set(ids)) == 80
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 80
        assert (
            conn.execute(
                "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'parallel'"
            ).fetchone()[0]
            == 80
        )


async def test_stored_is_committed_before_reported(
    store: SqliteMemory, db_path: Path
) -> None:
    """Once store() returns, an independent connection sees the fact (it is durable)."""
    saved = await store.store(ALICE, "The spare key is under the blue pot.")

    with sqlite3.connect(db_path) as conn:
        row = conn.execute(
            "SELECT owner, content FROM memories WHERE id = ?", (int(saved.id or 0),)
        ).fetchone()
    assert row == (ALICE, "The spare key is under the blue pot.")


async def test_memories_survive_a_new_store(db_path: Path) -> None:
    """A restarted HA (a new store on the same file) finds earlier facts."""
    first = SqliteMemory(db_path)
    await first.store(None, "Grandma visits on Sundays.")
    await first.async_close()

    second = SqliteMemory(db_path)
    try:
        found = await second.search(None, "when does grandma visit", 3)
    finally:
        await second.async_close()
    assert found[0].content == "Grandma visits on Sundays."


async def test_duplicates_and_bad_input(store: SqliteMemory) -> None:
    """The same fact twice keeps one row; empty or bad ids give readable errors."""
    first = await store.store(None, "Bins go out on Tuesday.")
    again = await store.store(None, "  bins go out   on tuesday. ")
    assert again.id == first.id
    assert len(await store.search(None, "", 10)) == 1

    with pytest.raises(ToolError, match="nothing to remember"):
        await store.store(None, "   ")
    with pytest.raises(MemoryNotFoundError, match="not a memory id"):
        await store.delete(None, "the bins one")
    with pytest.raises(ToolError, match="under 2000 characters"):
        await store.store(None, "x" * 2001)
