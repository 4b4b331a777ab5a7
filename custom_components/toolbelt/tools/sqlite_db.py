"""One SQLite file on one thread, shared by every store that lives in it.

Memory, history, profiles and persona notes share ``toolbelt_memory.db``. All
database work runs on one dedicated thread, so the event loop never blocks and
writes from concurrent tool calls are serialised without 'database is locked'.
WAL with synchronous=FULL makes a commit durable: a write returns only after it.
secure_delete overwrites deleted rows on disk, so a forgotten fact is gone from
the file and not only from queries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
import logging
from pathlib import Path
import re
import sqlite3
import threading
from typing import Any, TypeVar

from .errors import ToolError

T = TypeVar("T")
R = TypeVar("R")
_LOGGER = logging.getLogger(__name__)
SCHEMA_VERSION = 2
# Words in almost every sentence: in a ranked search they drown the words that
# matter, and a forget by words must not hinge on them.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "an",
        "and",
        "are",
        "as",
        "asked",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
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
        "said",
        "say",
        "she",
        "that",
        "the",
        "their",
        "they",
        "this",
        "to",
        "told",
        "was",
        "we",
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


class SqliteDatabase:
    """A lazily opened connection to ``path``; each store registers its schema.

    Closed once, it stays closed: work queued before ``async_close`` still runs
    (the thread takes jobs in order, the close last), and any later job is
    refused with a ``ToolError`` that says why, instead of opening the file again.
    """

    def __init__(self, path: str | Path) -> None:
        """Nothing is opened, and no thread started, until the first query."""
        self.path = Path(path)
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="toolbelt_memory"
        )
        self._conn: sqlite3.Connection | None = None
        self._schemas: list[str] = []
        self._applied = 0
        self._used = False
        self._closed: str | None = None
        """Why the database was closed (set on the event loop, never cleared)."""
        self._closing: asyncio.Future[None] | None = None
        self._shut = False
        """The connection is closed for good (set on the database thread)."""
        self._unwiped: set[str] = set()
        """FTS tables that may still hold deleted words ("" stands for the WAL)."""
        self._wipe_error: str | None = None
        """Why the last wipe failed; None once one succeeded."""

    def register_schema(self, schema: str) -> None:
        """CREATE ... IF NOT EXISTS statements, applied before the next query."""
        if schema not in self._schemas:
            self._schemas.append(schema)

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn(connection) on the database thread."""
        return await self._submit(self._with_conn, fn)

    async def run_if_exists(self, fn: Callable[[sqlite3.Connection], T]) -> T | None:
        """Like run, but None (and no file created) when there is no file yet.

        Housekeeping (the retention purge at setup) must not create the file for
        someone who never used the tools.
        """

        def maybe(conn_fn: Callable[[sqlite3.Connection], T]) -> T | None:
            if self._conn is None and not self.path.exists():
                return None
            return self._with_conn(conn_fn)

        return await self._submit(maybe, fn)

    async def _submit(self, job: Callable[[Any], R], fn: Any) -> R:
        if self._closed is not None:
            raise ToolError(self._closed_message())
        self._used = True
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, job, fn)

    def _closed_message(self) -> str:
        return (
            f"The Toolbelt database is closed because {self._closed}, so nothing"
            " was read or changed. Tell the user to try again in a moment."
        )

    def _with_conn(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._shut:
            raise ToolError(self._closed_message())
        try:
            if self._conn is None:
                self._conn = self._open()
            if self._applied < len(self._schemas):
                self._apply_schemas(self._conn)
            if self._unwiped:
                self._wipe(self._conn)
            return fn(self._conn)
        except sqlite3.Error as err:
            raise ToolError(f"The memory database failed: {err}.") from err

    def _open(self) -> sqlite3.Connection:
        # Switching a new file to WAL while another connection sets up the schema
        # can fail at once with "database is locked" (SQLite skips the busy wait to
        # avoid a deadlock), so connections to one file open one at a time.
        with open_lock(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA busy_timeout=10000")
            conn.execute("PRAGMA secure_delete=ON")
            self._applied = 0
            self._apply_schemas(conn)
        # A deletion whose wipe could not finish before (a full disk, a crash)
        # is finished at the first job; on a clean index this costs nothing.
        self._unwiped.update(_fts_tables(conn) | {""})
        return conn

    def _apply_schemas(self, conn: sqlite3.Connection) -> None:
        pending = self._schemas[self._applied :]
        conn.executescript(
            f"BEGIN IMMEDIATE;{''.join(pending)}"
            f"PRAGMA user_version={SCHEMA_VERSION};COMMIT;"
        )
        self._applied += len(pending)

    def wipe_freed_pages(
        self, conn: sqlite3.Connection, fts_table: str | None = None
    ) -> None:
        """After a deletion that must really delete: rebuild the FTS index, checkpoint.

        An FTS5 delete only adds a tombstone; 'optimize' rewrites the index without
        the deleted words (secure_delete zeroes the freed pages). The checkpoint
        moves the WAL into the file and empties it, so no old page image stays
        behind. Tables without a full-text index (profiles, persona notes) pass no
        fts_table.

        It runs after the deletion's commit, so it never raises: the rows are gone
        whatever happens here. What it cannot finish (on a full disk) is retried
        before every later job and at the next open; ``erasure_note`` says so
        until then.
        """
        self._unwiped.update({fts_table or ""})
        self._wipe(conn)

    def _wipe(self, conn: sqlite3.Connection) -> None:
        try:
            for table in sorted(self._unwiped - {""}):
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if busy:
                raise sqlite3.OperationalError("another connection holds the WAL")
        except sqlite3.Error as err:
            if self._wipe_error is None:
                _LOGGER.warning(
                    "Toolbelt could not yet overwrite the space freed by deleted"
                    " rows in %s (%s); the rows are deleted, and the wipe is"
                    " retried before the next database job and at the next start",
                    self.path,
                    err,
                )
            self._wipe_error = str(err)
            return
        if self._wipe_error is not None:
            _LOGGER.info("Toolbelt has now overwritten the space freed by deletions")
        self._unwiped.clear()
        self._wipe_error = None

    @property
    def erasure_note(self) -> str:
        """A sentence for the model after a deletion whose words may still be in
        the file (the wipe failed and waits for a retry); "" when they are not."""
        if not self._unwiped or self._wipe_error is None:
            return ""
        return (
            " It is deleted, but the space it used in the database file could not"
            f" be overwritten yet ({self._wipe_error}); Toolbelt retries before its"
            " next use of the database and at every start."
        )

    async def async_close(self, reason: str = "Toolbelt stopped") -> None:
        """Close the connection on its own thread, then stop the thread, for good.

        ``reason`` ends "The Toolbelt database is closed because …", the error
        every later job gets. The close is queued once, behind the work already
        queued; every call waits for that same close, and a caller that is
        cancelled meanwhile does not stop it (the thread still ends).
        """
        if self._closing is None:
            self._closed = reason
            self._closing = self._queue_close()
        await asyncio.shield(self._closing)
        # The close was the thread's last job, so joining it is immediate.
        self._executor.shutdown(wait=True)

    def _queue_close(self) -> asyncio.Future[None]:
        def close() -> None:
            self._shut = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        loop = asyncio.get_running_loop()
        if not self._used:  # no thread was started, no file opened
            done: asyncio.Future[None] = loop.create_future()
            done.set_result(None)
            return done
        closing = loop.run_in_executor(self._executor, close)
        # No job after the close; the thread ends once it has run.
        self._executor.shutdown(wait=False)
        return closing


class transaction:
    """BEGIN IMMEDIATE ... COMMIT: take the write lock up front, roll back on error."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        """Wrap one connection."""
        self._conn = conn

    def __enter__(self) -> sqlite3.Connection:
        """Start the write transaction."""
        self._conn.execute("BEGIN IMMEDIATE")
        return self._conn

    def __exit__(self, exc_type: object, *_: object) -> None:
        """Commit, or roll back if the block raised."""
        self._conn.execute("ROLLBACK" if exc_type else "COMMIT")


def fts_words(
    query: str, stopwords: frozenset[str] = STOPWORDS, *, match_all: bool = False
) -> str | None:
    """Free text as an FTS5 query of quoted words; None when it has no words.

    Any word matches (OR, for ranked search) unless match_all: then every word
    must be in the row (AND, for deleting). Stopwords are dropped unless the
    query has nothing else.
    """
    words = [w.lower() for w in _WORD.findall(query or "")]
    useful = [w for w in words if w not in stopwords] or words
    if not useful:
        return None
    joiner = " AND " if match_all else " OR "
    return joiner.join(f'"{word}"' for word in dict.fromkeys(useful))


_WORD = re.compile(r"\w+")
_OPEN_LOCKS: dict[str, threading.Lock] = {}
_OPEN_LOCKS_GUARD = threading.Lock()


def _fts_tables(conn: sqlite3.Connection) -> set[str]:
    """The full-text tables in the file (their shadow tables are plain tables)."""
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'"
    ).fetchall()
    return {row[0] for row in rows if _IDENTIFIER.fullmatch(row[0])}


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def open_lock(path: Path) -> threading.Lock:
    """One lock per database file, shared by every store in this process."""
    with _OPEN_LOCKS_GUARD:
        return _OPEN_LOCKS.setdefault(str(path.resolve()), threading.Lock())
