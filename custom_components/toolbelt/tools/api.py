"""Our tools as an HA LLM API ("Toolbelt tools"), selectable by any HA agent.

One API is registered per HA instance however many Toolbelt entries exist; it takes
its settings from the first loaded entry that has a 'tools' subentry (defaults
otherwise).

Everything that belongs to a turn comes from the ``llm_context`` each call
receives, never from the API instance: since HA 2026.11 one instance serves a
whole conversation (only its ``llm_context`` changes from turn to turn). A
turn's calls share numbered references and are traced under the turn id (the
HA context id); the caller (user, admin, agent, conversation) is read per call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
import time
from typing import Any

from homeassistant.auth.models import User
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import EVENT_HOMEASSISTANT_FINAL_WRITE
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.event import async_track_time_interval
from homeassistant.util.hass_dict import HassKey
from homeassistant.util.json import JsonObjectType
from homeassistant.util.ulid import ulid_now

from ..const import LOGGER
from ..ha import compat
from ..ha.outside_data import RULE as OUTSIDE_RULE
from ..loop.executor import ToolOutcome
from ..toolcalls.catalog import Catalog, ToolSpec
from .agents import AgentRef, calling_agent
from .const import (
    API_ID,
    API_NAME,
    DOMAIN,
    EDITORS_ANYONE,
    EDITORS_NOBODY,
    EDITORS_USERS,
    MEMORY_DB_FILENAME,
    MEMORY_MCP,
    SUBENTRY_TYPE_TOOLS,
)
from .context import ToolContext
from .definitions import ALIASES, ALL_TOOLS, SEARCH_TOOL, TIME_TOOL, TOOLS_BY_NAME
from .errors import ToolError
from .history_store import HistoryStore
from .memory.base import MemoryBackend
from .memory.sqlite import SqliteMemory
from .outside_readers import current_conversation_id, outside_readers
from .persona_store import PersonaStore, persona_line
from .personal_tools import SELF_TOOL
from .profile_store import ProfileStore, profile_line
from .services import Stores, ToolServices, ToolSettings, build_mcp_memory
from .sqlite_db import SqliteDatabase
from .tool import Tool
from .trace import CallTrace, TraceLog, TurnRecord, now_iso

DATA_TOOLS: HassKey[ToolsHub] = HassKey("toolbelt_tools")
# Recent turns' tool traces (diagnostics). Kept apart from the hub, which goes
# when the last entry unloads: a reload (any agent's Reconfigure) keeps them;
# removing Toolbelt drops them (async_drop_traces).
DATA_TRACES: HassKey[TraceLog] = HassKey("toolbelt_traces")
# All our tools, offered or not: calls by any name resolve here as the parser
# resolves them (folding, namespaces, every tool's declared aliases).
OUR_CATALOG = Catalog(
    [ToolSpec(t.name, t.description, t.schema) for t in ALL_TOOLS], ALIASES
)
# The retention purge also runs this often, so it holds when nobody talks.
PURGE_INTERVAL = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who a turn's tool calls act for: the HA user, the agent, what they may change."""

    user_id: str | None
    may_change_shared: bool = True
    is_admin: bool = False
    agent: AgentRef | None = None
    """The Toolbelt agent running the turn; None for any other HA agent."""
    conversation_id: str | None = None
    """HA's chat session id; None for a call made outside any conversation."""


# What a late call reads once the database is closed ("… is closed because …").
CLOSED_AT_STOP = "Home Assistant is shutting down"
CLOSED_AT_UNLOAD = (
    "the Toolbelt integration was unloaded (it opens again when Toolbelt loads)"
)


class ToolsHub:
    """Shared state behind the API: entries, backends, traces, the database.

    The hub owns one database for its whole life. HA's final-write stage or the
    last entry's unload closes it for good: a call that still holds the hub then
    gets a readable error, never a reopened file. A reload builds a new hub.
    """

    def __init__(self, hass: HomeAssistant) -> None:
        """Start empty; entries are added by async_setup_tools_api."""
        self.hass = hass
        self.entries: list[ConfigEntry] = []
        self.traces = hass.data.setdefault(
            DATA_TRACES, TraceLog(secrets=lambda: _current_secrets(hass))
        )
        self.unregister_api: Callable[[], None] | None = None
        self._services: ToolServices | None = None
        self._db = SqliteDatabase(hass.config.path(MEMORY_DB_FILENAME))
        self._stores = Stores(
            history=HistoryStore(self._db),
            profiles=ProfileStore(self._db),
            persona=PersonaStore(self._db),
            database=self._db,
        )
        self._sqlite: SqliteMemory | None = None
        # HA stops without unloading entries. Like the recorder and HA's own
        # storage, close in the final-write stage: a turn that ends while HA
        # stops is still recorded, and HA waits for the close.
        self._unsub_final_write: Callable[[], None] | None = hass.bus.async_listen_once(
            EVENT_HOMEASSISTANT_FINAL_WRITE, self._async_on_final_write
        )
        # One future per close in progress, done when that close returns.
        self._closes: set[asyncio.Future[None]] = set()
        self._unsub_purge: Callable[[], None] | None = async_track_time_interval(
            hass, self._async_purge_now, PURGE_INTERVAL, name="toolbelt history purge"
        )

    @callback
    def async_purge_history(self) -> None:
        """Delete turns older than the retention now, in the background.

        The purge is queued on the database thread at once (eager start), so a
        close that follows runs after it.
        """
        self.hass.async_create_task(
            self._async_purge(), "toolbelt history purge", eager_start=True
        )

    @callback
    def _async_purge_now(self, _now: datetime) -> None:
        self.async_purge_history()

    async def _async_purge(self) -> None:
        try:
            purged = await self._stores.history.purge(self.settings().history_days)
        except ToolError as err:
            LOGGER.warning("Toolbelt could not purge old history turns: %s", err)
            return
        if purged:
            LOGGER.debug("Purged %d history turns past the retention", purged)

    async def _async_on_final_write(self, _event: Event) -> None:
        self._unsub_final_write = None
        # An unload's close may have just ended but not yet returned (its task
        # wakes a loop turn or two later); HA's stop does not wait for tasks
        # started before it, so this stage waits until every close has returned.
        unfinished = list(self._closes)
        await self.async_close(CLOSED_AT_STOP)
        if unfinished:
            await asyncio.wait(unfinished)

    def settings(self) -> ToolSettings:
        """Settings from the tools subentry of the entry set up first.

        Each server entry may hold one; with several, the oldest entry's apply,
        whatever order the entries were loaded or reloaded in.
        """
        found = [
            (entry.created_at, entry.entry_id, subentry.data)
            for entry in self.entries
            for subentry in entry.subentries.values()
            if subentry.subentry_type == SUBENTRY_TYPE_TOOLS
        ]
        if not found:
            return ToolSettings()
        return ToolSettings.from_data(min(found, key=lambda f: f[:2])[2])

    def services(self) -> ToolServices:
        """Backends for the current settings, rebuilt only when they change."""
        settings = self.settings()
        if self._services is None or self._services.settings != settings:
            if settings.memory_backend == MEMORY_MCP and settings.mcp_url:
                memory: MemoryBackend = build_mcp_memory(
                    async_get_clientsession(self.hass), settings
                )
            else:
                if self._sqlite is None:
                    self._sqlite = SqliteMemory(self._db)
                memory = self._sqlite
            self._services = ToolServices(
                self.hass, settings, memory=memory, stores=self._stores
            )
        return self._services

    def database(self) -> SqliteDatabase:
        """The one SQLite file (memory, history, profiles, persona notes)."""
        return self._db

    def stores(self) -> Stores:
        """History, profiles and persona notes on the shared database."""
        return self._stores

    async def async_close(self, reason: str) -> None:
        """Stop the daily purge and close the database for good.

        ``reason`` is what a later call is told ("… is closed because …"). The
        final-write listener stays until the close is done: if an unload's close
        is still waiting for the database thread when HA stops (HA waits 10 s for
        an unload's tasks), the final-write stage waits for that same close, and
        for this call to return.
        """
        returned: asyncio.Future[None] = self.hass.loop.create_future()
        self._closes.add(returned)
        try:
            if self._unsub_purge is not None:
                self._unsub_purge()
                self._unsub_purge = None
            await self._db.async_close(reason)
            if self._unsub_final_write is not None:
                self._unsub_final_write()
                self._unsub_final_write = None
        finally:
            self._closes.discard(returned)
            returned.set_result(None)


class ToolbeltToolsAPI(llm.API):
    """The "Toolbelt tools" LLM API."""

    def __init__(self, hass: HomeAssistant, hub: ToolsHub) -> None:
        """Register under API_ID."""
        super().__init__(hass=hass, id=API_ID, name=API_NAME)
        self.hub = hub

    async def async_get_api_instance(
        self, llm_context: llm.LLMContext
    ) -> llm.APIInstance:
        """The tools and prompt for a conversation (HA 2026.11 reuses it per turn).

        The prompt is built from the first turn's agent and user; each call reads
        its own turn and caller from the context it receives.
        """
        context = llm_context.context
        user_id = context.user_id if context else None
        services = self.hub.services()
        agent = calling_agent(llm_context)
        offered = [
            tool
            for tool in ALL_TOOLS
            if (tool is not SEARCH_TOOL or services.search is not None)
            and (tool is not SELF_TOOL or agent is not None)
        ]
        tools: list[llm.Tool] = [ToolbeltLlmTool(tool, self.hub) for tool in offered]
        prompt = [tool.prompt for tool in offered if tool.prompt]
        prompt.append(OUTSIDE_RULE)
        if agent is not None:
            prompt.extend(await self._personal_lines(services, user_id, agent))
        return ToolbeltAPIInstance(
            api=self,
            api_prompt=" ".join(prompt),
            llm_context=llm_context,
            tools=tools,
            hub=self.hub,
        )

    async def _personal_lines(
        self, services: ToolServices, user_id: str | None, agent: AgentRef
    ) -> list[str]:
        """The profile and persona lines for a Toolbelt agent's system prompt.

        Built only from stored rows in a fixed order, so they are the same bytes
        every turn until the profile or the notes change. A database error leaves
        them out rather than failing the turn.
        """
        stores = services.stores
        try:
            attributes = (
                await stores.profiles.get(user_id)
                if user_id and services.settings.profile_in_prompt
                else {}
            )
            notes = await stores.persona.get(agent.subentry_id)
        except ToolError as err:
            LOGGER.warning("Toolbelt could not read the profile or notes: %s", err)
            return []
        return [
            line for line in (profile_line(attributes), persona_line(notes)) if line
        ]


def _may_change_shared(user: User | None, editors: str) -> bool:
    """Whether this conversation may update or delete shared memories."""
    if editors == EDITORS_ANYONE:
        return True
    if editors == EDITORS_NOBODY:
        return False
    if editors == EDITORS_USERS:
        return user is not None
    return user is not None and user.is_admin


@dataclass(kw_only=True)
class ToolbeltAPIInstance(llm.APIInstance):
    """Routes other names for our tools (store_memory, web_search, ...) to them."""

    hub: ToolsHub

    async def async_call_tool(self, tool_input: llm.ToolInput) -> JsonObjectType:
        """Call by our name or an alias the parser accepts; others raise like HA.

        A tool of ours that is not offered (search with no backend) still runs, so
        the model reads why it cannot work instead of 'not found'.
        """
        called = tool_input.tool_name
        if (name := OUR_CATALOG.resolve(called)) is not None:
            args = {
                **(tool_input.tool_args or {}),
                **OUR_CATALOG.implied_arguments(called, name),
            }
            tool_input = llm.ToolInput(tool_name=name, tool_args=args, id=tool_input.id)
        for tool in self.tools:
            if tool.name == tool_input.tool_name:
                return await tool.async_call(
                    self.api.hass, tool_input, self.llm_context
                )
        if (ours := TOOLS_BY_NAME.get(tool_input.tool_name)) is not None:
            hidden = ToolbeltLlmTool(ours, self.hub)
            return await hidden.async_call(self.api.hass, tool_input, self.llm_context)
        raise HomeAssistantError(f'Tool "{tool_input.tool_name}" not found')


class ToolbeltLlmTool(llm.Tool):
    """An HA llm.Tool that runs one of our Tool objects and traces the call."""

    is_device_command = False
    """None of our tools touches a device (read by the loop's device cap)."""
    integration = DOMAIN
    """HA 2026.10 records which integration provides a tool (harmless before)."""

    def __init__(self, tool: Tool, hub: ToolsHub) -> None:
        """Copy name/description; parameters come from the tool's JSON schema."""
        self.name = tool.name
        self.description = tool.description
        self.parameters = compat.json_schema_to_parameters(tool.schema)
        self.json_schema = tool.schema
        annotations = compat.tool_annotations(
            read_only=tool.read_only, open_world=tool.open_world
        )
        if annotations is not None:
            self.annotations = annotations
        self.tool = tool
        self._hub = hub

    def is_read_only_call(self, arguments: Mapping[str, Any] | None) -> bool:
        """Reads may run concurrently; writes (memory store, model switch...) may not."""
        return self.tool.only_reads(arguments)

    async def async_call(
        self,
        hass: HomeAssistant,
        tool_input: llm.ToolInput,
        llm_context: llm.LLMContext,
    ) -> JsonObjectType:
        """Run the tool; {'result': text} or {'error': 'ERROR: Type: message'}.

        The turn and the caller come from this call's ``llm_context``; the hub
        is the one in use now. HA 2026.11 keeps a conversation's API instance
        (and so this tool) across a reload of the entry, which closes the hub
        the tool was made with: that one answers only once Toolbelt is gone.
        """
        hub = hass.data.get(DATA_TOOLS) or self._hub
        outcome = await run_tool(hub, self.tool, tool_input.tool_args, llm_context)
        key = "error" if outcome.failed else "result"
        return compat.make_tool_result({key: outcome.data}, failed=outcome.failed)


async def async_caller(hub: ToolsHub, llm_context: llm.LLMContext) -> Caller:
    """Who this call acts for, read from its own context (never a cached turn's)."""
    context = llm_context.context
    user_id = context.user_id if context else None
    user = await hub.hass.auth.async_get_user(user_id) if user_id else None
    return Caller(
        user_id,
        may_change_shared=_may_change_shared(
            user, hub.settings().shared_memory_editors
        ),
        is_admin=user is not None and user.is_admin,
        agent=calling_agent(llm_context),
        conversation_id=current_conversation_id(),
    )


def turn_record(hub: ToolsHub, llm_context: llm.LLMContext) -> TurnRecord:
    """The trace of the turn this call belongs to (keyed by the HA context id).

    A call with no HA context (rare: HA gives every conversation turn one) is a
    turn of its own.
    """
    context = llm_context.context
    return hub.traces.turn(context.id if context else ulid_now())


async def run_tool(
    hub: ToolsHub,
    tool: Tool,
    args: Mapping[str, Any] | None,
    llm_context: llm.LLMContext,
) -> ToolOutcome:
    """Run one call with its context and record it in the turn's trace.

    A call whose result or error hands outside data to the model marks its
    conversation and turn (tools that declare they may return it); a hand-off
    target runs its own conversation in the same turn, so the mark of either
    passes to the other.
    """
    turn = turn_record(hub, llm_context)
    caller = await async_caller(hub, llm_context)
    readers = outside_readers(hub.hass)
    context = ToolContext(
        services=hub.services(),
        turn=turn,
        user_id=caller.user_id,
        may_change_shared=caller.may_change_shared,
        is_admin=caller.is_admin,
        read_outside_data=readers.share(caller.conversation_id, turn.turn_id),
        agent=caller.agent,
    )
    started = now_iso()
    t0 = time.perf_counter()
    outcome = await tool.invoke(args, context)
    if tool.returns_outside_data:
        readers.after_call(outcome.data, caller.conversation_id, turn.turn_id)
    action = (args or {}).get("action") if isinstance(args, Mapping) else None
    turn.calls.append(
        CallTrace(
            tool=tool.name,
            action=str(action) if action is not None else None,
            backend=context.backend,
            started=started,
            latency_ms=(time.perf_counter() - t0) * 1000,
            ok=not outcome.failed,
            error=outcome.data if outcome.failed else None,
            arguments=dict(args) if isinstance(args, Mapping) else {},
        )
    )
    return outcome


async def async_setup_tools_api(
    hass: HomeAssistant, entry: ConfigEntry
) -> Callable[[], Coroutine[Any, Any, None] | None]:
    """Register the API (once per HA) for this entry; returns the undo callable.

    Use as ``entry.async_on_unload(await async_setup_tools_api(hass, entry))``:
    the last entry's undo returns the hub's close, which HA awaits as part of
    the unload, so the unload ends with the database closed.
    """
    hub = hass.data.get(DATA_TOOLS)
    if hub is None:
        hub = hass.data[DATA_TOOLS] = ToolsHub(hass)
    if hub.unregister_api is None:
        hub.unregister_api = llm.async_register_api(hass, ToolbeltToolsAPI(hass, hub))
    hub.entries.append(entry)
    # A changed retention reloads the entry, so this applies it at once.
    hub.async_purge_history()

    @callback
    def unregister() -> Coroutine[Any, Any, None] | None:
        """Detach the entry; the last one also closes the hub (HA awaits it)."""
        if entry in hub.entries:
            hub.entries.remove(entry)
        if hub.entries:
            return None
        if hub.unregister_api is not None:
            hub.unregister_api()
            hub.unregister_api = None
        hass.data.pop(DATA_TOOLS, None)
        return hub.async_close(CLOSED_AT_UNLOAD)

    return unregister


def _current_secrets(hass: HomeAssistant) -> tuple[str, ...]:
    """The keys and tokens the current settings hold, to scrub from traces."""
    hub = hass.data.get(DATA_TOOLS)
    return tuple(hub.settings().secrets) if hub else ()


@callback
def async_drop_traces(hass: HomeAssistant) -> None:
    """Forget the traces once no Toolbelt entry is left (Toolbelt removed)."""
    if not hass.config_entries.async_entries(DOMAIN):
        hass.data.pop(DATA_TRACES, None)


@callback
def async_get_turn_record(hass: HomeAssistant, turn_id: str) -> TurnRecord | None:
    """The tool calls and references of a turn (turn_id = HA context id)."""
    hub = hass.data.get(DATA_TOOLS)
    return hub.traces.get(turn_id) if hub else None


@callback
def async_record_call(
    hass: HomeAssistant,
    turn_id: str,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    ok: bool,
    latency_ms: float,
    error: str | None = None,
) -> None:
    """Trace a call our tools did not run (an Assist intent, a script, ...).

    Diagnostics show every call of a turn; our own tools trace themselves with
    their backend and action, so only the others come through here.
    """
    hub = hass.data.get(DATA_TOOLS)
    if hub is None:
        return
    hub.traces.turn(turn_id).calls.append(
        CallTrace(
            tool=tool,
            action=None,
            backend=None,
            started=now_iso(),
            latency_ms=latency_ms,
            ok=ok,
            error=error,
            arguments=dict(arguments),
        )
    )


def is_toolbelt_tool(tool: llm.Tool | None) -> bool:
    """Whether a (possibly namespaced) HA tool is one of ours."""
    return tool is not None and isinstance(_unwrap(tool), ToolbeltLlmTool)


@callback
def async_get_tools_diagnostics(hass: HomeAssistant) -> dict[str, Any]:
    """Redacted settings summary and recent turns' tool traces."""
    hub = hass.data.get(DATA_TOOLS)
    if hub is None:
        return {"registered": False}
    settings = hub.settings()
    return {
        "registered": True,
        "memory_backend": settings.memory_backend,
        "search_backend": settings.search_backend,
        "fetch_max_chars": settings.fetch_max_chars,
        "fetch_allow_list": sorted(settings.allow_list.hosts)
        + [str(net) for net in settings.allow_list.networks],
        "recent_turns": hub.traces.recent(),
    }


async def async_get_store_counts(hass: HomeAssistant) -> dict[str, Any]:
    """How much the database keeps, as counts only: never a turn or an attribute."""
    hub = hass.data.get(DATA_TOOLS)
    if hub is None:
        return {}
    stores = hub.stores()
    try:
        return {
            "history": await stores.history.counts(),
            "profiles": {"users": await stores.profiles.count_users()},
            "persona_notes": await stores.persona.count(),
            "history_days": hub.settings().history_days,
        }
    except ToolError as err:
        return {"error": str(err)}


def drop_redundant_time(tools: Iterable[llm.Tool]) -> list[llm.Tool]:
    """Remove our 'time' tool when HA's GetDateTime (maybe namespaced) is offered."""
    tools = list(tools)
    if not any(t.name.rsplit("__", 1)[-1] == "GetDateTime" for t in tools):
        return tools
    return [
        t for t in tools if not (is_toolbelt_tool(t) and _unwrap(t).tool is TIME_TOOL)
    ]


def _unwrap(tool: llm.Tool) -> llm.Tool:
    """HA's merged API wraps tools in NamespacedTool."""
    return getattr(tool, "tool", tool) if isinstance(tool, llm.NamespacedTool) else tool


__all__ = [
    "TOOLS_BY_NAME",
    "ToolbeltAPIInstance",
    "ToolbeltLlmTool",
    "ToolbeltToolsAPI",
    "async_get_store_counts",
    "async_get_tools_diagnostics",
    "async_get_turn_record",
    "async_record_call",
    "async_setup_tools_api",
    "drop_redundant_time",
    "is_toolbelt_tool",
    "run_tool",
]
