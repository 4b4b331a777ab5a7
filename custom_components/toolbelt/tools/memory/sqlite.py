"""The embedded memory: one SQLite file with an FTS5 index ranked by BM25.

All database work runs on one dedicated thread, so the event loop never blocks and
writes from concurrent tool calls are serialised without 'database is locked'. WAL
with synchronous=FULL makes a commit durable: store() returns only after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
import re
import sqlite3
import threading
from typing import TypeVar

from ..errors import MemoryNotFoundError, SharedMemoryLockedError, ToolError
from .base import Memory, MemoryBackend, normalise_id

T = TypeVar("T")
SCHEMA_VERSION = 1
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
# Words that match almost every fact and would drown the ones that matter.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "have",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "that",
        "the",
        "this",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
        "with",
        "you",
        "your",
    ]
)
MAX_CONTENT = 2000


class SqliteMemory(MemoryBackend):
    """Memories in ``path`` (created on first use)."""

    name = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="toolbelt_memory"
        )
        self._conn: sqlite3.Connection | None = None

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._with_conn, fn)

    def _with_conn(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        try:
            if self._conn is None:
                self._conn = self._open()
            return fn(self._conn)
        except sqlite3.Error as err:
            raise ToolError(f"The memory database failed: {err}.") from err

    def _open(self) -> sqlite3.Connection:
        # Switching a new file to WAL while another connection sets up the schema
        # can fail at once with "database is locked" (SQLite skips the busy wait to
        # avoid a deadlock), so connections to one file open one at a time.
        with _open_lock(self._path):
            return self._open_unlocked()

    def _open_unlocked(self) -> sqlite3.Connection:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self._path, timeout=10, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA busy_timeout=10000")
        conn.executescript(
            f"BEGIN IMMEDIATE;{_SCHEMA}PRAGMA user_version={SCHEMA_VERSION};COMMIT;"
        )
        return conn

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
            with _transaction(conn):
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
            with _transaction(conn):
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
        """Delete a visible fact and commit."""
        row_id = _row_id(memory_id)

        def run(conn: sqlite3.Connection) -> Memory:
            with _transaction(conn):
                row = _changeable_row(conn, user_id, row_id, may_change_shared)
                conn.execute("DELETE FROM memories WHERE id = ?", (row_id,))
            return _memory(row)

        return await self._run(run)

    async def async_close(self) -> None:
        """Close the connection on its own thread, then stop the thread."""

        def close() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, close)
        # The queue is empty by now, so joining the thread is immediate.
        self._executor.shutdown(wait=True)


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT: take the write lock up front, roll back on error."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self._conn.execute("BEGIN IMMEDIATE")
        return self._conn

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._conn.execute("ROLLBACK" if exc_type else "COMMIT")


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
    words = [w.lower() for w in re.findall(r"\w+", query or "")]
    useful = [w for w in words if w not in _STOPWORDS] or words
    if not useful:
        return None
    return " OR ".join(f'"{word}"' for word in dict.fromkeys(useful))


_OPEN_LOCKS: dict[str, threading.Lock] = {}
_OPEN_LOCKS_GUARD = threading.Lock()


def _open_lock(path: Path) -> threading.Lock:
    """One lock per database file, shared by every store in this process."""
    with _OPEN_LOCKS_GUARD:
        return _OPEN_LOCKS.setdefault(str(path.resolve()), threading.Lock())
