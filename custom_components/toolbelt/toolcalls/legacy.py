"""Old single-purpose tool names and the action each implies for our tools.

Prompts, fine-tunes and small models still emit ``store_memory`` or
``web_search``; our catalog has action-based tools (``memory``, ``search``). The
name resolves through the catalog's aliases; this table adds the action the old
name meant. HA-free, so both the parser and our HA tools use this one table.
"""

from __future__ import annotations

from collections.abc import Mapping
import re

# legacy name -> (tool, fixed arguments)
LEGACY_TOOL_NAMES: Mapping[str, tuple[str, Mapping[str, str]]] = {
    **{
        name: ("memory", {"action": "search"})
        for name in (
            "search_memories",
            "search_memory",
            "memory_search",
            "recall",
            "recall_memory",
            "recall_memories",
            "retrieve_memory",
            "retrieve_memories",
            "get_memories",
            "list_memories",
        )
    },
    **{
        name: ("memory", {"action": "store"})
        for name in (
            "store_memory",
            "memory_store",
            "save_memory",
            "add_memory",
            "create_memory",
            "remember",
            "remember_fact",
        )
    },
    **{
        name: ("memory", {"action": "update"})
        for name in ("update_memory", "memory_update", "edit_memory")
    },
    **{
        name: ("memory", {"action": "delete"})
        for name in (
            "delete_memory",
            "memory_delete",
            "remove_memory",
            "forget",
            "forget_memory",
        )
    },
    **{
        name: ("history", {"action": "search"})
        for name in ("search_history", "history_search", "search_conversations")
    },
    **{
        name: ("history", {"action": "recent"})
        for name in (
            "get_recent_history",
            "recent_history",
            "retrieve_conversation_history",
            "get_conversation_history",
        )
    },
    **{
        name: ("history", {"action": "forget"})
        for name in ("forget_history", "delete_history", "history_forget")
    },
    **{
        name: ("profile", {"action": "get"})
        for name in ("get_user_profile", "get_profile", "user_profile")
    },
    **{
        name: ("profile", {"action": "set"})
        for name in ("set_user_attribute", "set_profile", "update_profile")
    },
    **{
        name: ("profile", {"action": "delete"})
        for name in ("delete_user_attribute", "delete_profile_attribute")
    },
    **{
        name: ("self", {"action": "add"})
        for name in ("bot_trait", "set_my_trait", "add_trait")
    },
    **{name: ("self", {"action": "get"}) for name in ("get_my_traits", "get_persona")},
    **{
        name: ("model", {"action": "list"})
        for name in ("list_models", "get_models", "available_models")
    },
    **{
        name: ("model", {"action": "current"})
        for name in ("get_current_model", "current_model")
    },
    **{
        name: ("model", {"action": "switch"})
        for name in ("switch_model", "change_model", "set_model")
    },
    **{
        name: ("search", {"action": "reddit"})
        for name in ("reddit_search", "search_reddit", "reddit")
    },
    **{
        name: ("search", {"action": "web"})
        for name in (
            "web_search",
            "search_web",
            "internet_search",
            "google",
            "google_search",
            "brave_search",
            "duckduckgo_search",
            "ddg_search",
        )
    },
    **{
        name: ("search", {"action": "news"})
        for name in ("news_search", "search_news", "get_news", "news")
    },
    **{
        name: ("web_fetch", {})
        for name in (
            "fetch_url",
            "fetch",
            "fetch_page",
            "fetch_webpage",
            "read_url",
            "read_webpage",
            "open_url",
            "browse",
            "get_webpage",
            "get_url",
        )
    },
    **{
        name: ("time", {})
        for name in (
            "get_current_time",
            "current_time",
            "get_time",
            "get_date",
            "get_datetime",
            "get_current_date",
            "now",
        )
    },
}

_SEPARATORS = re.compile(r"[\s\-.]+")


def legacy_target(name: str) -> tuple[str, Mapping[str, str]] | None:
    """(our tool, fixed arguments) for an old name, after any ``ns__`` prefix."""
    key = _SEPARATORS.sub("_", name.strip().rsplit("__", 1)[-1].lower())
    return LEGACY_TOOL_NAMES.get(key)


def implied_arguments(called: str, resolved: str) -> dict[str, str]:
    """The arguments an old name implies, when it resolved to that tool."""
    target = legacy_target(called)
    if target is None or resolved.rsplit("__", 1)[-1] != target[0]:
        return {}
    return dict(target[1])
