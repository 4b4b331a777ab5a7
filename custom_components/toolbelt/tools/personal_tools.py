"""The `history`, `profile` and `self` tools: what the home said, who the user is,
who the agent is. Each is one typed function; the docstring is the prompt.

Every write is committed to the SQLite file before the tool says it is stored.
"""

from __future__ import annotations

from typing import Literal

from ..ha.outside_data import outside
from .agents import NOT_A_TOOLBELT_AGENT
from .context import ToolContext
from .errors import PersonaLockedError, ToolError
from .history_store import Turn
from .persona_store import MAX_NOTES
from .tool import Tool

HistoryAction = Literal["search", "recent", "forget"]
ProfileAction = Literal["get", "set", "delete"]
SelfAction = Literal["get", "add", "remove"]

_NO_USER_PROFILE = (
    "Profiles belong to a Home Assistant user, and this conversation has no user "
    "(a voice satellite or an automation). Tell the user to set it from the Home "
    "Assistant app, where they are logged in."
)


async def history(
    ctx: ToolContext,
    action: HistoryAction,
    query: str | None = None,
    turn_id: int | None = None,
    limit: int = 5,
) -> str:
    """Past conversations with this user: what they said and what you answered.

    Search it when the user refers to an earlier conversation; forget turns the
    user wants erased, by id (search first) or by words that are all in the turn.

    Args:
        action: search, recent or forget.
        query: Words to look for (search); words all in the turns to forget.
        turn_id: Id of a turn from search or recent (forget).
        limit: Most turns to return (search, recent).
    """
    ctx.backend = "sqlite"
    store = ctx.services.stores.history
    limit = max(1, min(limit, 20))
    if action == "recent":
        turns = await store.recent(ctx.user_id, limit)
        return _turns_text(turns, "No past conversations are recorded yet.")
    if action == "search":
        if not (query or "").strip():
            raise ToolError("search needs 'query': words to look for.")
        turns = await store.search(ctx.user_id, query or "", limit)
        return _turns_text(turns, f"No past conversation matches '{query}'.")
    if turn_id is None and not (query or "").strip():
        raise ToolError("forget needs 'turn_id' (from search or recent) or 'query'.")
    gone = await store.forget(ctx.user_id, turn_id=turn_id, query=query or "")
    if not gone:
        what = f"id {turn_id}" if turn_id is not None else f"'{query}'"
        return f"No past conversation of this user matches {what}; nothing deleted."
    ids = ", ".join(str(t.id) for t in gone)
    if note := ctx.services.stores.database.erasure_note:
        return f"Deleted {len(gone)} past turn(s) (ids {ids}).{note}"
    return f"Deleted {len(gone)} past turn(s) for good (ids {ids})."


def _turns_text(turns: list[Turn], empty: str) -> str:
    if not turns:
        return empty
    from homeassistant.util import dt as dt_util  # here: see definitions.py

    lines = []
    for turn in turns:
        when = dt_util.parse_datetime(turn.created)
        stamp = dt_util.as_local(when).strftime("%Y-%m-%d %H:%M") if when else ""
        tools = f"\n  tools used: {', '.join(turn.tools)}" if turn.tools else ""
        lines.append(
            f"- [turn {turn.id}] {stamp}\n  user: {turn.user_text}\n"
            f"  you: {turn.answer}{tools}"
        )
    # Answers may repeat what a page or a search result said.
    return outside("Past turns:\n" + "\n".join(lines), "history")


def _refuse_after_outside_data(ctx: ToolContext, what: str) -> None:
    """Refuse a change to standing prompt text in a conversation that read outside data.

    Profile lines and persona notes go into every later system prompt; text that a
    page, a search result, a stored memory or a recalled answer put before the
    model must not become one of them, in this turn or a later one ("yes, do
    that").
    """
    if ctx.read_outside_data:
        raise ToolError(
            f"{what} cannot be changed in a conversation that read web pages, search"
            " results, stored memories or past conversations, because text from"
            " outside could have asked for it. Tell the user; they can ask for it"
            " again in a new conversation."
        )


async def profile(
    ctx: ToolContext,
    action: ProfileAction,
    key: str | None = None,
    value: str | None = None,
) -> str:
    """The current user's profile: name to use, units, language, diet and the like.

    Set an attribute when the user states a lasting preference about themselves.

    Args:
        action: get, set or delete.
        key: Attribute name, e.g. preferred_name, units, diet (set, delete).
        value: The attribute's value (set).
    """
    ctx.backend = "sqlite"
    if ctx.user_id is None:
        raise ToolError(_NO_USER_PROFILE)
    store = ctx.services.stores.profiles
    if action == "get":
        attributes = await store.get(ctx.user_id)
        if not attributes:
            return "The user's profile is empty."
        pairs = "\n".join(f"- {k}: {v}" for k, v in attributes.items())
        return f"The user's profile:\n{pairs}"
    if not (key or "").strip():
        raise ToolError(f"{action} needs 'key': the attribute name.")
    _refuse_after_outside_data(ctx, "The user's profile")
    if action == "set":
        if not (value or "").strip():
            raise ToolError("set needs 'value'; use delete to remove an attribute.")
        stored_key, stored = await store.set(ctx.user_id, key or "", value or "")
        return f"Stored in the user's profile: {stored_key} = {stored}."
    old = await store.delete(ctx.user_id, key or "")
    note = ctx.services.stores.database.erasure_note
    return f"Deleted '{key}' (was: {old}) from the user's profile.{note}"


async def self_notes(
    ctx: ToolContext,
    action: SelfAction,
    note: str | None = None,
    note_id: int | None = None,
) -> str:
    """Your own persona notes: traits you develop and what you decide about yourself.

    They are shown to you in every conversation. Keep each note short.

    Args:
        action: get, add or remove.
        note: One short sentence about yourself (add).
        note_id: Id of a note from get (remove).
    """
    ctx.backend = "sqlite"
    if ctx.agent is None:
        raise ToolError(NOT_A_TOOLBELT_AGENT)
    store = ctx.services.stores.persona
    agent = ctx.agent.subentry_id
    if action == "get":
        notes = await store.get(agent)
        if not notes:
            return "You have no persona notes yet."
        lines = "\n".join(f"- [note {n.id}] {n.note}" for n in notes)
        return f"Your persona notes ({len(notes)} of at most {MAX_NOTES}):\n{lines}"
    # Everyone who talks to the agent gets its notes: as for shared memories,
    # the 'Who may change shared memories and persona notes' setting says who may.
    if not ctx.may_change_shared:
        raise PersonaLockedError(ctx.services.settings.shared_memory_editors)
    _refuse_after_outside_data(ctx, "Persona notes")
    if action == "add":
        if not (note or "").strip():
            raise ToolError("add needs 'note': one short sentence about yourself.")
        saved = await store.add(agent, note or "")
        return f"Stored persona note {saved.id}: {saved.note}"
    if note_id is None:
        raise ToolError("remove needs 'note_id'; use get to list your notes.")
    removed = await store.remove(agent, note_id)
    erased = ctx.services.stores.database.erasure_note
    return f"Removed persona note {removed.id}: {removed.note}{erased}"


HISTORY_TOOL = Tool(
    history,
    reads={"search", "recent"},
    erases={"forget"},
    personal=True,
    prompt="Use `history` when the user refers to an earlier conversation.",
    arg_aliases={
        "q": "query",
        "id": "turn_id",
        "message_id": "turn_id",
        "n": "limit",
        "num_messages": "limit",
        "max_results": "limit",
    },
    action_aliases={
        "search": ("search_history", "history_search", "search_conversations"),
        "recent": (
            "get_recent_history",
            "recent_history",
            "retrieve_conversation_history",
            "get_conversation_history",
        ),
        "forget": ("forget_history", "delete_history", "history_forget"),
    },
)
# Profiles and persona notes hold only what was written under the guard above
# (no conversation that read outside data changes them): not outside data.
PROFILE_TOOL = Tool(
    profile,
    reads={"get"},
    erases={"delete"},
    personal=True,
    prompt="Use `profile` to keep lasting facts about the user themselves.",
    arg_aliases={"attribute": "key", "name": "key", "field": "key", "val": "value"},
    returns_outside_data=False,
    action_aliases={
        "get": ("get_user_profile", "get_profile", "user_profile"),
        "set": ("set_user_attribute", "set_profile", "update_profile"),
        "delete": ("delete_user_attribute", "delete_profile_attribute"),
    },
)
SELF_TOOL = Tool(
    self_notes,
    name="self",
    reads={"get"},
    personal=True,
    arg_aliases={
        "trait": "note",
        "content": "note",
        "text": "note",
        "id": "note_id",
    },
    returns_outside_data=False,
    action_aliases={
        "add": ("bot_trait", "set_my_trait", "add_trait"),
        "get": ("get_my_traits", "get_persona"),
    },
)
