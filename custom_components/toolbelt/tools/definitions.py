"""Our tools, each defined once as a typed function; the docstring is the prompt.

memory, search, web_fetch and time live here; history, profile and self in
personal_tools.py, model in model_tool.py.

Keep docstrings short: every word here is sent to the model on every turn.

The modules that declare tools import Home Assistant only inside functions:
the parser CLI, which runs without HA, reads every tool's aliases from here.
"""

from __future__ import annotations

from typing import Literal

from ..ha.intent_tools import HA_TOOL_ALIASES
from ..ha.outside_data import outside
from ..toolcalls.aliases import Aliases
from .const import DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS
from .context import ToolContext
from .errors import ServiceAuthError, SharedMemoryLockedError, ToolError
from .memory.base import format_memories
from .model_tool import MODEL_TOOL
from .personal_tools import HISTORY_TOOL, PROFILE_TOOL, SELF_TOOL
from .references import CITE_HINT, format_reference
from .tool import Tool

MemoryAction = Literal["search", "store", "update", "delete"]
SearchAction = Literal["web", "news", "reddit"]


async def memory(
    ctx: ToolContext,
    action: MemoryAction,
    query: str | None = None,
    content: str | None = None,
    memory_id: str | None = None,
    limit: int = 5,
) -> str:
    """Long-term memory of facts about the user and the home.

    Search it before answering questions about the user's preferences, people,
    plans or anything they told you before. Store a fact when the user asks you to
    remember something or states a lasting preference: one short fact per memory.
    Update or delete a memory by the id a search returned.

    Args:
        action: search, store, update or delete.
        query: Words to look for (search). Empty lists recent memories.
        content: The fact to remember, as a full sentence (store, update).
        memory_id: Id of the memory from a search result (update, delete).
        limit: Most memories to return (search).
    """
    ctx.backend = ctx.services.memory.name
    try:
        text = await _memory_action(ctx, action, query, content, memory_id, limit)
    except ServiceAuthError as err:
        ctx.services.report_auth_error(err, memory=True)
        raise
    except SharedMemoryLockedError as err:
        # The backend only knows the change is not allowed; the setting says who is.
        raise SharedMemoryLockedError(
            ctx.services.settings.shared_memory_editors
        ) from err
    ctx.services.clear_auth_issue(memory=True)
    return text


async def _memory_action(
    ctx: ToolContext,
    action: MemoryAction,
    query: str | None,
    content: str | None,
    memory_id: str | None,
    limit: int,
) -> str:
    # Stored memories may hold what a page or a guest said, and a memory
    # server's replies are its own words: both reach the model as outside data.
    backend = ctx.services.memory
    if action == "search":
        found = await backend.search(ctx.user_id, query or "", max(1, min(limit, 20)))
        if not found:
            return format_memories(found, query or "")
        return outside(format_memories(found, query or ""), "memory")
    if action == "store":
        if not content:
            raise ToolError("store needs 'content': the fact to remember.")
        saved = await backend.store(ctx.user_id, content)
        if saved.id is None:
            return outside(saved.content, "memory")
        whose = "everyone in the home" if saved.shared else "this user"
        return f"Stored memory {saved.id} for {whose}: {saved.content}"
    if not memory_id:
        raise ToolError(f"{action} needs 'memory_id'; search first to find it.")
    if action == "update":
        if not content:
            raise ToolError("update needs 'content': the new text of the memory.")
        saved = await backend.update(
            ctx.user_id, memory_id, content, may_change_shared=ctx.may_change_shared
        )
        if saved.id is None:
            return outside(saved.content, "memory")
        return f"Updated memory {saved.id}: {saved.content}"
    removed = await backend.delete(
        ctx.user_id, memory_id, may_change_shared=ctx.may_change_shared
    )
    if removed.id is None:
        return outside(removed.content, "memory")
    return (
        f"Deleted memory {removed.id}.{backend.erasure_note} It said:\n"
        f"{outside(removed.content, 'memory')}"
    )


async def search(
    ctx: ToolContext,
    query: str,
    action: SearchAction = "web",
    max_results: int = DEFAULT_SEARCH_RESULTS,
) -> str:
    """Search the web for current or unknown facts; news for recent events; reddit
    for people's experiences and opinions.

    Results are numbered sources; cite them as [n]. Use web_fetch on a result's URL
    to read the whole page.

    Args:
        query: What to search for, in a few keywords.
        action: web, news or reddit.
        max_results: How many results to return.
    """
    engine = ctx.services.reddit if action == "reddit" else ctx.services.search
    if engine is None:
        raise ToolError(
            "Web search is not set up. Tell the user to choose a search backend in "
            "the Toolbelt tools settings."
        )
    ctx.backend = engine.name
    if not query.strip():
        raise ToolError("search needs a non-empty 'query'.")
    try:
        results = await engine.search(
            query.strip(), action, max(1, min(max_results, MAX_SEARCH_RESULTS))
        )
    except ServiceAuthError as err:
        ctx.services.report_auth_error(err)
        raise
    if engine is ctx.services.search:
        ctx.services.clear_auth_issue()
    if not results:
        return f"No {action} results for '{query}'."
    blocks = [
        format_reference(
            ctx.turn.references.add(r.title, r.url, r.snippet, r.date, source="search")
        )
        for r in results
    ]
    head = f"{_HEADS[action]} results for '{query}':"
    return "\n".join([head, outside("\n".join(blocks), "search"), CITE_HINT])


_HEADS = {"web": "Web", "news": "News", "reddit": "Reddit"}


async def web_fetch(ctx: ToolContext, url: str, max_chars: int | None = None) -> str:
    """Read a web page (a URL the user gave, or one from search results) as text.

    Args:
        url: The http or https address of the page.
        max_chars: Most characters of page text to return.
    """
    ctx.backend = "http"
    limit = ctx.services.settings.fetch_max_chars
    if max_chars is not None:
        limit = max(500, min(max_chars, limit))
    page = await ctx.services.fetcher.fetch(url, limit)
    ref = ctx.turn.references.add(page.title or page.url, page.url, source="web_fetch")
    page_text = f"[{ref.number}] {ref.title}\n    {ref.url}\n\n{page.text}"
    return f"{outside(page_text, 'web_fetch')}\n\n{CITE_HINT}"


async def current_time() -> str:
    """The current local date and time in Home Assistant's time zone."""
    from homeassistant.util import dt as dt_util  # here: see the module's docstring

    now = dt_util.now()
    return (
        f"{now:%A, %Y-%m-%d %H:%M:%S} {now.tzname()} "
        f"(time zone {now.tzinfo}, UTC offset {now:%z})"
    )


MEMORY_TOOL = Tool(
    memory,
    reads={"search"},
    erases={"delete"},
    personal=True,
    prompt=(
        "Use `memory` to recall what the user told you before answering personal"
        " questions, and to store facts they ask you to remember."
    ),
    arg_aliases={
        "id": "memory_id",
        "text": "content",
        "fact": "content",
        "memory": "content",
        "q": "query",
        "max_results": "limit",
    },
    action_aliases={
        "search": (
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
        "store": (
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
        "update": ("update_memory", "memory_update", "edit_memory"),
        "delete": (
            "delete_memory",
            "memory_delete",
            "remove_memory",
            "forget",
            "forget_memory",
        ),
    },
)
# A search query can be as personal as a memory.
SEARCH_TOOL = Tool(
    search,
    reads=True,
    open_world=True,
    personal=True,
    prompt=(
        "Use `search` for current events or facts you do not know; cite results as [n]."
    ),
    arg_aliases={
        "kind": "action",
        "type": "action",
        "q": "query",
        "limit": "max_results",
        "count": "max_results",
        "num_results": "max_results",
    },
    action_aliases={
        "web": (
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
        "news": ("news_search", "search_news", "get_news", "news"),
        "reddit": ("reddit_search", "search_reddit", "reddit"),
    },
)
WEB_FETCH_TOOL = Tool(
    web_fetch,
    reads=True,
    open_world=True,
    personal=False,
    prompt="Use `web_fetch` to read a page; cite it as [n].",
    arg_aliases={"link": "url", "href": "url"},
    aliases=(
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
)
TIME_TOOL = Tool(
    current_time,
    name="time",
    reads=True,
    personal=False,
    returns_outside_data=False,
    aliases=(
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
    ),
)

ALL_TOOLS: tuple[Tool, ...] = (
    MEMORY_TOOL,
    HISTORY_TOOL,
    PROFILE_TOOL,
    SELF_TOOL,
    SEARCH_TOOL,
    WEB_FETCH_TOOL,
    MODEL_TOOL,
    TIME_TOOL,
)
TOOLS_BY_NAME = {tool.name: tool for tool in ALL_TOOLS}
# Every other name models call our tools by, and HA's tools of the same
# meaning: the loop's parser, the CLI and our LLM API resolve calls with these.
ALIASES = Aliases(
    [*(group for tool in ALL_TOOLS for group in tool.alias_groups), *HA_TOOL_ALIASES]
)
