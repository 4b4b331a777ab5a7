"""Memory kept by a remote MCP server, spoken to over streamable HTTP.

The protocol is JSON-RPC over POST: ``initialize`` (the server may hand back an
``Mcp-Session-Id`` header we echo afterwards), ``notifications/initialized``, then
``tools/list`` and ``tools/call``. A reply is plain JSON or a short SSE stream. Our four
actions map to server tool names the user can change, and our argument names are
matched to the names each server tool declares.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
import itertools
import json
from typing import Any, override

import aiohttp

from ...ha.outside_data import outside
from ..errors import (
    MemoryNotFoundError,
    ServiceUnavailableError,
    SharedMemoryLockedError,
    ToolError,
)
from ..service_http import raise_for_status, service_call
from .base import Memory, MemoryBackend, normalise_id

PROTOCOL_VERSION = "2025-06-18"
DEFAULT_TOOL_NAMES: Mapping[str, str] = {
    "search": "search_memories",
    "store": "store_memory",
    "update": "update_memory",
    "delete": "delete_memory",
}
# Our argument -> names servers commonly use for it, in order of preference.
ARGUMENT_SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "query": ("query", "q", "search", "text"),
    "limit": ("limit", "max_results", "top_k", "k", "n"),
    "content": ("content", "text", "memory", "fact", "value"),
    "memory_id": ("memory_id", "id", "key"),
    "user_id": ("user_id", "user"),
}
SESSION_HEADER = "Mcp-Session-Id"
AUTH_HINT = "Check the MCP server's bearer token in the Toolbelt tools settings."


class McpError(ServiceUnavailableError):
    """The server answered with a JSON-RPC error or a failed tool result."""


class McpClient:
    """The smallest client that speaks MCP streamable HTTP for tool calls."""

    name = "MCP memory server"

    def __init__(
        self,
        session: aiohttp.ClientSession,
        url: str,
        *,
        token: str | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._session = session
        self._url = url
        self._token = token
        self.timeout = timeout
        self._session_id: str | None = None
        self._tools: dict[str, dict[str, Any]] | None = None
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()

    async def tools(self) -> dict[str, dict[str, Any]]:
        """Tool name -> input schema, fetched once per session."""
        await self._ensure_session()
        assert self._tools is not None
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """Call a tool and return its text content; errors become McpError."""
        await self._ensure_session()
        try:
            result = await self._rpc(
                "tools/call", {"name": name, "arguments": arguments}
            )
        except _SessionExpired:
            self._session_id = None
            self._tools = None
            await self._ensure_session()
            result = await self._rpc(
                "tools/call", {"name": name, "arguments": arguments}
            )
        text = "\n".join(
            part.get("text", "")
            for part in result.get("content", [])
            if isinstance(part, dict) and part.get("type") == "text"
        ).strip()
        if result.get("isError"):
            raise McpError(
                self.name,
                outside(text, "memory")
                if text
                else f"The server's {name} tool failed.",
            )
        return text

    async def _ensure_session(self) -> None:
        async with self._lock:
            if self._tools is not None:
                return
            init = await self._rpc(
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "toolbelt", "version": "0.1"},
                },
            )
            if not isinstance(init, dict) or "capabilities" not in init:
                raise McpError(self.name, "The server did not complete MCP initialize.")
            await self._rpc("notifications/initialized", None, notify=True)
            listed = await self._rpc("tools/list", {})
            self._tools = {
                tool["name"]: tool.get("inputSchema") or {}
                for tool in listed.get("tools", [])
                if isinstance(tool, dict) and "name" in tool
            }

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        if self._session_id:
            headers[SESSION_HEADER] = self._session_id
        return headers

    async def _rpc(self, method: str, params: Any, *, notify: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        request_id = None if notify else next(self._ids)
        if request_id is not None:
            message["id"] = request_id
        try:
            async with (
                service_call(self.name, self.timeout),
                self._session.post(
                    self._url, json=message, headers=self._headers()
                ) as resp,
            ):
                self._check_status(resp)
                if session_id := resp.headers.get(SESSION_HEADER):
                    self._session_id = session_id
                if notify:
                    return None
                if resp.content_type == "text/event-stream":
                    reply = await _read_sse_reply(resp, request_id)
                else:
                    reply = json.loads(await resp.text())
        except ValueError as err:
            raise McpError(self.name, f"The {self.name} sent invalid JSON.") from err
        if not isinstance(reply, dict):
            raise McpError(self.name, f"The {self.name} sent an unexpected reply.")
        if "error" in reply:
            error = reply["error"] or {}
            said = outside(str(error.get("message", error)), "memory")
            raise McpError(self.name, f"The {self.name} refused {method}: {said}")
        return reply.get("result", {})

    def _check_status(self, resp: aiohttp.ClientResponse) -> None:
        if resp.status == 404 and self._session_id:
            raise _SessionExpired
        raise_for_status(self.name, resp.status, resp.headers, auth_hint=AUTH_HINT)


class _SessionExpired(Exception):
    """The server forgot our session (HTTP 404): start a new one once."""


async def _read_sse_reply(resp: aiohttp.ClientResponse, request_id: int | None) -> Any:
    """Read SSE events until the JSON-RPC reply with our id arrives."""
    data: list[str] = []
    async for raw in resp.content:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
            continue
        if line or not data:
            continue
        message = json.loads("\n".join(data))
        data = []
        if isinstance(message, dict) and message.get("id") == request_id:
            return message
    if data:
        return json.loads("\n".join(data))
    raise ValueError("stream ended without a reply")


class McpMemory(MemoryBackend):
    """Our memory actions as calls to a remote MCP server's tools."""

    name = "mcp"

    def __init__(
        self, client: McpClient, tool_names: Mapping[str, str] | None = None
    ) -> None:
        self._client = client
        self._tool_names = {**DEFAULT_TOOL_NAMES, **(tool_names or {})}

    async def missing_tools(self) -> list[str]:
        """Our actions whose server tool the server does not offer (setup checks)."""
        tools = await self._client.tools()
        return [a for a, name in self._tool_names.items() if name not in tools]

    @override
    async def search(self, user_id: str | None, query: str, limit: int) -> list[Memory]:
        text = await self._call("search", user_id, {"query": query, "limit": limit})
        return [Memory(id=None, content=text or "No memories found.")]

    @override
    async def store(self, user_id: str | None, content: str) -> Memory:
        text = await self._call("store", user_id, {"content": content})
        return Memory(id=None, content=text or f"Stored: {content}")

    @override
    async def update(
        self,
        user_id: str | None,
        memory_id: str,
        content: str,
        *,
        may_change_shared: bool = True,
    ) -> Memory:
        # The server keeps ownership; without a user, every memory is shared.
        if user_id is None and not may_change_shared:
            raise SharedMemoryLockedError
        text = await self._call(
            "update",
            user_id,
            {"memory_id": normalise_id(memory_id), "content": content},
        )
        return Memory(id=None, content=text or f"Updated memory {memory_id}.")

    @override
    async def delete(
        self, user_id: str | None, memory_id: str, *, may_change_shared: bool = True
    ) -> Memory:
        if user_id is None and not may_change_shared:
            raise SharedMemoryLockedError
        text = await self._call(
            "delete", user_id, {"memory_id": normalise_id(memory_id)}
        )
        return Memory(id=None, content=text or f"Deleted memory {memory_id}.")

    async def _call(
        self, action: str, user_id: str | None, arguments: dict[str, Any]
    ) -> str:
        tool = self._tool_names[action]
        tools = await self._client.tools()
        if tool not in tools:
            offered = outside(", ".join(sorted(tools)) or "none", "memory")
            raise ToolError(
                f"The MCP memory server has no tool named '{tool}' for {action}. "
                "The user can map the tool names in the Toolbelt tools settings. "
                f"It offers: {offered}"
            )
        if user_id is not None:
            arguments["user_id"] = user_id
        try:
            return await self._client.call_tool(
                tool, _fit_arguments(arguments, tools[tool])
            )
        except McpError as err:
            if action in ("update", "delete") and "not found" in str(err).lower():
                raise MemoryNotFoundError(str(err)) from err
            raise


def _fit_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Rename our arguments to the ones the server's tool declares; drop the rest.

    A tool that declares no properties gets our arguments unchanged.
    """
    declared = schema.get("properties")
    if not isinstance(declared, dict) or not declared:
        return {k: v for k, v in arguments.items() if k != "user_id"}
    fitted: dict[str, Any] = {}
    for ours, value in arguments.items():
        for name in ARGUMENT_SYNONYMS.get(ours, (ours,)):
            if name in declared and name not in fitted:
                fitted[name] = _fit_type(value, declared[name])
                break
    return fitted


def _fit_type(value: Any, prop: Any) -> Any:
    """Send '12' as 12 when the server declares an integer id."""
    if (
        isinstance(prop, dict)
        and prop.get("type") == "integer"
        and isinstance(value, str)
        and value.isdigit()
    ):
        return int(value)
    return value
