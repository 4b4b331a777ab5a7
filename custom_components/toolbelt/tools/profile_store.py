"""Attributes of an HA user (name to use, units, diet, ...), in the memory file.

Keyed by the HA user id: a user reads and changes only their own. The prompt line
is built from the stored rows in key order, so it is byte-identical from turn to
turn until the profile itself changes (the prompt prefix stays cacheable).
"""

from __future__ import annotations

from datetime import UTC, datetime
import re
import sqlite3

from .errors import ToolError
from .sqlite_db import SqliteDatabase, transaction

MAX_KEY = 40
MAX_VALUE = 200
MAX_ATTRIBUTES = 20
_SCHEMA = """
CREATE TABLE IF NOT EXISTS profiles (
    owner TEXT NOT NULL,                  -- HA user id
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (owner, key)
);
"""
_NOT_KEY = re.compile(r"[\W_]+")


class ProfileStore:
    """get / set / delete one user's attributes."""

    def __init__(self, db: SqliteDatabase) -> None:
        """Register the profile table on the shared database."""
        self._db = db
        db.register_schema(_SCHEMA)

    async def get(self, owner: str) -> dict[str, str]:
        """All attributes, sorted by key."""

        def run(conn: sqlite3.Connection) -> dict[str, str]:
            rows = conn.execute(
                "SELECT key, value FROM profiles WHERE owner = ? ORDER BY key",
                (owner,),
            ).fetchall()
            return {row["key"]: row["value"] for row in rows}

        return await self._db.run(run)

    async def set(self, owner: str, key: str, value: str) -> tuple[str, str]:
        """Store one attribute and commit; returns the (key, value) as stored."""
        key = normalise_key(key)
        value = " ".join(str(value).split())
        if not value:
            raise ToolError("set needs 'value'; use delete to remove an attribute.")
        if len(value) > MAX_VALUE:
            raise ToolError(
                f"The value is {len(value)} characters; keep it under {MAX_VALUE}."
            )
        now = datetime.now(UTC).isoformat(timespec="seconds")

        def run(conn: sqlite3.Connection) -> tuple[str, str]:
            with transaction(conn):
                count, exists = conn.execute(
                    "SELECT count(*), sum(key = ?) FROM profiles WHERE owner = ?",
                    (key, owner),
                ).fetchone()
                if not exists and count >= MAX_ATTRIBUTES:
                    raise ToolError(
                        f"The profile already has {MAX_ATTRIBUTES} attributes; "
                        "delete one first."
                    )
                conn.execute(
                    "INSERT INTO profiles(owner, key, value, updated) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT(owner, key) "
                    "DO UPDATE SET value = excluded.value, updated = excluded.updated",
                    (owner, key, value, now),
                )
            return key, value

        return await self._db.run(run)

    async def delete(self, owner: str, key: str) -> str:
        """Remove one attribute for good and commit; returns the value it had."""
        key = normalise_key(key)

        def run(conn: sqlite3.Connection) -> str:
            with transaction(conn):
                row = conn.execute(
                    "SELECT value FROM profiles WHERE owner = ? AND key = ?",
                    (owner, key),
                ).fetchone()
                if row is None:
                    raise ToolError(
                        f"The profile has no attribute '{key}'. Use get to list them."
                    )
                conn.execute(
                    "DELETE FROM profiles WHERE owner = ? AND key = ?", (owner, key)
                )
            self._db.wipe_freed_pages(conn)  # the old value leaves the WAL too
            return row["value"]

        return await self._db.run(run)

    async def count_users(self) -> int:
        """How many users have a profile (for diagnostics)."""

        def run(conn: sqlite3.Connection) -> int:
            return conn.execute(
                "SELECT count(DISTINCT owner) FROM profiles"
            ).fetchone()[0]

        return await self._db.run(run)


def normalise_key(key: str) -> str:
    """'Preferred Name' -> 'preferred_name'; ERROR text when nothing is left."""
    text = _NOT_KEY.sub("_", str(key).strip().lower()).strip("_")
    if not text:
        raise ToolError(
            "set and delete need 'key': a short attribute name such as "
            "preferred_name, units or diet."
        )
    if len(text) > MAX_KEY:
        raise ToolError(f"The key is too long; keep it under {MAX_KEY} characters.")
    return text


def profile_line(attributes: dict[str, str]) -> str:
    """One stable line for the system prompt; empty when there is no profile."""
    if not attributes:
        return ""
    pairs = "; ".join(f"{key}: {attributes[key]}" for key in sorted(attributes))
    return f"The user's profile (from the profile tool): {pairs}."
