"""The small interface every memory backend implements, and how facts are shown.

Scope rule: a conversation with an HA user writes that user's memories and reads
them plus the shared ones; a conversation without a user (a voice satellite, an
automation) writes and reads only shared memories. No user ever sees another's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Memory:
    """One remembered fact. ``id`` is what update and delete take."""

    id: str | None
    content: str
    created: str | None = None
    shared: bool = False
    """True when every user sees it (stored in a conversation without a user)."""


class MemoryBackend(ABC):
    """Store, search, update and delete facts, scoped by HA user id."""

    name: str

    @abstractmethod
    async def search(self, user_id: str | None, query: str, limit: int) -> list[Memory]:
        """Best matches first; an empty query lists the most recent facts."""

    @abstractmethod
    async def store(self, user_id: str | None, content: str) -> Memory:
        """Persist a fact; return only once it is durable."""

    @abstractmethod
    async def update(
        self,
        user_id: str | None,
        memory_id: str,
        content: str,
        *,
        may_change_shared: bool = True,
    ) -> Memory:
        """Replace a visible fact's text; MemoryNotFoundError if not visible.

        SharedMemoryLockedError if the fact is shared and may_change_shared is False.
        """

    @abstractmethod
    async def delete(
        self, user_id: str | None, memory_id: str, *, may_change_shared: bool = True
    ) -> Memory:
        """Remove a visible fact and return what it said (same rule for shared)."""

    async def async_close(self) -> None:  # noqa: B027 - optional hook
        """Release connections or threads; default has none."""

    @property
    def erasure_note(self) -> str:
        """After a delete: a sentence for the model if the deleted words are not
        yet overwritten on disk (see ``SqliteDatabase.erasure_note``); else ""."""
        return ""


def normalise_id(memory_id: object) -> str:
    """Accept 12, '12', '#12' or 'id: 12' from a model and return '12'."""
    text = str(memory_id).strip()
    for prefix in ("memory_id", "memory", "id", ":", "=", "#"):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :].strip()
    return text


def format_memories(memories: list[Memory], query: str) -> str:
    """Text for the model: one fact per line with its id, best match first."""
    if not memories:
        about = f" matching '{query}'" if query else ""
        return f"No memories found{about}."
    lines = []
    for memory in memories:
        if memory.id is None:
            lines.append(memory.content)
            continue
        when = f" (saved {memory.created[:10]})" if memory.created else ""
        lines.append(f"- [id {memory.id}] {memory.content}{when}")
    return "Memories, best match first:\n" + "\n".join(lines)
