"""The names models use for our tools: one table, read by the parser and our LLM API.

Prompts, fine-tunes and small models call ``store_memory``, ``memorize`` or
``web_search``; our tools are action-based (``memory``, ``search``). Each name
here means one of our tools plus the action the name implies. ``Catalog.resolve``
maps such a name to an exposed tool of the same meaning (a memory server's own
``memory_search``, HA's ``GetDateTime``) or to our tool; ``implied_arguments``
then adds the action. HA-free, so the parser and the HA side share it.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["MEANINGS", "alias_target", "implied_arguments", "same_meaning"]

_FOLD_TABLE = str.maketrans("", "", " \t\r\n_-.")

# (our tool, the action the name implies) -> the names that mean it.
MEANINGS: Mapping[tuple[str, str | None], tuple[str, ...]] = {
    ("memory", "search"): (
        "memory_search",
        "search_memory",
        "search_memories",
        "memories_search",
        "memory_recall",
        "recall",
        "recall_memory",
        "recall_memories",
        "query_memory",
        "lookup_memory",
        "find_memory",
        "get_memory",
        "get_memories",
        "list_memories",
        "retrieve_memory",
        "retrieve_memories",
    ),
    ("memory", "store"): (
        "memory_store",
        "store_memory",
        "save_memory",
        "memory_save",
        "add_memory",
        "memory_add",
        "create_memory",
        "write_memory",
        "remember",
        "remember_fact",
        "memorize",
        "memorise",
        "save_fact",
        "store_fact",
    ),
    ("memory", "update"): ("update_memory", "memory_update", "edit_memory"),
    ("memory", "delete"): (
        "delete_memory",
        "memory_delete",
        "remove_memory",
        "forget",
        "forget_memory",
    ),
    ("history", "search"): (
        "search_history",
        "history_search",
        "search_conversations",
    ),
    ("history", "recent"): (
        "get_recent_history",
        "recent_history",
        "retrieve_conversation_history",
        "get_conversation_history",
    ),
    ("history", "forget"): ("forget_history", "delete_history", "history_forget"),
    ("profile", "get"): ("get_user_profile", "get_profile", "user_profile"),
    ("profile", "set"): ("set_user_attribute", "set_profile", "update_profile"),
    ("profile", "delete"): ("delete_user_attribute", "delete_profile_attribute"),
    ("self", "add"): ("bot_trait", "set_my_trait", "add_trait"),
    ("self", "get"): ("get_my_traits", "get_persona"),
    ("model", "list"): ("list_models", "get_models", "available_models"),
    ("model", "current"): ("get_current_model", "current_model"),
    ("model", "switch"): ("switch_model", "change_model", "set_model"),
    ("search", "web"): (
        "web_search",
        "search_web",
        "internet_search",
        "search_internet",
        "online_search",
        "search_online",
        "google",
        "google_search",
        "bing",
        "bing_search",
        "brave_search",
        "duckduckgo",
        "duckduckgo_search",
        "ddg_search",
        "tavily_search",
    ),
    ("search", "news"): ("news_search", "search_news", "get_news", "news"),
    ("search", "reddit"): ("reddit_search", "search_reddit", "reddit"),
    ("web_fetch", None): (
        "fetch_url",
        "fetch",
        "fetch_page",
        "fetch_webpage",
        "browse",
        "browse_url",
        "open_url",
        "read_url",
        "read_webpage",
        "visit_url",
        "get_url",
        "get_webpage",
        "scrape_url",
    ),
    ("time", None): (
        "get_current_time",
        "current_time",
        "get_time",
        "now",
        "get_date",
        "get_datetime",
        "get_date_time",
        "get_current_date",
        "current_datetime",
        "date_time",
        "GetDateTime",
    ),
}


def _fold(name: str) -> str:
    return name.lower().translate(_FOLD_TABLE)


_TARGETS: dict[str, tuple[str, str | None]] = {
    _fold(name): meaning for meaning, names in MEANINGS.items() for name in names
}
# Our own tool names mean themselves (a catalog without ``time`` may have
# ``get_current_time``).
for _tool, _ in MEANINGS:
    _TARGETS.setdefault(_fold(_tool), (_tool, None))


def alias_target(name: str) -> tuple[str, str | None] | None:
    """(our tool, implied action) a name means, after any ``ns__`` prefix; or None."""
    return _TARGETS.get(_fold(name.strip().rsplit("__", 1)[-1]))


def same_meaning(name: str) -> tuple[str, ...]:
    """Names that mean what ``name`` means, our tool's own name last; () if none."""
    target = alias_target(name)
    if target is None:
        return ()
    return (*MEANINGS.get(target, ()), target[0])


def implied_arguments(called: str, resolved: str) -> dict[str, str]:
    """The action an alias implies, when it resolved to our action-based tool."""
    target = alias_target(called)
    if target is None or target[1] is None:
        return {}
    if resolved.rsplit("__", 1)[-1] != target[0]:
        return {}
    return {"action": target[1]}
