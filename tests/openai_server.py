"""A real OpenAI-compatible model server for tests: each test scripts the answers.

Why a real server: our client code must survive the real wire protocol (SSE framing,
chunk shapes, status codes, broken connections), so tests talk HTTP to this instead of
mocking the SDK. It binds 127.0.0.1 only, which pytest-homeassistant-custom-component
allows once the `socket_enabled` fixture is active.

Usage::

    async with OpenAIServer() as server:
        server.reply_tool_calls([{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}])
        server.reply_text("Done!", chunks=["Do", "ne!"])
        ...  # point a client at server.base_url
        assert server.requests[0].body["tools"]

A reply is scripted once and serves either a streamed or a non-streamed request: the
server answers in whichever mode the request asked for. Token log-probabilities
(``reply_tokens``) are sent in OpenAI's shape only when the request asks for them
(``logprobs: true``, ``top_logprobs: N``), as llama.cpp, vLLM and OpenAI do.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
import contextlib
from dataclasses import dataclass, field
import itertools
import json
import socket
import time
from typing import Any

from aiohttp import web
import pytest
import pytest_asyncio

AUTO = "auto"
NO_REPLY_MESSAGE = "no scripted reply"
GRAMMAR_WITH_TOOLS = "Cannot use custom grammar constraints with tools."
# A scripted delta's token log-probability entry; never sent inside the delta.
_LOGPROB = "_logprob"
# Irregular argument-fragment sizes, so accumulation bugs cannot hide behind even cuts.
_ODD_PIECES = (1, 5, 2, 9, 3, 4)


@dataclass(frozen=True, slots=True)
class Pause:
    """Put in a scripted chunk list: the server stalls this long before going on."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Raw:
    """Put in a scripted chunk list: `data: <obj as JSON>` sent as is, not wrapped in a
    chunk (e.g. Raw({"error": {"message": "out of memory"}}), as vLLM and llama.cpp
    report failures mid-stream). Streamed replies only; ignored when not streaming.
    """

    obj: Any


@dataclass(frozen=True, slots=True)
class Wire:
    """Put in a scripted chunk list: these bytes go on the wire as they are (no SSE
    framing added), to script what no well-behaved server sends: a line that never
    ends, characters JSON need not escape, any framing. Streamed replies only.
    """

    data: bytes


@dataclass(slots=True)
class RecordedRequest:
    """One request as the server received it, plus what it streamed back."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    # SSE chunk objects written, and time.monotonic() right after each write.
    chunks: list[dict[str, Any]] = field(default_factory=list)
    chunk_times: list[float] = field(default_factory=list)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages the client sent."""
        return self.body["messages"]

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        """The tools the client sent, or None."""
        return self.body.get("tools")

    @property
    def authorization(self) -> str | None:
        """The Authorization header, if any."""
        return self.headers.get("Authorization")


@dataclass(slots=True)
class _Reply:
    """One scripted answer, consumed by the next chat-completions request."""

    deltas: list[dict[str, Any] | Pause | Raw | Wire] = field(default_factory=list)
    finish_reason: str | None = AUTO
    usage: dict[str, int] | None = None
    delay: float = 0.0
    # Set by the test when the reply may start (after ``delay``).
    after: asyncio.Event | None = None
    status: int = 200
    error_body: Any = None
    error_headers: dict[str, str] | None = None
    garbage: str | None = None
    # Picks the real reply from the request body (see reply_when).
    choose: Callable[[Any], _Reply] | None = None


class OpenAIServer:
    """Scripted OpenAI chat-completions server on 127.0.0.1 with a random free port."""

    def __init__(
        self,
        *,
        models: Sequence[str] = ("test-model",),
        models_shape: str = "openai",
        require_api_key: str | None = None,
    ) -> None:
        """Set the /v1/models answer and an optional required API key.

        models_shape: "openai" (a real model list), "html" (200 with a web page),
        "not_found" (404 text), "json_other" (200 JSON that is not a model list),
        "server_error" (500). These attributes, and `models_delay` (seconds to hang
        before answering /v1/models), can be changed while running.
        """
        self.models = list(models)
        self.models_shape = models_shape
        # The whole /v1/models body, sent as is when set (a hostile or huge list).
        self.models_body: bytes | None = None
        # JSON as Python writes it by default (non-ASCII escaped); False writes it
        # as llama.cpp does, UTF-8 as is (U+2028 and U+0085 unescaped included).
        self.ascii_json = True
        self.models_delay = 0.0
        # Fields every /v1/models entry carries besides the OpenAI ones
        # (vLLM's max_model_len, llama-server's meta).
        self.model_fields: dict[str, Any] = {}
        # JSON answers of the server's own API on its root, by path (Ollama's
        # /api/ps and /api/show; bytes go out as they are); any other path is 404.
        self.native: dict[str, Any] = {}
        # Seconds to keep a stream open after `data: [DONE]` (a buffering proxy).
        self.hold_open_after_done = 0.0
        self.require_api_key = require_api_key
        # False: the server takes the logprobs fields and returns none (LM Studio,
        # Ollama before 0.12.11).
        self.logprobs = True
        # (status, message): a request with image content gets this error, as a
        # server whose model cannot see answers (see refuse_images).
        self.image_refusal: tuple[int, str] | None = None
        self.requests: list[RecordedRequest] = []
        self.all_requests: list[RecordedRequest] = []
        self._replies: deque[_Reply] = deque()
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self._call_ids = itertools.count(1)
        self.port = 0

    # -- lifecycle -----------------------------------------------------------------

    async def start(self) -> OpenAIServer:
        """Bind 127.0.0.1 on a free port and start serving."""
        # Requests of any real size (aiohttp alone would refuse more than 1 MiB).
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/v1/models", self._handle_models)
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        app.router.add_route("*", "/{path:(?!v1/).*}", self._handle_native)
        # handler_cancellation: a client that gives up (timeout test) stops its handler.
        self._runner = web.AppRunner(
            app, handler_cancellation=True, shutdown_timeout=0.5, access_log=None
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        """Stop serving; wakes every scripted pause so nothing lingers."""
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> OpenAIServer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def url(self) -> str:
        """Root URL, without /v1."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """OpenAI base URL (what a user types into the config flow)."""
        return f"{self.url}/v1"

    @property
    def pending(self) -> int:
        """Scripted replies not consumed yet."""
        return len(self._replies)

    async def requests_seen(self, count: int) -> None:
        """Wait until ``count`` chat requests have arrived (10 s at most)."""
        async with asyncio.timeout(10):
            while len(self.requests) < count:  # noqa: ASYNC110 - the server records, it does not signal
                await asyncio.sleep(0.01)

    @property
    def last_request(self) -> RecordedRequest:
        """The most recent chat-completions request."""
        return self.requests[-1]

    # -- scripting -----------------------------------------------------------------

    def reply(
        self,
        chunks: Iterable[dict[str, Any] | Pause | Raw | Wire],
        *,
        finish_reason: str | None = AUTO,
        usage: dict[str, int] | None = None,
        delay: float = 0.0,
        role: bool = True,
        after: asyncio.Event | None = None,
    ) -> None:
        """Queue a reply made of raw delta dicts (and Pause markers), sent as given.

        role: put `"role": "assistant"` into the first delta, as real servers do.
        after: the reply starts once this event is set (a model's first token
        that comes after something in HA happened, whatever the machine's speed).
        finish_reason: AUTO -> "tool_calls" if any delta has tool_calls, else "stop";
        None -> no finish chunk at all.
        """
        deltas = [c if isinstance(c, Pause | Raw | Wire) else dict(c) for c in chunks]
        if role:
            first = next((d for d in deltas if isinstance(d, dict)), None)
            if first is None:
                deltas.append({"role": "assistant"})
            else:
                first.setdefault("role", "assistant")
        self._replies.append(
            _Reply(
                deltas=deltas,
                finish_reason=finish_reason,
                usage=usage,
                delay=delay,
                after=after,
            )
        )

    def reply_when(
        self,
        predicate: Callable[[Any], bool],
        then: Callable[[], None],
        otherwise: Callable[[], None],
    ) -> None:
        """Queue one reply chosen by the request body, like a model that honours it.

        ``then()`` and ``otherwise()`` each script one reply with the other methods.
        """
        before = len(self._replies)
        then()
        otherwise()
        if len(self._replies) != before + 2:
            raise ValueError("then and otherwise must script one reply each")
        no, yes = self._replies.pop(), self._replies.pop()
        self._replies.append(_Reply(choose=lambda body: yes if predicate(body) else no))

    def reply_text(
        self,
        text: str,
        chunks: Sequence[str] | None = None,
        *,
        finish_reason: str | None = "stop",
        usage: dict[str, int] | None = None,
        delay: float = 0.0,
        chunk_delay: float = 0.0,
        after: asyncio.Event | None = None,
    ) -> None:
        """Queue a plain answer, streamed as `chunks` (default: word-sized pieces).

        Like OpenAI, the first chunk carries only the role and an empty content.
        """
        pieces = _checked_pieces(text, chunks)
        deltas: list[dict[str, Any] | Pause] = [{"role": "assistant", "content": ""}]
        for piece in pieces:
            if chunk_delay:
                deltas.append(Pause(chunk_delay))
            deltas.append({"content": piece})
        self.reply(
            deltas, finish_reason=finish_reason, usage=usage, delay=delay, after=after
        )

    def reply_tokens(
        self,
        tokens: Sequence[tuple[str, Mapping[str, float]]],
        *,
        finish_reason: str | None = "stop",
    ) -> None:
        """Queue an answer token by token, each with its likeliest alternatives.

        Each token is (text, {alternative: logprob}); the token's own logprob is
        its entry among the alternatives (else -0.01). Streamed, one chunk per
        token; the alternatives are sent best first, cut to the request's
        ``top_logprobs``.
        """
        deltas: list[dict[str, Any] | Pause] = [{"role": "assistant", "content": ""}]
        for text, top in tokens:
            entry = {
                "token": text,
                "logprob": top.get(text, -0.01),
                "bytes": list(text.encode()),
                "top_logprobs": [
                    {"token": alt, "logprob": logprob, "bytes": list(alt.encode())}
                    for alt, logprob in sorted(top.items(), key=lambda kv: -kv[1])
                ],
            }
            deltas.append({"content": text, _LOGPROB: entry})
        self.reply(deltas, finish_reason=finish_reason)

    def refuse_images(self, status: int, message: str) -> None:
        """From now on, answer a request with image content with this error."""
        self.image_refusal = (status, message)

    def reply_reasoning(
        self,
        reasoning: str,
        text: str = "",
        *,
        field: str = "reasoning_content",
        reasoning_chunks: Sequence[str] | None = None,
        chunks: Sequence[str] | None = None,
        usage: dict[str, int] | None = None,
        delay: float = 0.0,
        after: asyncio.Event | None = None,
    ) -> None:
        """Queue reasoning deltas, then the answer text.

        field: "reasoning_content" (llama.cpp, DeepSeek, LM Studio, older vLLM) or
        "reasoning" (Ollama, OpenRouter, newer vLLM).
        """
        deltas: list[dict[str, Any] | Pause] = [
            {field: piece} for piece in _checked_pieces(reasoning, reasoning_chunks)
        ]
        if text:
            deltas += [{"content": p} for p in _checked_pieces(text, chunks)]
        self.reply(deltas, usage=usage, delay=delay, after=after)

    def reply_tool_calls(
        self,
        calls: Sequence[dict[str, Any]],
        content: str | None = None,
        *,
        pieces: Sequence[int] = _ODD_PIECES,
        ids: bool = True,
        interleave: bool = False,
        finish_reason: str | None = "tool_calls",
        usage: dict[str, int] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Queue native tool calls, streamed as OpenAI does it.

        Each call is {"name": str, "arguments": dict | str, "id": optional str}; a str
        is sent verbatim (to script malformed JSON). The first fragment of a call has
        index, id, type and name; its arguments then arrive cut into `pieces`-sized
        fragments. interleave: alternate fragments between calls. ids=False: omit ids.
        """
        streams: list[list[dict[str, Any]]] = []
        for index, call in enumerate(calls):
            args = call.get("arguments", {})
            args_text = args if isinstance(args, str) else json.dumps(args)
            head: dict[str, Any] = {
                "index": index,
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
            if ids:
                head["id"] = call.get("id") or f"call_{next(self._call_ids):03d}"
            frags = [head] + [
                {"index": index, "function": {"arguments": piece}}
                for piece in _cut(args_text, pieces)
            ]
            streams.append(frags)
        if interleave:
            ordered = [
                f
                for group in itertools.zip_longest(*streams)
                for f in group
                if f is not None
            ]
        else:
            ordered = [f for s in streams for f in s]
        deltas: list[dict[str, Any] | Pause] = []
        if content:
            deltas.append({"role": "assistant", "content": content})
        for n, frag in enumerate(ordered):
            delta: dict[str, Any] = {"tool_calls": [frag]}
            if n == 0 and not content:
                delta = {"role": "assistant", "content": None, **delta}
            deltas.append(delta)
        self.reply(deltas, finish_reason=finish_reason, usage=usage, delay=delay)

    def reply_error(
        self,
        status: int,
        body: Any = None,
        *,
        message: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Queue an HTTP error. body: dict (sent as JSON) or str (text/plain).

        Default body is OpenAI's error shape with `message`; `headers` are sent
        with it (Retry-After on a 429, say).
        """
        if body is None:
            body = _error_body(message or f"scripted error {status}", status)
        self._replies.append(
            _Reply(status=status, error_body=body, error_headers=headers)
        )

    def reply_garbage(self, kind: str = "not_json") -> None:
        """Queue a broken 200 answer.

        "not_json": an HTML page labelled application/json (both modes).
        "broken_json": streamed, one good chunk then a chunk cut mid-JSON;
                       non-streamed, a truncated JSON body.
        "cut": the connection drops mid-body (streamed after one good chunk).
        """
        if kind not in ("not_json", "broken_json", "cut"):
            raise ValueError(f"unknown garbage kind {kind!r}")
        self._replies.append(_Reply(garbage=kind))

    def reply_delay(self, seconds: float, text: str = "Sorry, I was slow.") -> None:
        """Queue a reply that hangs `seconds` before any byte (to test timeouts)."""
        self.reply_text(text, delay=seconds)

    # -- handlers ------------------------------------------------------------------

    def _record(self, request: web.Request, body: Any) -> RecordedRequest:
        rec = RecordedRequest(
            method=request.method,
            path=request.path,
            headers=dict(request.headers),
            body=body,
        )
        self.all_requests.append(rec)
        return rec

    def _auth_failure(self, request: web.Request) -> web.Response | None:
        if self.require_api_key is None:
            return None
        if request.headers.get("Authorization") == f"Bearer {self.require_api_key}":
            return None
        sent = request.headers.get("Authorization", "").removeprefix("Bearer ")
        body = _error_body(
            f"Incorrect API key provided: {sent[:6]}***.",
            401,
            code="invalid_api_key",
        )
        return web.json_response(body, status=401)

    async def _handle_models(self, request: web.Request) -> web.StreamResponse:
        self._record(request, None)
        if failure := self._auth_failure(request):
            return failure
        if self.models_delay and not await self._sleep(self.models_delay):
            return web.Response(status=503)
        if self.models_body is not None:
            return web.Response(body=self.models_body, content_type="application/json")
        shape = self.models_shape
        if shape == "html":
            return web.Response(
                text="<html><body><h1>Welcome to my router</h1></body></html>",
                content_type="text/html",
            )
        if shape == "not_found":
            return web.Response(status=404, text="404 page not found")
        if shape == "json_other":
            return web.json_response({"status": "ok", "version": "1.2.3"})
        if shape == "server_error":
            return web.json_response(_error_body("models broke", 500), status=500)
        data = [
            {
                "id": m,
                "object": "model",
                "created": 0,
                "owned_by": "toolbelt-tests",
                **self.model_fields,
            }
            for m in self.models
        ]
        return web.json_response({"object": "list", "data": data})

    async def _handle_native(self, request: web.Request) -> web.StreamResponse:
        """The server's own API (``native``): the answer set for the path."""
        body = await request.json() if request.can_read_body else None
        self._record(request, body)
        if failure := self._auth_failure(request):
            return failure
        if request.path not in self.native:
            return web.Response(status=404, text="404 page not found")
        answer = self.native[request.path]
        if isinstance(answer, bytes):  # sent as it is
            return web.Response(body=answer, content_type="application/json")
        return web.json_response(answer)

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            self._record(request, None)
            return web.json_response(
                _error_body("request body is not JSON", 400), status=400
            )
        rec = self._record(request, body)
        self.requests.append(rec)
        if failure := self._auth_failure(request):
            return failure
        if body.get("grammar") and body.get("tools"):
            # As llama-server answers (the only server that takes a grammar).
            return web.json_response(_error_body(GRAMMAR_WITH_TOOLS, 400), status=400)
        if self.image_refusal is not None and _has_images(body):
            status, message = self.image_refusal
            return web.json_response(_error_body(message, status), status=status)
        if not self._replies:
            return web.json_response(_error_body(NO_REPLY_MESSAGE, 500), status=500)
        reply = self._replies.popleft()
        if reply.choose is not None:
            reply = reply.choose(body)
        if reply.delay and not await self._sleep(reply.delay):
            return web.Response(status=503)
        if reply.after is not None and not await self._wait(reply.after):
            return web.Response(status=503)
        if reply.status != 200:
            if isinstance(reply.error_body, str):
                return web.Response(
                    status=reply.status,
                    text=reply.error_body,
                    headers=reply.error_headers,
                )
            return web.json_response(
                reply.error_body, status=reply.status, headers=reply.error_headers
            )
        model = body.get("model", "unknown")
        if reply.garbage:
            return await self._send_garbage(request, rec, reply.garbage, model)
        if body.get("stream"):
            include_usage = bool(
                (body.get("stream_options") or {}).get("include_usage")
            )
            return await self._stream(
                request, rec, reply, model, include_usage, self._top_logprobs(body)
            )
        pause = sum(d.seconds for d in reply.deltas if isinstance(d, Pause))
        if pause and not await self._sleep(pause):
            return web.Response(status=503)
        return web.json_response(_completion(reply, model, self._top_logprobs(body)))

    async def _stream(
        self,
        request: web.Request,
        rec: RecordedRequest,
        reply: _Reply,
        model: str,
        include_usage: bool,
        top_logprobs: int | None,
    ) -> web.StreamResponse:
        resp = await self._open_sse(request)
        base = _chunk_base(model)
        for delta in reply.deltas:
            if isinstance(delta, Pause):
                if not await self._sleep(delta.seconds):
                    return resp
                continue
            if isinstance(delta, Raw):
                await resp.write(f"data: {json.dumps(delta.obj)}\n\n".encode())
                continue
            if isinstance(delta, Wire):
                await resp.write(delta.data)
                continue
            entries = [delta[_LOGPROB]] if _LOGPROB in delta else []
            chunk = {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {k: v for k, v in delta.items() if k != _LOGPROB},
                        "logprobs": _logprobs(entries, top_logprobs),
                        "finish_reason": None,
                    }
                ],
            }
            await self._send_chunk(resp, rec, chunk, include_usage)
        finish = _finish_reason(reply)
        if finish is not None:
            chunk = {
                **base,
                "choices": [
                    {"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}
                ],
            }
            await self._send_chunk(resp, rec, chunk, include_usage)
        if include_usage:
            chunk = {**base, "choices": [], "usage": _usage(reply)}
            await self._send_chunk(resp, rec, chunk, False)
        await resp.write(b"data: [DONE]\n\n")
        if self.hold_open_after_done and not await self._sleep(
            self.hold_open_after_done
        ):
            return resp
        await resp.write_eof()
        return resp

    async def _send_garbage(
        self, request: web.Request, rec: RecordedRequest, kind: str, model: str
    ) -> web.StreamResponse:
        stream = bool(rec.body.get("stream"))
        if kind == "not_json":
            return web.Response(
                text="<html><body>502 Bad Gateway</body></html>",
                content_type="application/json",
            )
        good = {
            **_chunk_base(model),
            "choices": [
                {
                    "index": 0,
                    "delta": {"role": "assistant", "content": "Hel"},
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
        }
        if kind == "broken_json":
            if not stream:
                return web.Response(
                    text='{"id": "chatcmpl-1", "choices": [{"mess',
                    content_type="application/json",
                )
            resp = await self._open_sse(request)
            await self._send_chunk(resp, rec, good, False)
            await resp.write(b'data: {"choices": [{"delta": {"content": "lo\n\n')
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
            return resp
        # "cut": promise more than we send, then drop the connection.
        if stream:
            resp = await self._open_sse(request)
            await self._send_chunk(resp, rec, good, False)
        else:
            resp = web.StreamResponse(headers={"Content-Type": "application/json"})
            resp.content_length = 4096
            await resp.prepare(request)
            await resp.write(b'{"id": "chatcmpl-1", ')
        await asyncio.sleep(0.01)  # let the client read what was sent
        if request.transport is not None:
            request.transport.abort()
        return resp

    # -- helpers -------------------------------------------------------------------

    def _top_logprobs(self, body: Any) -> int | None:
        """How many alternatives to send per token; None: no logprobs at all."""
        if not (self.logprobs and body.get("logprobs")):
            return None
        return int(body.get("top_logprobs") or 0)

    @staticmethod
    async def _open_sse(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await resp.prepare(request)
        return resp

    async def _send_chunk(
        self,
        resp: web.StreamResponse,
        rec: RecordedRequest,
        chunk: dict[str, Any],
        include_usage: bool,
    ) -> None:
        if include_usage:
            chunk = {**chunk, "usage": None}
        text = json.dumps(chunk, ensure_ascii=self.ascii_json)
        await resp.write(f"data: {text}\n\n".encode())
        rec.chunks.append(chunk)
        rec.chunk_times.append(time.monotonic())

    async def _wait(self, event: asyncio.Event, seconds: float = 30.0) -> bool:
        """Wait for ``event`` (at most ``seconds``). False if the server closes first."""
        closing = asyncio.ensure_future(self._closing.wait())
        waiting = asyncio.ensure_future(event.wait())
        try:
            await asyncio.wait(
                (closing, waiting),
                timeout=seconds,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            closing.cancel()
            waiting.cancel()
        return not self._closing.is_set()

    async def _sleep(self, seconds: float) -> bool:
        """Sleep, but wake at once when the server closes. False if closing."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._closing.wait()
        return not self._closing.is_set()


# -- wire shapes ---------------------------------------------------------------------


def _error_body(
    message: str, status: int, *, code: str | None = None
) -> dict[str, Any]:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _chunk_base(model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-toolbelt-test",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_toolbelt",
    }


def _finish_reason(reply: _Reply) -> str | None:
    if reply.finish_reason != AUTO:
        return reply.finish_reason
    has_calls = any(isinstance(d, dict) and d.get("tool_calls") for d in reply.deltas)
    return "tool_calls" if has_calls else "stop"


def _usage(reply: _Reply) -> dict[str, int]:
    if reply.usage is not None:
        return reply.usage
    completion = sum(1 for d in reply.deltas if isinstance(d, dict))
    return {
        "prompt_tokens": 42,
        "completion_tokens": completion,
        "total_tokens": 42 + completion,
    }


def _completion(
    reply: _Reply, model: str, top_logprobs: int | None = None
) -> dict[str, Any]:
    """Fold the scripted deltas into one non-streamed chat.completion."""
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    calls: dict[int, dict[str, Any]] = {}
    entries: list[dict[str, Any]] = []
    for delta in reply.deltas:
        if isinstance(delta, Pause | Raw | Wire):
            continue
        for key, value in delta.items():
            if key == _LOGPROB:
                entries.append(value)
            elif key == "tool_calls":
                for frag in value:
                    call = calls.setdefault(
                        frag.get("index", len(calls)),
                        {
                            "id": None,
                            "type": "function",
                            "function": {"name": "", "arguments": ""},
                        },
                    )
                    call["id"] = frag.get("id") or call["id"]
                    fn = frag.get("function") or {}
                    call["function"]["name"] += fn.get("name") or ""
                    call["function"]["arguments"] += fn.get("arguments") or ""
            elif key != "role" and isinstance(value, str):
                message[key] = (message.get(key) or "") + value
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {
        "id": "chatcmpl-toolbelt-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_toolbelt",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": _logprobs(entries, top_logprobs),
                "finish_reason": _finish_reason(reply),
            }
        ],
        "usage": _usage(reply),
    }


def _logprobs(
    entries: list[dict[str, Any]], top_logprobs: int | None
) -> dict[str, Any] | None:
    """A choice's ``logprobs`` field: None unless asked for and there are tokens."""
    if top_logprobs is None or not entries:
        return None
    content = [
        {**entry, "top_logprobs": entry["top_logprobs"][:top_logprobs]}
        for entry in entries
    ]
    return {"content": content, "refusal": None}


def _has_images(body: Any) -> bool:
    """Whether any message of the request carries an image part."""
    return any(
        isinstance(part, dict) and part.get("type") == "image_url"
        for message in body.get("messages") or ()
        if isinstance(message, dict) and isinstance(message.get("content"), list)
        for part in message["content"]
    )


def _checked_pieces(text: str, pieces: Sequence[str] | None) -> list[str]:
    """Pieces that join to `text`; default word-sized pieces, like a tokenizer."""
    if pieces is None:
        words = text.split(" ")
        return [w + " " for w in words[:-1]] + ([words[-1]] if words[-1] else [])
    if "".join(pieces) != text:
        raise ValueError(f"chunks {pieces!r} do not join to {text!r}")
    return list(pieces)


def _cut(text: str, sizes: Sequence[int]) -> list[str]:
    out: list[str] = []
    pos = 0
    for size in itertools.cycle(sizes):
        if pos >= len(text):
            return out
        out.append(text[pos : pos + size])
        pos += size
    return out  # pragma: no cover - cycle never ends


# -- pytest fixtures -----------------------------------------------------------------


@pytest_asyncio.fixture
async def openai_server(socket_enabled: None) -> AsyncIterator[OpenAIServer]:
    """A started OpenAIServer with default options, closed after the test."""
    async with OpenAIServer() as server:
        yield server


@pytest_asyncio.fixture
async def openai_server_factory(
    socket_enabled: None,
) -> AsyncIterator[Callable[..., Awaitable[OpenAIServer]]]:
    """Start servers with options: `server = await openai_server_factory(require_api_key="sk-1")`."""
    servers: list[OpenAIServer] = []

    async def _make(**options: Any) -> OpenAIServer:
        server = await OpenAIServer(**options).start()
        servers.append(server)
        return server

    yield _make
    for server in servers:
        await server.close()


@pytest.fixture
def closed_port_url(socket_enabled: None) -> str:
    """A base URL where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
