"""Conversations that have read outside data: pages, search results, memories, past turns.

Profile entries and persona notes go into every later system prompt. Once outside
text has been before the model in a conversation, any later turn of it may act on
that text (the page asked; the user said "yes"), so the profile and self tools
refuse to change them for the rest of that conversation.

A conversation is known by HA's chat session id. The turn (HA context id) is
marked as well: a hand-off passes the same context to another agent, which runs
its own conversation, so the turn carries the mark there; a call made outside
any chat session is known by its turn alone.

Kept in memory only, and bounded: the most recent ids, oldest dropped first
(HA itself ends a conversation after 5 idle minutes).
"""

from __future__ import annotations

from collections import OrderedDict

from homeassistant.core import HomeAssistant
from homeassistant.helpers import chat_session
from homeassistant.util.hass_dict import HassKey

from ..ha.outside_data import holds_outside_data

MAX_IDS = 2000
# Not the tools hub's: a reload (a model switch reloads the entry) keeps the marks.
DATA_OUTSIDE_READERS: HassKey[OutsideReaders] = HassKey("toolbelt_outside_readers")


class OutsideReaders:
    """Ids of conversations and turns that read outside data, newest last."""

    def __init__(self, max_ids: int = MAX_IDS) -> None:
        """Empty; at most max_ids ids are kept."""
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._max_ids = max_ids

    def has_read(self, *ids: str | None) -> bool:
        """Whether any of these conversation or turn ids read outside data."""
        return any(i is not None and i in self._ids for i in ids)

    def share(self, conversation_id: str | None, turn_id: str) -> bool:
        """Whether the conversation or the turn read outside data; if one did,
        both are marked from now on."""
        if not self.has_read(conversation_id, turn_id):
            return False
        self.mark(conversation_id, turn_id)
        return True

    def mark(self, *ids: str | None) -> None:
        """Remember that these ids read outside data."""
        for i in ids:
            if i is None:
                continue
            self._ids[i] = None
            self._ids.move_to_end(i)
        while len(self._ids) > self._max_ids:
            self._ids.popitem(last=False)

    def after_call(self, answer: object, *ids: str | None) -> None:
        """Mark the ids when a call's answer, a result or an error, handed outside
        data to the model (it holds an outside-data block)."""
        if holds_outside_data(str(answer)):
            self.mark(*ids)


def outside_readers(hass: HomeAssistant) -> OutsideReaders:
    """The one set of marks of this HA instance."""
    if (readers := hass.data.get(DATA_OUTSIDE_READERS)) is None:
        readers = hass.data[DATA_OUTSIDE_READERS] = OutsideReaders()
    return readers


def current_conversation_id() -> str | None:
    """The conversation id of the chat session running now, if any.

    HA's LLMContext carries no conversation id (2026.2 and 2026.10 alike); the
    conversation entity and AI Task both run a turn inside a chat session.
    """
    session = chat_session.current_session.get()
    return session.conversation_id if session is not None else None
