"""MCP memory against a local server speaking MCP streamable HTTP (JSON-RPC over POST)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

import aiohttp
from aiohttp import web
import pytest

from custom_components.toolbelt.tools.errors import (
    MemoryNotFoundError,
    ServiceAuthError,
    ServiceUnavailableError,
    ToolError,
)
from custom_components.toolbelt.tools.memory.mcp import McpClient, McpMemory
from tests.local_server import StartServer

TOKEN = "mcp-secret"


class MemoryMcpServer:
    """A small MCP server with memory tools; tools/call replies come as SSE."""

    def __init__(self, names: dict[str, str] | None = None, delay: float = 0.0) -> None:
        self.names = {
            "search": "search_memories",
            "store": "store_memory",
            "update": "update_memory",
            "delete": "delete_memory",
            **(names or {}),
        }
        self.delay = delay
        self.facts: dict[int, tuple[str | None, str]] = {}
        self.ids = itertools.count(1)
        self.sessions: set[str] = set()
        self.session_ids = itertools.count(1)
        self.calls: list[dict[str, Any]] = []
        self.methods: list[str] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/mcp", self.handle)
        return app

    def tools(self) -> list[dict[str, Any]]:
        def schema(**props: str) -> dict[str, Any]:
            return {
                "type": "object",
                "properties": {k: {"type": v} for k, v in props.items()},
            }

        return [
            {
                "name": self.names["search"],
                "inputSchema": schema(
                    query="string", limit="integer", user_id="string"
                ),
            },
            {
                "name": self.names["store"],
                "inputSchema": schema(text="string", user_id="string"),
            },
            {
                "name": self.names["update"],
                "inputSchema": schema(id="integer", content="string"),
            },
            {"name": self.names["delete"], "inputSchema": schema(memory_id="integer")},
        ]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.json_response({"error": "unauthorized"}, status=401)
        assert "text/event-stream" in request.headers["Accept"]
        message = await request.json()
        method = message["method"]
        self.methods.append(method)
        if self.delay:
            await asyncio.sleep(self.delay)
        if method == "initialize":
            session_id = f"session-{next(self.session_ids)}"
            self.sessions.add(session_id)
            return web.json_response(
                _reply(
                    message,
                    {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "test-memory", "version": "1"},
                    },
                ),
                headers={"Mcp-Session-Id": session_id},
            )
        if request.headers.get("Mcp-Session-Id") not in self.sessions:
            return web.Response(status=404, text="unknown session")
        if "id" not in message:
            return web.Response(status=202)
        if method == "tools/list":
            return web.json_response(_reply(message, {"tools": self.tools()}))
        if method == "tools/call":
            result = self.call(
                message["params"]["name"], message["params"]["arguments"]
            )
            return await _sse(request, message, result)
        return web.json_response(
            {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": "no such method"},
            }
        )

    def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        self.calls.append({"name": name, "arguments": args})
        if name == self.names["store"]:
            fact_id = next(self.ids)
            self.facts[fact_id] = (args.get("user_id"), args["text"])
            return _text(f"Saved memory {fact_id}.")
        if name == self.names["search"]:
            words = set(args["query"].lower().split())
            hits = [
                f"{fid}: {text}"
                for fid, (owner, text) in self.facts.items()
                if owner == args.get("user_id")
                and words & set(text.lower().rstrip(".").split())
            ]
            return _text("\n".join(hits) or "nothing found")
        fact_id = args.get("id", args.get("memory_id"))
        if fact_id not in self.facts:
            return {**_text(f"Memory {fact_id} not found"), "isError": True}
        if name == self.names["update"]:
            self.facts[fact_id] = (self.facts[fact_id][0], args["content"])
            return _text(f"Updated memory {fact_id}.")
        del self.facts[fact_id]
        return _text(f"Deleted memory {fact_id}.")


def _reply(message: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


async def _sse(
    request: web.Request, message: dict[str, Any], result: dict[str, Any]
) -> web.StreamResponse:
    """A progress notification first, then the reply spread over many data lines."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progress": 1},
    }
    await response.write(f"event: message\ndata: {json.dumps(note)}\n\n".encode())
    lines = json.dumps(_reply(message, result), indent=1).splitlines()
    data = "".join(f"data: {line}\n" for line in lines)
    await response.write(f"event: message\n{data}\n".encode())
    await response.write_eof()
    return response


async def _memory(
    start: StartServer,
    session: aiohttp.ClientSession,
    server: MemoryMcpServer,
    *,
    token: str = TOKEN,
    wait: float = 2.0,
    names: dict[str, str] | None = None,
) -> McpMemory:
    running = await start(server.app())
    client = McpClient(session, f"{running.url}/mcp", token=token, timeout=wait)
    return McpMemory(client, names)


async def test_round_trip_over_streamable_http(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """Store, search, update, delete; arguments renamed to what each tool declares."""
    server = MemoryMcpServer()
    memory = await _memory(local_server, session, server)

    stored = await memory.store("alice", "Alice likes jazz.")
    found = await memory.search("alice", "jazz", 5)
    updated = await memory.update("alice", "1", "Alice likes bebop jazz.")
    found_again = await memory.search("alice", "bebop", 5)
    deleted = await memory.delete("alice", "#1")

    assert stored.content == "Saved memory 1."
    assert found[0].content == "1: Alice likes jazz."
    assert updated.content == "Updated memory 1."
    assert found_again[0].content == "1: Alice likes bebop jazz."
    assert deleted.content == "Deleted memory 1."
    assert server.facts == {}
    assert server.methods[:3] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
    ]
    assert server.methods.count("initialize") == 1
    # content -> text, memory_id -> id (as an integer), user_id dropped where undeclared
    assert server.calls[0]["arguments"] == {
        "text": "Alice likes jazz.",
        "user_id": "alice",
    }
    assert server.calls[2]["arguments"] == {
        "id": 1,
        "content": "Alice likes bebop jazz.",
    }
    assert server.calls[4]["arguments"] == {"memory_id": 1}


async def test_users_are_passed_to_the_server(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """The HA user id goes along, so a per-user server keeps users apart."""
    server = MemoryMcpServer()
    memory = await _memory(local_server, session, server)

    await memory.store("alice", "Alice likes jazz.")

    assert (await memory.search("bob", "jazz", 5))[0].content == "nothing found"
    assert (await memory.search(None, "jazz", 5))[0].content == "nothing found"


async def test_configured_tool_names(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """A server whose tools have other names works once they are mapped."""
    names = {
        "search": "recall",
        "store": "remember",
        "update": "edit",
        "delete": "forget",
    }
    server = MemoryMcpServer(names=names)

    unmapped = await _memory(local_server, session, server)
    with pytest.raises(
        ToolError,
        # The server's own words (its tool names) come as outside data.
        match=r"no tool named 'store_memory'.*offers: <outside-data source=\"memory\">"
        r"\nedit, forget, recall, remember\n</outside-data>",
    ):
        await unmapped.store(None, "x")

    mapped = await _memory(local_server, session, server, names=names)
    assert (await mapped.store(None, "Bins on Tuesday.")).content.startswith(
        "Saved memory"
    )


async def test_missing_memory_is_not_found(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """The server's 'not found' tool error becomes our MemoryNotFoundError, its
    words marked as outside data."""
    memory = await _memory(local_server, session, MemoryMcpServer())

    with pytest.raises(MemoryNotFoundError) as caught:
        await memory.delete(None, "42")
    assert str(caught.value) == (
        '<outside-data source="memory">\nMemory 42 not found\n</outside-data>'
    )


async def test_bad_token(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """A refused token says the user must fix it."""
    memory = await _memory(local_server, session, MemoryMcpServer(), token="wrong")

    with pytest.raises(
        ServiceAuthError, match=r"refused the request \(HTTP 401\).*bearer token"
    ):
        await memory.search(None, "x", 3)


async def test_expired_session_is_renewed(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """After the server forgets the session (404), the client initialises again once."""
    server = MemoryMcpServer()
    memory = await _memory(local_server, session, server)
    await memory.store(None, "Bins on Tuesday.")

    server.sessions.clear()
    result = await memory.store(None, "Recycling on Friday.")

    assert result.content == "Saved memory 2."
    assert server.methods.count("initialize") == 2


async def test_slow_server_times_out(
    local_server: StartServer, session: aiohttp.ClientSession
) -> None:
    """A stalled server gives a readable error within the timeout."""
    memory = await _memory(local_server, session, MemoryMcpServer(delay=5), wait=0.3)

    started = time.monotonic()
    with pytest.raises(ServiceUnavailableError, match=r"did not answer within 0\.3 s"):
        await memory.search(None, "x", 3)
    assert time.monotonic() - started < 1.5


async def test_server_down(session: aiohttp.ClientSession) -> None:
    """Nothing listening: a readable error."""
    memory = McpMemory(McpClient(session, "http://127.0.0.1:9/mcp", timeout=1))
    with pytest.raises(ServiceUnavailableError, match="Could not reach"):
        await memory.search(None, "x", 3)
