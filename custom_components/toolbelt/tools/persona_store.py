"""An agent's own persona notes (traits it develops, what it decided about itself).

Keyed by the agent (its config subentry id), shared by everyone who talks to that
agent, capped in number and length. The prompt line lists the notes by id, so it
stays byte-identical from turn to turn until a note is added or removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
import sqlite3

from .errors import ToolError
from .sqlite_db import SqliteDatabase, transaction

MAX_NOTE = 200
MAX_NOTES = 20
_SCHEMA = """
CREATE TABLE IF NOT EXISTS persona_notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    agent TEXT NOT NULL,                  -- the agent's config subentry id
    note TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS persona_notes_agent ON persona_notes(agent, id);
"""


@dataclass(frozen=True, slots=True)
class Note:
    """One persona note; ``id`` is what remove takes."""

    id: int
    note: str


class PersonaStore:
    """get / add / remove one agent's notes."""

    def __init__(self, db: SqliteDatabase) -> None:
        """Register the persona table on the shared database."""
        self._db = db
        db.register_schema(_SCHEMA)

    async def get(self, agent: str) -> list[Note]:
        """The agent's notes, oldest first."""

        def run(conn: sqlite3.Connection) -> list[Note]:
            rows = conn.execute(
                "SELECT id, note FROM persona_notes WHERE agent = ? ORDER BY id",
                (agent,),
            ).fetchall()
            return [Note(row["id"], row["note"]) for row in rows]

        return await self._db.run(run)

    async def add(self, agent: str, note: str) -> Note:
        """Store a note and commit; the same note twice is kept once."""
        note = " ".join(str(note).split())
        if not note:
            raise ToolError("add needs 'note': one short sentence about yourself.")
        if len(note) > MAX_NOTE:
            raise ToolError(
                f"The note is {len(note)} characters; keep it under {MAX_NOTE}."
            )
        now = datetime.now(UTC).isoformat(timespec="seconds")

        def run(conn: sqlite3.Connection) -> Note:
            with transaction(conn):
                row = conn.execute(
                    "SELECT id, note FROM persona_notes "
                    "WHERE agent = ? AND lower(note) = lower(?)",
                    (agent, note),
                ).fetchone()
                if row is not None:
                    return Note(row["id"], row["note"])
                (count,) = conn.execute(
                    "SELECT count(*) FROM persona_notes WHERE agent = ?", (agent,)
                ).fetchone()
                if count >= MAX_NOTES:
                    raise ToolError(
                        f"You already have {MAX_NOTES} notes; remove one first."
                    )
                cur = conn.execute(
                    "INSERT INTO persona_notes(agent, note, created) VALUES (?, ?, ?)",
                    (agent, note, now),
                )
            return Note(int(cur.lastrowid or 0), note)

        return await self._db.run(run)

    async def remove(self, agent: str, note_id: int) -> Note:
        """Delete one of the agent's notes by id, for good, and commit."""

        def run(conn: sqlite3.Connection) -> Note:
            with transaction(conn):
                row = conn.execute(
                    "SELECT id, note FROM persona_notes WHERE agent = ? AND id = ?",
                    (agent, note_id),
                ).fetchone()
                if row is None:
                    raise ToolError(
                        f"You have no note with id {note_id}. Use get to list them."
                    )
                conn.execute("DELETE FROM persona_notes WHERE id = ?", (note_id,))
            self._db.wipe_freed_pages(conn)  # the old note leaves the WAL too
            return Note(row["id"], row["note"])

        return await self._db.run(run)

    async def count(self) -> int:
        """How many notes all agents have (for diagnostics)."""

        def run(conn: sqlite3.Connection) -> int:
            return conn.execute("SELECT count(*) FROM persona_notes").fetchone()[0]

        return await self._db.run(run)


def persona_line(notes: list[Note]) -> str:
    """One stable line for the system prompt; empty when there are no notes."""
    if not notes:
        return ""
    return "Your own persona notes (from the self tool): " + " ".join(
        f"({n.id}) {n.note}" for n in notes
    )
