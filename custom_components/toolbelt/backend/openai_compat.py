"""ModelBackend for any OpenAI-compatible server, through the openai SDK.

It turns SDK objects into our small deltas and every SDK/httpx failure into a
BackendError, so nothing above this module knows HTTP. Reading is defensive
(getattr with defaults): local servers send all sorts of near-OpenAI shapes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
import contextlib
import json
import logging
import math
from typing import Any

import httpx
import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from ..toolcalls.text.surrogates import mend_surrogates
from .accumulate import ToolCallAccumulator
from .base import (
    DEFAULT_REQUEST_TIMEOUT,
    CompletionRequest,
    Delta,
    Finish,
    LogprobsDelta,
    ReasoningDelta,
    TextDelta,
    TokenLogprob,
    ToolCallDelta,
)
from .errors import (
    BackendAuthError,
    BackendBadRequestError,
    BackendBusyError,
    BackendConnectionError,
    BackendContextOverflowError,
    BackendError,
    BackendReplyTooLargeError,
    BackendResponseError,
    BackendServerError,
    BackendTimeoutError,
    BackendToolParseError,
)
from .sdk_compat import (
    BROKEN_STREAM_ERRORS,
    HTTP_ERRORS,
    TIMEOUT_ERRORS,
    TRANSPORT_ERRORS,
)
from .servers import ServerKind, is_tool_parse_error
from .sse import DONE, EventTooLargeError, sse_data, sse_lines
from .status import is_context_overflow, retry_after

_LOGGER = logging.getLogger(__name__)

LIST_MODELS_TIMEOUT = 10.0
# Sizes no real server reaches and a hostile one may not exceed. A reply (its
# text, reasoning and tool-call arguments together): nearly 8 characters per
# token of the longest answer an agent may ask for (32,768 tokens).
MAX_REPLY_CHARS = 256_000
# One server-sent event (its data lines together, each line too).
MAX_EVENT_CHARS = 2 * 1024 * 1024
# A body read whole: a reply asked for without streaming, the model list.
MAX_BODY_BYTES = 4 * 1024 * 1024
# The model list: ids kept, and the longest id kept (llama-server lists the
# model file's path).
MAX_MODELS = 1000
MAX_MODEL_ID_CHARS = 1024
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
# Alternatives read per token, whatever a server sends (we ask for at most 20).
_MAX_TOP_LOGPROBS = 32
# What the SDK and httpx raise for server trouble. Anything else is our own bug and
# propagates untouched.
_SOURCE_ERRORS = (TimeoutError, openai.OpenAIError, *HTTP_ERRORS, ValueError)
_NOT_OPENAI = "is not an OpenAI-compatible API (check that the URL ends with /v1)"


def warm_client(client: openai.AsyncOpenAI) -> None:
    """Do now what the SDK does on a client's first use: read platform details
    from disk and import its resource modules (chat, models: about a second of
    CPU, several on a slow or busy machine).

    Blocking: run it off the event loop before the first request, which would
    otherwise stall the loop and spend its own timeout on it.
    """
    client.platform_headers()
    _ = client.chat.completions, client.models


class OpenAICompatBackend:
    """Talks to one server through a caller-owned `openai.AsyncOpenAI` client."""

    def __init__(
        self, client: openai.AsyncOpenAI, *, kind: ServerKind, label: str
    ) -> None:
        """``kind``: the server's traits, which the loop and the check read here.

        ``label`` names the server in errors (e.g. "Ollama").
        """
        self._client = client
        self.kind = kind
        self.label = label
        self.list_models_timeout = LIST_MODELS_TIMEOUT

    # -- chat completions ----------------------------------------------------------

    def complete(self, request: CompletionRequest) -> AsyncGenerator[Delta]:
        """Yield the reply as deltas ending with one Finish; raise BackendError.

        request.timeout bounds the whole request, a stream that stalls included.
        """
        timeout = request.timeout or DEFAULT_REQUEST_TIMEOUT
        params = self._params(request, timeout)
        if request.stream:
            return self._stream(params)
        return self._whole(params)

    def _params(self, request: CompletionRequest, timeout: float) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": request.model,
            "messages": request.messages,
            "stream": request.stream,
            "timeout": timeout,
        }
        if request.tools:
            params["tools"] = request.tools
            if request.tool_choice is not None:
                params["tool_choice"] = request.tool_choice
        if request.response_format is not None:
            params["response_format"] = request.response_format
        if request.grammar is not None:
            params["extra_body"] = {"grammar": request.grammar}
        if request.stop:
            params["stop"] = request.stop
        if request.logprobs is not None:
            params["logprobs"] = True
            params["top_logprobs"] = request.logprobs
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.max_tokens is not None:
            params[self.kind.max_tokens_field] = request.max_tokens
        if request.stream and self.kind.stream_usage:
            params["stream_options"] = {"include_usage": True}
        if request.raw_text and request.tools:
            params.update(self.kind.raw_reply)
        return params

    async def _stream(self, params: dict[str, Any]) -> AsyncGenerator[Delta]:
        deadline = asyncio.get_running_loop().time() + params["timeout"]
        try:
            async with asyncio.timeout_at(deadline):
                stream = await self._client.chat.completions.create(**params)
        except _SOURCE_ERRORS as err:
            raise self._translate(err) from err
        # The SDK sent the request and checked the status; we read the body
        # (see sse.py for why), so its own stream iterator never starts.
        response = stream.response
        reader = _ChunkReader(self.kind.reasoning_fields)
        body = response.aiter_bytes()
        lines = sse_lines(body, MAX_EVENT_CHARS)
        payloads = sse_data(lines, MAX_EVENT_CHARS)
        try:
            while True:
                # A fresh deadline scope per read: the scope must never span a yield.
                try:
                    async with asyncio.timeout_at(deadline):
                        payload = await anext(payloads, None)
                except EventTooLargeError as err:
                    raise BackendReplyTooLargeError(
                        self.label, detail=str(err)
                    ) from err
                except _SOURCE_ERRORS as err:
                    raise self._translate(err) from err
                if payload is None or payload == DONE:
                    break
                deltas = reader.read(self._chunk(payload))
                self._check_size(reader.chars + reader.calls.chars)
                for delta in deltas:
                    yield delta
                # One network read may hold hundreds of events: let the rest of
                # Home Assistant run between them.
                await asyncio.sleep(0)
        finally:
            await response.aclose()
            # From the top: a generator that raised left those below it open.
            for source in (payloads, lines, body):
                await _finish_reading(source)
        if not reader.chunks:
            raise BackendResponseError(
                self.label, detail="the stream held no chat.completion.chunk"
            )
        yield Finish(reader.finish_reason, reader.usage, tuple(reader.calls.calls()))

    def _chunk(self, payload: str) -> ChatCompletionChunk:
        """One SSE payload as the SDK's chunk model, built leniently as the SDK does.

        An ``{"error": ...}`` payload is the server failing mid-reply.
        """
        try:
            data = json.loads(payload)
        except ValueError as err:
            raise BackendResponseError(
                self.label, detail=f"a stream event is not JSON: {payload[:200]!r}"
            ) from err
        if not isinstance(data, dict):
            raise BackendResponseError(
                self.label, detail=f"a stream event is not an object: {payload[:200]!r}"
            )
        if error := data.get("error"):
            raise self._server_error(None, _error_message(error))
        return ChatCompletionChunk.construct(**data)

    async def _whole(self, params: dict[str, Any]) -> AsyncGenerator[Delta]:
        create = self._client.chat.completions.with_streaming_response.create
        data = await self._read_json(create(**params), params["timeout"])
        completion = (
            ChatCompletion.construct(**data) if isinstance(data, dict) else data
        )
        choices = getattr(completion, "choices", None)
        message = getattr(choices[0], "message", None) if choices else None
        if message is None:
            raise BackendResponseError(self.label, detail=_describe(completion))
        deltas: list[Delta] = []
        if reasoning := _reasoning(message, self.kind.reasoning_fields):
            deltas.append(ReasoningDelta(reasoning))
        content = getattr(message, "content", None)
        if isinstance(content, str) and content:
            deltas.append(TextDelta(content))
        if logprobs := _logprobs(choices[0]):
            deltas.append(logprobs)
        calls = ToolCallAccumulator()
        for index, call in enumerate(getattr(message, "tool_calls", None) or ()):
            calls.add(_fragment(call, index))
        self._check_size(sum(map(_size, deltas)) + calls.chars)
        for delta in deltas:
            yield delta
        yield Finish(
            getattr(choices[0], "finish_reason", None) or None,
            _usage(getattr(completion, "usage", None)),
            tuple(calls.calls()),
        )

    def _check_size(self, chars: int) -> None:
        """A reply past ``MAX_REPLY_CHARS`` ends here, before any of its excess."""
        if chars > MAX_REPLY_CHARS:
            raise BackendReplyTooLargeError(
                self.label, detail=f"a reply longer than {MAX_REPLY_CHARS} characters"
            )

    async def _read_json(
        self, request: Any, seconds: float, not_json: str | None = None
    ) -> Any:
        """The JSON body of an SDK ``with_streaming_response`` request, read up to
        ``MAX_BODY_BYTES`` within ``seconds``. A body that is not JSON is a
        BackendResponseError (``not_json`` its reason); SDK and HTTP errors are
        translated."""
        try:
            async with asyncio.timeout(seconds), request as raw:
                body = await _read_body(raw.http_response, self.label)
        except BackendError:
            raise
        except _SOURCE_ERRORS as err:
            raise self._translate(err) from err
        try:
            return json.loads(body)
        except ValueError as err:
            raise BackendResponseError(
                self.label, not_json, detail=f"the body is not JSON: {body[:200]!r}"
            ) from err

    # -- models --------------------------------------------------------------------

    async def list_models(self) -> list[str]:
        """Model ids in the server's order; a non-OpenAI answer is BackendResponseError.

        Bounded by `self.list_models_timeout` (the config flow may lower it).
        """
        timeout = self.list_models_timeout
        request = self._client.models.with_streaming_response.list(timeout=timeout)
        try:
            body = await self._read_json(request, timeout, not_json=_NOT_OPENAI)
        except BackendBadRequestError as err:
            if err.status != 404:
                raise
            raise BackendResponseError(self.label, _NOT_OPENAI, detail="404") from err
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not all(
            isinstance(m, dict) and isinstance(m.get("id"), str) for m in data
        ):
            raise BackendResponseError(
                self.label, _NOT_OPENAI, detail=f"/models gave {str(body)[:200]}"
            )
        ids = dict.fromkeys(m["id"] for m in data)
        kept = [i for i in ids if _storable_id(i)]
        if len(kept) < len(ids):
            _LOGGER.warning(
                "%s lists %d model ids that are empty, longer than %d characters or"
                " not valid text (a lone surrogate); they are left out",
                self.label,
                len(ids) - len(kept),
                MAX_MODEL_ID_CHARS,
            )
        return kept[:MAX_MODELS]

    async def keep_alive(self, model: str, seconds: int) -> None:
        """Tell the server how long to keep ``model`` loaded (-1: always).

        Through the server kind's own request outside /v1 (Ollama's
        /api/generate without a prompt loads the model and sets it).
        """
        path = self.kind.keep_alive_path
        if path is None:
            return
        root = str(self._client.base_url).rstrip("/").removesuffix("/v1")
        try:
            async with asyncio.timeout(self.list_models_timeout):
                await self._client.with_options(base_url=root).post(
                    path,
                    body={"model": model, "keep_alive": seconds},
                    cast_to=httpx.Response,
                )
        except _SOURCE_ERRORS as err:
            raise self._translate(err) from err

    # -- errors --------------------------------------------------------------------

    def _translate(self, err: Exception) -> BackendError:
        """Map one of _SOURCE_ERRORS to the BackendError the user should hear."""
        label = self.label
        if isinstance(err, (TimeoutError, openai.APITimeoutError, *TIMEOUT_ERRORS)):
            return BackendTimeoutError(label)
        if isinstance(err, openai.APIStatusError):
            status, message = err.status_code, _server_message(err)
            if status in (401, 403):
                return BackendAuthError(label, detail=message)
            # Some servers answer an over-long prompt with a 500.
            if status == 413 or is_context_overflow(message):
                return BackendContextOverflowError(label, detail=message)
            if status >= 500:
                return self._server_error(status, message)
            if status == 429:
                return BackendBusyError(
                    label, retry_after=retry_after(err.response), detail=message
                )
            return BackendBadRequestError(label, status, message)
        if isinstance(err, openai.APIConnectionError):
            cause = err.__cause__
            if isinstance(cause, BROKEN_STREAM_ERRORS):
                return _broke_off(label, cause)
            return BackendConnectionError(label, detail=str(cause or err))
        if isinstance(err, TRANSPORT_ERRORS):
            # Raised raw by the SDK while a stream is being read.
            return _broke_off(label, err)
        if isinstance(err, openai.APIResponseValidationError):
            return BackendResponseError(label, detail=err.message)
        if isinstance(err, openai.APIError):
            # An {"error": ...} event inside an SSE stream.
            return BackendServerError(label, None, detail=_server_message(err))
        # JSONDecodeError, pydantic's ValidationError, other SDK errors: unreadable.
        return BackendResponseError(label, detail=f"{type(err).__name__}: {err}")

    def _server_error(self, status: int | None, message: str) -> BackendServerError:
        """A failed reply; the kind says whether its own tool parser failed."""
        if is_tool_parse_error(self.kind, message):
            return BackendToolParseError(self.label, status, detail=message)
        return BackendServerError(self.label, status, detail=message)


class _ChunkReader:
    """Turns chat.completion.chunk objects into deltas; remembers finish and usage,
    and joins tool-call fragments into whole calls (``calls``)."""

    __slots__ = (
        "_fields",
        "_started",
        "calls",
        "chars",
        "chunks",
        "finish_reason",
        "usage",
    )

    def __init__(self, reasoning_fields: tuple[str, ...]) -> None:
        self._fields = reasoning_fields
        self._started = 0  # tool calls begun, for servers that omit `index`
        self.chars = 0  # text and reasoning so far (``calls.chars``: the calls')
        self.chunks = 0
        self.calls = ToolCallAccumulator()
        self.finish_reason: str | None = None
        self.usage: dict[str, int] | None = None

    def read(self, chunk: Any) -> list[Delta]:
        self.chunks += 1
        if (usage := getattr(chunk, "usage", None)) is not None:
            self.usage = _usage(usage)
        choices = getattr(chunk, "choices", None)
        if not choices:
            return []
        choice = choices[0]
        out: list[Delta] = []
        delta = getattr(choice, "delta", None)
        if delta is not None:
            if reasoning := _reasoning(delta, self._fields):
                out.append(ReasoningDelta(reasoning))
            content = getattr(delta, "content", None)
            if isinstance(content, str) and content:
                out.append(TextDelta(content))
            for call in getattr(delta, "tool_calls", None) or ():
                self.calls.add(self._tool_delta(call))
        if logprobs := _logprobs(choice):
            out.append(logprobs)
        if reason := getattr(choice, "finish_reason", None):
            self.finish_reason = reason
        self.chars += sum(map(_size, out))
        return out

    def _tool_delta(self, call: Any) -> ToolCallDelta:
        index = getattr(call, "index", None)
        if not isinstance(index, int):
            # No index: a fragment with a name starts the next call, others continue.
            named = getattr(getattr(call, "function", None), "name", None)
            index = self._started if named else max(self._started - 1, 0)
        self._started = max(self._started, index + 1)
        return _fragment(call, index)


def _fragment(call: Any, index: int) -> ToolCallDelta:
    """One SDK tool-call (fragment) at ``index``, for ``ToolCallAccumulator``."""
    function = getattr(call, "function", None)
    return ToolCallDelta(
        index=index,
        id=getattr(call, "id", None) or None,
        name=getattr(function, "name", None) or None,
        arguments=_arguments_text(getattr(function, "arguments", None)),
    )


def _size(delta: Delta) -> int:
    """Characters a delta adds to the reply (what ``MAX_REPLY_CHARS`` counts)."""
    if isinstance(delta, TextDelta | ReasoningDelta):
        return len(delta.text)
    return 0


def _storable_id(model_id: str) -> bool:
    """An id a request can carry and HA can save: a short, valid text."""
    return 0 < len(model_id) <= MAX_MODEL_ID_CHARS and (
        mend_surrogates(model_id) == model_id
    )


async def _read_body(response: Any, label: str) -> bytes:
    """An httpx response's whole body, at most ``MAX_BODY_BYTES`` (decompressed)."""
    chunks = response.aiter_bytes()
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            await response.aclose()
            await _finish_reading(chunks)
            raise BackendReplyTooLargeError(
                label, detail=f"a body longer than {MAX_BODY_BYTES} bytes"
            )
    return bytes(body)


def _reasoning(obj: Any, fields: tuple[str, ...]) -> str:
    """The first non-empty reasoning field (extras on the SDK model)."""
    extra = getattr(obj, "model_extra", None)
    if not extra:
        return ""
    for name in fields:
        value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def _logprobs(choice: Any) -> LogprobsDelta | None:
    """A choice's token log-probabilities (OpenAI's ``logprobs.content``), if any.

    Entries without a token and a log-probability are skipped.
    """
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    tokens = []
    for item in content if isinstance(content, list) else ():
        token, logprob = getattr(item, "token", None), getattr(item, "logprob", None)
        if not isinstance(token, str) or not _is_logprob(logprob):
            continue
        alternatives = getattr(item, "top_logprobs", None)
        if not isinstance(alternatives, list):
            alternatives = []
        top = tuple(
            (alt.token, min(float(alt.logprob), 0.0))
            for alt in alternatives[:_MAX_TOP_LOGPROBS]
            if isinstance(getattr(alt, "token", None), str)
            and _is_logprob(getattr(alt, "logprob", None))
        )
        tokens.append(TokenLogprob(token, min(float(logprob), 0.0), top))
    return LogprobsDelta(tuple(tokens)) if tokens else None


def _is_logprob(value: Any) -> bool:
    """A number below +Infinity; -Infinity (an impossible token) is probability 0."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and value < math.inf  # NaN is not
    )


def _arguments_text(arguments: Any) -> str | None:
    """Arguments as text; some servers send a JSON object instead of a string."""
    if arguments is None or isinstance(arguments, str):
        return arguments or None
    return json.dumps(arguments)


def _usage(usage: Any) -> dict[str, int] | None:
    if usage is None:
        return None
    out = {k: v for k in _USAGE_KEYS if isinstance(v := getattr(usage, k, None), int)}
    return out or None


def _server_message(err: openai.APIError) -> str:
    """The server's own words from an error body, whatever its shape."""
    return _error_message(err.body) or err.message


def _error_message(body: Any) -> str:
    """The server's own words from an error body or event, whatever its shape."""
    if isinstance(body, Mapping):
        for key in ("message", "error", "detail"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
            if isinstance(value, Mapping) and isinstance(value.get("message"), str):
                return value["message"]
        return json.dumps(body, default=str)[:300]
    if isinstance(body, str) and body.strip():
        return body.strip()[:300]
    return ""


async def _finish_reading(payloads: AsyncIterator[str]) -> None:
    """End a body reader that stopped early, with every generator under it.

    Closing only the outer generator would leave httpx's generators below it
    for the garbage collector, which closes them later in stray tasks. With the
    response closed, one more read fails at the bottom, and the error ends
    each generator on its way up. A reader that already ended returns at once.
    """
    with contextlib.suppress(Exception):
        async with asyncio.timeout(1):
            async for _ in payloads:
                pass


def _broke_off(label: str, err: Exception) -> BackendResponseError:
    return BackendResponseError(
        label,
        "stopped answering mid-reply",
        detail=f"{type(err).__name__}: {err}",
        key="server_broke_off",
    )


def _describe(completion: Any) -> str:
    if isinstance(completion, str):
        return f"not a chat.completion: {completion[:200]!r}"
    extra = getattr(completion, "model_extra", None) or {}
    if "error" in extra:
        return f"error in body: {str(extra['error'])[:200]}"
    return "no choices[0].message in the reply"
