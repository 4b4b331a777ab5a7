"""Finished turns, per HA user, in the memory file with an FTS5 index.

A turn keeps what the user said, the final answer and the names of the tools used,
never a tool's arguments or results. A conversation without an HA user reads and
writes the shared history (owner NULL) and nothing else; a user reads and forgets
only their own turns, whatever id is guessed.

Turns older than the retention are purged (when a turn is recorded, and by the
hub at setup and daily), and each owner keeps at most MAX_HISTORY_TURNS.
Forgetting really deletes: the rows, their FTS index entries (the index is
rebuilt) and the freed pages (secure_delete), then the WAL is emptied.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
import sqlite3

from .const import MAX_HISTORY_TURNS
from .errors import ToolError
from .sqlite_db import SqliteDatabase, fts_words, transaction

MAX_USER_TEXT = 2000
MAX_ANSWER = 4000
# Forget by words deletes at most this many turns; more must go by id.
MAX_FORGET_BY_WORDS = 3
_SCHEMA = """
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a forgotten id stays gone
    owner TEXT,                            -- HA user id; NULL = no user (shared)
    created TEXT NOT NULL,                 -- UTC, ISO 8601
    user_text TEXT NOT NULL,
    answer TEXT NOT NULL,
    tools TEXT NOT NULL DEFAULT ''         -- tool names, comma separated
);
CREATE INDEX IF NOT EXISTS history_owner ON history(owner, id);
CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5(
    user_text, answer, content='history', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS history_ai AFTER INSERT ON history BEGIN
    INSERT INTO history_fts(rowid, user_text, answer)
    VALUES (new.id, new.user_text, new.answer);
END;
CREATE TRIGGER IF NOT EXISTS history_ad AFTER DELETE ON history BEGIN
    INSERT INTO history_fts(history_fts, rowid, user_text, answer)
    VALUES ('delete', old.id, old.user_text, old.answer);
END;
"""


@dataclass(frozen=True, slots=True)
class Turn:
    """One finished turn as the history tool shows it."""

    id: int
    created: str
    user_text: str
    answer: str
    tools: tuple[str, ...] = ()


class HistoryStore:
    """Record, search, list and forget turns of one owner at a time."""

    def __init__(self, db: SqliteDatabase, max_turns: int = MAX_HISTORY_TURNS) -> None:
        """Register the history tables; max_turns is the cap per owner."""
        self._db = db
        self._max_turns = max_turns
        db.register_schema(_SCHEMA)

    async def record(
        self,
        owner: str | None,
        user_text: str,
        answer: str,
        tools: list[str],
        *,
        retention_days: int,
    ) -> int | None:
        """Store a turn (unless retention is 0) and purge what is too old or over cap.

        Returns the new turn's id, or None when nothing was stored.
        """
        created = datetime.now(UTC).isoformat(timespec="seconds")
        cutoff = _cutoff(retention_days)
        user_text = _clip(user_text, MAX_USER_TEXT)
        answer = _clip(answer, MAX_ANSWER)
        names = ",".join(dict.fromkeys(t for t in tools if t))

        def run(conn: sqlite3.Connection) -> int | None:
            new_id = None
            with transaction(conn):
                if retention_days > 0 and (user_text or answer):
                    cur = conn.execute(
                        "INSERT INTO history(owner, created, user_text, answer, tools) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (owner, created, user_text, answer, names),
                    )
                    new_id = cur.lastrowid
                purged = _purge(conn, owner, cutoff, self._max_turns)
            if purged:
                self._db.wipe_freed_pages(conn, "history_fts")
            return new_id

        return await self._db.run(run)

    async def recent(self, owner: str | None, limit: int) -> list[Turn]:
        """The owner's newest turns, newest first."""

        def run(conn: sqlite3.Connection) -> list[Turn]:
            rows = conn.execute(
                "SELECT * FROM history WHERE owner IS ? ORDER BY id DESC LIMIT ?",
                (owner, limit),
            ).fetchall()
            return [_turn(row) for row in rows]

        return await self._db.run(run)

    async def search(self, owner: str | None, query: str, limit: int) -> list[Turn]:
        """The owner's turns matching any of the words, best match first."""
        match = fts_words(query)
        if match is None:
            raise ToolError("search needs 'query': words to look for.")

        def run(conn: sqlite3.Connection) -> list[Turn]:
            rows = conn.execute(
                "SELECT h.* FROM history_fts JOIN history h ON h.id = history_fts.rowid "
                "WHERE history_fts MATCH ? AND h.owner IS ? "
                "ORDER BY bm25(history_fts), h.id DESC LIMIT ?",
                (match, owner, limit),
            ).fetchall()
            return [_turn(row) for row in rows]

        return await self._db.run(run)

    async def forget(
        self, owner: str | None, *, turn_id: int | None = None, query: str = ""
    ) -> list[Turn]:
        """Delete one turn by id, or the few turns holding all the words; return them.

        Only the owner's turns are looked at, so another user's id matches nothing.
        Words match a turn only when every one of them is in it (stopwords
        dropped), and words matching more than MAX_FORGET_BY_WORDS turns delete
        nothing: the model is told to search and forget by id, so a vague request
        cannot wipe unrelated turns.
        """
        match = fts_words(query, match_all=True) if turn_id is None else None
        if turn_id is None and match is None:
            raise ToolError("forget needs 'turn_id' or 'query'.")

        def run(conn: sqlite3.Connection) -> list[Turn]:
            with transaction(conn):
                if turn_id is not None:
                    rows = conn.execute(
                        "SELECT * FROM history WHERE id = ? AND owner IS ?",
                        (turn_id, owner),
                    ).fetchall()
                else:
                    rows = conn.execute(
                        "SELECT h.* FROM history_fts JOIN history h "
                        "ON h.id = history_fts.rowid "
                        "WHERE history_fts MATCH ? AND h.owner IS ?",
                        (match, owner),
                    ).fetchall()
                    if len(rows) > MAX_FORGET_BY_WORDS:
                        raise ToolError(
                            f"'{query}' matches {len(rows)} past turns, too many to "
                            "forget by words; nothing was deleted. Search the history "
                            "first, then forget the turns the user means by turn_id, "
                            "one call per turn."
                        )
                conn.executemany(
                    "DELETE FROM history WHERE id = ?", [(row["id"],) for row in rows]
                )
            if rows:
                self._db.wipe_freed_pages(conn, "history_fts")
            return [_turn(row) for row in rows]

        return await self._db.run(run)

    async def purge(self, retention_days: int) -> int:
        """Delete everyone's turns older than the retention (all when 0), for good.

        Runs at setup and daily, so the retention holds when nobody talks to an
        agent. Does nothing (and creates no file) when there is no database yet.
        """
        cutoff = _cutoff(retention_days)

        def run(conn: sqlite3.Connection) -> int:
            with transaction(conn):
                if cutoff is None:
                    purged = conn.execute("DELETE FROM history").rowcount
                else:
                    purged = conn.execute(
                        "DELETE FROM history WHERE created < ?", (cutoff,)
                    ).rowcount
            if purged:
                self._db.wipe_freed_pages(conn, "history_fts")
            return purged

        return await self._db.run_if_exists(run) or 0

    async def counts(self) -> dict[str, int]:
        """How many turns are kept, in total and for the shared history."""

        def run(conn: sqlite3.Connection) -> dict[str, int]:
            total, shared, owners = conn.execute(
                "SELECT count(*), count(*) - count(owner), count(DISTINCT owner) "
                "FROM history"
            ).fetchone()
            return {"turns": total, "shared_turns": shared, "users": owners}

        return await self._db.run(run)


def _purge(
    conn: sqlite3.Connection, owner: str | None, cutoff: str | None, cap: int
) -> int:
    """Drop turns older than cutoff (everyone's; all when None) and the owner's
    beyond the cap."""
    if cutoff is None:
        return conn.execute("DELETE FROM history").rowcount
    old = conn.execute("DELETE FROM history WHERE created < ?", (cutoff,)).rowcount
    over = conn.execute(
        "DELETE FROM history WHERE owner IS :owner AND id NOT IN ("
        "SELECT id FROM history WHERE owner IS :owner ORDER BY id DESC LIMIT :cap)",
        {"owner": owner, "cap": cap},
    ).rowcount
    return old + over


def _cutoff(retention_days: int) -> str | None:
    """The oldest creation time kept; None when 0 days keeps nothing."""
    if retention_days <= 0:
        return None
    return (datetime.now(UTC) - timedelta(days=retention_days)).isoformat(
        timespec="seconds"
    )


def _turn(row: sqlite3.Row) -> Turn:
    return Turn(
        id=row["id"],
        created=row["created"],
        user_text=row["user_text"],
        answer=row["answer"],
        tools=tuple(t for t in row["tools"].split(",") if t),
    )


def _clip(text: str, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
