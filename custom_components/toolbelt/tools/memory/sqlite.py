"""The embedded memory: a table in the SQLite file, FTS5 index ranked by BM25.

The file, its thread and its durability rules are ``sqlite_db.SqliteDatabase``'s:
store() returns only after the commit is on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
import sqlite3
from typing import TypeVar

from ..errors import MemoryNotFoundError, SharedMemoryLockedError, ToolError
from ..sqlite_db import SqliteDatabase, fts_words, transaction
from .base import Memory, MemoryBackend, normalise_id

T = TypeVar("T")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    owner TEXT,                      -- HA user id; NULL = shared by everyone
    content TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_owner ON memories(owner);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    content, content='memories', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content)
    VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF content ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content)
    VALUES ('delete', old.id, old.content);
    INSERT INTO memories_fts(rowid, content) VALUES (new.id, new.content);
END;
"""
_VISIBLE = "(m.owner IS NULL OR m.owner = :user)"
MAX_CONTENT = 2000


class SqliteMemory(MemoryBackend):
    """Memories in a SQLite file (created on first use).

    Given a path, the store owns its database and closes it; given a shared
    SqliteDatabase, whoever opened the database closes it.
    """

    name = "sqlite"

    def __init__(self, path_or_db: str | Path | SqliteDatabase) -> None:
        """Register the memory tables on the (possibly shared) database."""
        self._owns_db = not isinstance(path_or_db, SqliteDatabase)
        self._db = (
            path_or_db
            if isinstance(path_or_db, SqliteDatabase)
            else SqliteDatabase(path_or_db)
        )
        self._db.register_schema(_SCHEMA)

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.run(fn)

    async def search(self, user_id: str | None, query: str, limit: int) -> list[Memory]:
        """BM25-ranked facts visible to user_id; newest first for an empty query."""
        match = _fts_query(query)

        def run(conn: sqlite3.Connection) -> list[Memory]:
            if match is None:
                rows = conn.execute(
                    f"SELECT * FROM memories m WHERE {_VISIBLE} "
                    "ORDER BY m.updated DESC, m.id DESC LIMIT :limit",
                    {"user": user_id, "limit": limit},
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT m.* FROM memories_fts JOIN memories m "
                    "ON m.id = memories_fts.rowid "
                    f"WHERE memories_fts MATCH :match AND {_VISIBLE} "
                    "ORDER BY bm25(memories_fts), m.id DESC LIMIT :limit",
                    {"user": user_id, "match": match, "limit": limit},
                ).fetchall()
            return [_memory(row) for row in rows]

        return await self._run(run)

    async def store(self, user_id: str | None, content: str) -> Memory:
        """Insert and commit; an identical fact already stored is returned as is."""
        content = _clean_content(content)
        now = datetime.now(UTC).isoformat(timespec="seconds")

        def run(conn: sqlite3.Connection) -> Memory:
            with transaction(conn):
                row = conn.execute(
                    "SELECT * FROM memories WHERE owner IS :user "
                    "AND lower(content) = lower(:content)",
                    {"user": user_id, "content": content},
                ).fetchone()
                if row is not None:
                    return _memory(row)
                cur = conn.execute(
                    "INSERT INTO memories(owner, content, created, updated) "
                    "VALUES (:user, :content, :now, :now)",
                    {"user": user_id, "content": content, "now": now},
                )
                return Memory(
                    id=str(cur.lastrowid),
                    content=content,
                    created=now,
                    shared=user_id is None,
                )

        return await self._run(run)

    async def update(
        self,
        user_id: str | None,
        memory_id: str,
        content: str,
        *,
        may_change_shared: bool = True,
    ) -> Memory:
        """Replace the text of a visible fact and commit."""
        content = _clean_content(content)
        row_id = _row_id(memory_id)
        now = datetime.now(UTC).isoformat(timespec="seconds")

        def run(conn: sqlite3.Connection) -> Memory:
            with transaction(conn):
                row = _changeable_row(conn, user_id, row_id, may_change_shared)
                conn.execute(
                    "UPDATE memories SET content = :content, updated = :now "
                    "WHERE id = :id",
                    {"content": content, "now": now, "id": row_id},
                )
            return Memory(
                id=str(row_id),
                content=content,
                created=row["created"],
                shared=row["owner"] is None,
            )

        return await self._run(run)

    async def delete(
        self, user_id: str | None, memory_id: str, *, may_change_shared: bool = True
    ) -> Memory:
        """Delete a visible fact and commit; its text is then nowhere in the file."""
        row_id = _row_id(memory_id)

        def run(conn: sqlite3.Connection) -> Memory:
            with transaction(conn):
                row = _changeable_row(conn, user_id, row_id, may_change_shared)
                conn.execute("DELETE FROM memories WHERE id = ?", (row_id,))
            # The fact's words leave the index, the freed pages and the WAL.
            self._db.wipe_freed_pages(conn, "memories_fts")
            return _memory(row)

        return await self._run(run)

    async def async_close(self) -> None:
        """Close the database if this store opened it."""
        if self._owns_db:
            await self._db.async_close()

    @property
    def erasure_note(self) -> str:
        """Whether a delete's words still wait to be overwritten on disk."""
        return self._db.erasure_note


def _visible_row(
    conn: sqlite3.Connection, user_id: str | None, row_id: int
) -> sqlite3.Row:
    row = conn.execute(
        f"SELECT * FROM memories m WHERE m.id = :id AND {_VISIBLE}",
        {"id": row_id, "user": user_id},
    ).fetchone()
    if row is None:
        raise MemoryNotFoundError(
            f"There is no memory with id {row_id}. Search first to get the id."
        )
    return row


def _changeable_row(
    conn: sqlite3.Connection, user_id: str | None, row_id: int, may_change_shared: bool
) -> sqlite3.Row:
    row = _visible_row(conn, user_id, row_id)
    if row["owner"] is None and not may_change_shared:
        raise SharedMemoryLockedError
    return row


def _memory(row: sqlite3.Row) -> Memory:
    return Memory(
        id=str(row["id"]),
        content=row["content"],
        created=row["created"],
        shared=row["owner"] is None,
    )


def _row_id(memory_id: str) -> int:
    text = normalise_id(memory_id)
    # ASCII digits only ("²" is a digit to str.isdigit), and within SQLite's range.
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise MemoryNotFoundError(
            f"'{memory_id}' is not a memory id; ids are numbers shown by a search."
        )
    return int(text)


def _clean_content(content: str) -> str:
    content = " ".join(str(content).split())
    if not content:
        raise ToolError("There is nothing to remember: 'content' is empty.")
    if len(content) > MAX_CONTENT:
        raise ToolError(
            f"The fact is {len(content)} characters; keep a memory under "
            f"{MAX_CONTENT} characters (one fact per memory)."
        )
    return content


def _fts_query(query: str) -> str | None:
    """Turn free text into an FTS5 OR-query of quoted words; None lists recent."""
    return fts_words(query)
