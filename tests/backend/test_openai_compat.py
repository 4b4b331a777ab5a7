"""OpenAICompatBackend over real HTTP to the scripted server: replies, requests, errors."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from custom_components.toolbelt.backend.base import (
    Finish,
    LogprobsDelta,
    ReasoningDelta,
    TextDelta,
    TokenLogprob,
)
from custom_components.toolbelt.backend.errors import (
    BackendAuthError,
    BackendBadRequestError,
    BackendConnectionError,
    BackendReplyTooLargeError,
    BackendResponseError,
    BackendServerError,
    BackendTimeoutError,
)
from custom_components.toolbelt.backend.openai_compat import (
    MAX_BODY_BYTES,
    MAX_EVENT_CHARS,
    MAX_MODEL_ID_CHARS,
    MAX_MODELS,
    MAX_REPLY_CHARS,
    OpenAICompatBackend,
)
from tests.openai_server import OpenAIServer, Pause, Raw, Wire

from .common import LABEL, ask, collect, collect_until_error, open_backend

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "HassTurnOn",
            "description": "Turns on a device",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "area": {"type": "string"}},
            },
        },
    }
]
CALLS = [
    {"name": "HassTurnOn", "arguments": {"name": "kitchen light", "area": "Küche"}},
    {"name": "HassTurnOff", "arguments": {"name": "garage door"}},
]


def _text(deltas: list) -> str:
    return "".join(d.text for d in deltas if isinstance(d, TextDelta))


def _reasoning(deltas: list) -> str:
    return "".join(d.text for d in deltas if isinstance(d, ReasoningDelta))


def _calls(deltas: list) -> list[tuple[str | None, str, dict]]:
    """The whole calls the reply ends with (on its ``Finish``, the last delta)."""
    assert all(not isinstance(d, Finish) for d in deltas[:-1])
    return [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in deltas[-1].tool_calls
    ]


# -- replies ---------------------------------------------------------------------------


async def test_streamed_text_arrives_chunk_by_chunk_then_finish_with_usage(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply_text("Done!", chunks=["Do", "ne!"])

    deltas = await collect(backend, ask())

    assert deltas == [
        TextDelta("Do"),
        TextDelta("ne!"),
        Finish(
            "stop", {"prompt_tokens": 42, "completion_tokens": 3, "total_tokens": 45}
        ),
    ]
    assert openai_server.last_request.body["stream"] is True
    assert openai_server.last_request.body["stream_options"] == {"include_usage": True}


async def test_kind_without_stream_usage_sends_no_stream_options(
    openai_server: OpenAIServer,
) -> None:
    openai_server.reply_text("Hi there")
    async with open_backend(openai_server.base_url, kind="other") as backend:
        deltas = await collect(backend, ask())

    assert _text(deltas) == "Hi there"
    assert deltas[-1] == Finish("stop", None)
    assert "stream_options" not in openai_server.last_request.body


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_streamed_reasoning_is_kept_apart_from_text(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, field: str
) -> None:
    openai_server.reply_reasoning(
        "The user wants light.", "Turning it on.", field=field
    )

    deltas = await collect(backend, ask())

    assert _reasoning(deltas) == "The user wants light."
    assert _text(deltas) == "Turning it on."
    first_text = next(i for i, d in enumerate(deltas) if isinstance(d, TextDelta))
    assert all(not isinstance(d, ReasoningDelta) for d in deltas[first_text:])


async def test_reasoning_sent_under_both_names_is_not_doubled(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    # vLLM sent the same text as `reasoning` and `reasoning_content` for a while.
    openai_server.reply(
        [
            {"reasoning": "Hmm.", "reasoning_content": "Hmm."},
            {"reasoning": " Ok.", "reasoning_content": " Ok."},
            {"content": "Yes."},
        ]
    )

    deltas = await collect(backend, ask())

    assert _reasoning(deltas) == "Hmm. Ok."
    assert _text(deltas) == "Yes."


@pytest.mark.parametrize("interleave", [False, True])
async def test_two_streamed_tool_calls_are_accumulated_by_index(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, interleave: bool
) -> None:
    openai_server.reply_tool_calls(CALLS, interleave=interleave)

    deltas = await collect(backend, ask(tools=TOOLS))

    # The arguments really arrived in many small fragments, and came out whole.
    chunks = openai_server.last_request.chunks
    sent = [choice["delta"] for c in chunks for choice in c["choices"]]
    assert sum("tool_calls" in d for d in sent) > 10
    calls = _calls(deltas)
    assert [(name, args) for _, name, args in calls] == [
        (c["name"], c["arguments"]) for c in CALLS
    ]
    assert all(id_ and id_.startswith("call_") for id_, _, _ in calls)
    assert calls[0][0] != calls[1][0]
    assert deltas[-1].reason == "tool_calls"
    assert _text(deltas) == ""


async def test_tool_call_fragments_without_index_or_id_still_make_two_calls(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply(
        [
            {"tool_calls": [{"function": {"name": "HassTurnOn", "arguments": '{"na'}}]},
            {"tool_calls": [{"function": {"arguments": 'me": "lamp"}'}}]},
            {"tool_calls": [{"function": {"name": "HassTurnOff", "arguments": "{}"}}]},
        ]
    )

    deltas = await collect(backend, ask(tools=TOOLS))

    assert _calls(deltas) == [
        (None, "HassTurnOn", {"name": "lamp"}),
        (None, "HassTurnOff", {}),
    ]


async def test_text_before_tool_calls_is_streamed_as_text(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply_tool_calls(CALLS[:1], content="One moment.")

    deltas = await collect(backend, ask(tools=TOOLS))

    assert deltas[0] == TextDelta("One moment.")
    assert [name for _, name, _ in _calls(deltas)] == ["HassTurnOn"]


async def test_non_streamed_reply_gives_the_same_deltas(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    usage = {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127}
    openai_server.reply_reasoning("Think.", "All done.", usage=usage)
    openai_server.reply_tool_calls(CALLS, content="Sure.")

    first = await collect(backend, ask(stream=False))
    second = await collect(backend, ask(stream=False, tools=TOOLS))

    assert first == [
        ReasoningDelta("Think."),
        TextDelta("All done."),
        Finish("stop", usage),
    ]
    assert _text(second) == "Sure."
    assert [(n, a) for _, n, a in _calls(second)] == [
        (c["name"], c["arguments"]) for c in CALLS
    ]
    assert second[-1].reason == "tool_calls"
    assert openai_server.requests[0].body["stream"] is False
    assert "stream_options" not in openai_server.requests[0].body


async def test_request_carries_messages_tools_stop_and_sampling(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply_text("ok")
    messages = [
        {"role": "system", "content": "You control a house."},
        {"role": "user", "content": "lights on"},
    ]
    request = ask(
        tools=TOOLS,
        stop=["</tool_call>", "Observation:"],
        temperature=0.2,
        max_tokens=64,
    )
    request.messages = messages

    await collect(backend, request)

    sent = openai_server.last_request
    assert sent.messages == messages
    assert sent.tools == TOOLS
    assert sent.body["stop"] == ["</tool_call>", "Observation:"]
    assert sent.body["temperature"] == 0.2
    assert sent.body["max_tokens"] == 64
    assert sent.body["model"] == "test-model"
    assert sent.authorization == "Bearer sk-test-123"


async def test_empty_options_are_not_sent(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply_text("ok")

    await collect(backend, ask(tools=[], stop=[]))

    body = openai_server.last_request.body
    assert not {"tools", "stop", "temperature", "max_tokens"} & body.keys()
    assert not {"logprobs", "top_logprobs"} & body.keys()


@pytest.mark.parametrize("stream", [True, False])
async def test_token_logprobs_are_asked_for_and_read(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, stream: bool
) -> None:
    openai_server.reply_tokens(
        [("Yes", {"Yes": -0.25, " yes": -2.0, "No": -3.0}), (".", {".": -0.5})]
    )

    deltas = await collect(backend, ask(stream=stream, logprobs=2))

    body = openai_server.last_request.body
    assert (body["logprobs"], body["top_logprobs"]) == (True, 2)
    tokens = [t for d in deltas if isinstance(d, LogprobsDelta) for t in d.tokens]
    assert tokens == [
        TokenLogprob("Yes", -0.25, (("Yes", -0.25), (" yes", -2.0))),
        TokenLogprob(".", -0.5, ((".", -0.5),)),
    ]
    assert _text(deltas) == "Yes."


async def test_odd_logprob_entries_are_skipped_or_mended(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    entries = [
        {"token": 5, "logprob": -1.0},
        {"token": "a", "logprob": "high"},
        {"token": "b", "logprob": float("nan")},
        {"token": "Yes", "logprob": 1e-7, "top_logprobs": {"Yes": 0}},
        {
            "token": "No",
            "logprob": -0.5,
            "top_logprobs": [{"token": "No", "logprob": -0.5}, {"logprob": -1}],
        },
    ]
    choice = {
        "index": 0,
        "delta": {"content": "YesNo"},
        "logprobs": {"content": entries},
    }
    openai_server.reply(
        [
            Raw(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": "m",
                    "choices": [choice],
                }
            )
        ]
    )

    deltas = await collect(backend, ask(logprobs=20))

    (delta,) = [d for d in deltas if isinstance(d, LogprobsDelta)]
    assert delta.tokens == (
        TokenLogprob("Yes", 0.0, ()),
        TokenLogprob("No", -0.5, (("No", -0.5),)),
    )


@pytest.mark.parametrize("stream", [True, False])
async def test_a_server_that_returns_no_logprobs_gives_none(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, stream: bool
) -> None:
    openai_server.logprobs = False
    openai_server.reply_tokens([("Yes", {"Yes": -0.25})])

    deltas = await collect(backend, ask(stream=stream, logprobs=20))

    assert not [d for d in deltas if isinstance(d, LogprobsDelta)]
    assert _text(deltas) == "Yes"


async def test_openai_kind_uses_max_completion_tokens(
    openai_server: OpenAIServer,
) -> None:
    openai_server.reply_text("ok")
    async with open_backend(openai_server.base_url, kind="openai") as backend:
        await collect(backend, ask(max_tokens=50))

    assert openai_server.last_request.body["max_completion_tokens"] == 50
    assert "max_tokens" not in openai_server.last_request.body


async def test_stopping_early_closes_the_stream(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply_text("a b c d e f g h", chunk_delay=0.05)
    openai_server.reply_text("second")

    stream = backend.complete(ask())
    assert await anext(stream) == TextDelta("a ")
    await stream.aclose()
    deltas = await collect(backend, ask())
    await asyncio.sleep(0.1)

    assert _text(deltas) == "second"
    # The server saw the disconnect and stopped writing the first reply.
    assert len(openai_server.requests[0].chunks) < 4


async def test_done_ends_the_reply_even_if_the_server_keeps_the_body_open(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    """A proxy that holds the connection after [DONE] must not time the turn out."""
    openai_server.hold_open_after_done = 30
    openai_server.reply_text("The light is on.", usage={"total_tokens": 9})
    request = ask()
    request.timeout = 5

    deltas = await collect(backend, request)

    assert _text(deltas) == "The light is on."
    assert isinstance(deltas[-1], Finish)
    assert deltas[-1].reason == "stop"


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_wrong_api_key_is_an_auth_error(
    openai_server_factory, stream: bool
) -> None:
    server = await openai_server_factory(require_api_key="sk-right")
    server.reply_text("never")
    async with open_backend(server.base_url, api_key="sk-wrong") as backend:
        with pytest.raises(BackendAuthError) as err:
            await collect(backend, ask(stream=stream))

    assert err.value.server == LABEL
    assert "Incorrect API key" in str(err.value)
    assert server.pending == 1


async def test_right_api_key_is_accepted(openai_server_factory) -> None:
    server = await openai_server_factory(require_api_key="sk-right")
    server.reply_text("welcome")
    async with open_backend(server.base_url, api_key="sk-right") as backend:
        assert _text(await collect(backend, ask())) == "welcome"


@pytest.mark.parametrize("stream", [True, False])
async def test_server_500_is_a_server_error_with_status(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, stream: bool
) -> None:
    openai_server.reply_error(500, message="CUDA out of memory")

    with pytest.raises(BackendServerError) as err:
        await collect(backend, ask(stream=stream))

    assert err.value.status == 500
    assert "CUDA out of memory" in str(err.value)
    assert err.value.reason == "had an internal error (HTTP 500)"


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        # llama.cpp / OpenAI shape
        (
            400,
            {"error": {"code": 400, "message": "Unknown role: tool", "type": "x"}},
            "Unknown role: tool",
        ),
        # vLLM shape: no "error" wrapper
        (
            400,
            {"object": "error", "message": "'stop' is not supported", "code": 400},
            "'stop' is not supported",
        ),
        # Ollama: unknown model
        (
            404,
            {"error": {"message": 'model "qwen9" not found, try pulling it first'}},
            'model "qwen9" not found, try pulling it first',
        ),
        # plain text
        (422, "bad field: tools", "bad field: tools"),
    ],
)
async def test_rejected_request_carries_the_servers_message(
    openai_server: OpenAIServer,
    backend: OpenAICompatBackend,
    status: int,
    body: object,
    message: str,
) -> None:
    openai_server.reply_error(status, body)

    with pytest.raises(BackendBadRequestError) as err:
        await collect(backend, ask())

    assert err.value.status == status
    assert err.value.message == message
    assert err.value.reason == f"rejected the request: {message}"


async def test_unscripted_request_fails_loudly(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    with pytest.raises(BackendServerError, match="no scripted reply"):
        await collect(backend, ask())


@pytest.mark.parametrize("kind", ["not_json", "broken_json", "cut"])
@pytest.mark.parametrize("stream", [True, False])
async def test_garbage_reply_is_a_response_error(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, kind: str, stream: bool
) -> None:
    openai_server.reply_garbage(kind)

    with pytest.raises(BackendResponseError) as err:
        await collect(backend, ask(stream=stream))

    assert err.value.server == LABEL


async def test_error_event_inside_the_stream_is_a_server_error(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply(
        [{"content": "Turning"}, Raw({"error": {"message": "context overflow"}})]
    )
    received, err = await collect_until_error(backend, ask())

    assert received == [TextDelta("Turning")]
    assert isinstance(err, BackendServerError)
    assert "context overflow" in str(err)


async def test_closed_port_is_a_connection_error(closed_port_url: str) -> None:
    async with open_backend(closed_port_url) as backend:
        with pytest.raises(BackendConnectionError) as err:
            await collect(backend, ask())

    assert err.value.reason == "could not be reached"
    assert str(err.value).startswith(f"{LABEL} could not be reached")


@pytest.mark.parametrize("stream", [True, False])
async def test_server_that_hangs_times_out(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, stream: bool
) -> None:
    openai_server.reply_delay(5)
    start = time.monotonic()

    with pytest.raises(BackendTimeoutError):
        await collect(backend, ask(stream=stream, timeout=0.3))

    assert time.monotonic() - start < 1.5


async def test_stream_that_stalls_between_chunks_times_out(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply([{"content": "Hel"}, Pause(5), {"content": "lo"}])
    start = time.monotonic()

    received, err = await collect_until_error(backend, ask(timeout=0.3))

    assert isinstance(err, BackendTimeoutError)
    assert received == [TextDelta("Hel")]
    assert time.monotonic() - start < 1.5


async def test_trickling_stream_is_bounded_by_the_whole_request_timeout(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    # No single gap exceeds the timeout, but the whole reply does.
    openai_server.reply_text("a b c d e f g h i j k l", chunk_delay=0.1)
    start = time.monotonic()

    with pytest.raises(BackendTimeoutError):
        await collect(backend, ask(timeout=0.5))

    assert time.monotonic() - start < 1.5


# -- list_models -----------------------------------------------------------------------


async def test_list_models_returns_ids_and_sends_the_key(
    openai_server_factory,
) -> None:
    server = await openai_server_factory(
        models=["qwen3:4b", "llama3.2:3b"], require_api_key="sk-test-123"
    )
    async with open_backend(server.base_url) as backend:
        assert await backend.list_models() == ["qwen3:4b", "llama3.2:3b"]

    assert server.all_requests[0].path == "/v1/models"
    assert server.all_requests[0].authorization == "Bearer sk-test-123"


@pytest.mark.parametrize("shape", ["html", "not_found", "json_other"])
async def test_list_models_on_a_non_openai_server_says_so(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, shape: str
) -> None:
    openai_server.models_shape = shape

    with pytest.raises(BackendResponseError) as err:
        await backend.list_models()

    assert "not an OpenAI-compatible API" in err.value.reason


async def test_list_models_without_v1_in_the_url_says_not_openai(
    openai_server: OpenAIServer,
) -> None:
    async with open_backend(openai_server.url) as backend:
        with pytest.raises(BackendResponseError, match="ends with /v1"):
            await backend.list_models()


async def test_list_models_errors_map_like_completions(
    openai_server_factory, closed_port_url: str
) -> None:
    locked = await openai_server_factory(require_api_key="sk-other")
    broken = await openai_server_factory(models_shape="server_error")

    async with open_backend(locked.base_url) as backend:
        with pytest.raises(BackendAuthError):
            await backend.list_models()
    async with open_backend(broken.base_url) as backend:
        with pytest.raises(BackendServerError):
            await backend.list_models()
    async with open_backend(closed_port_url) as backend:
        with pytest.raises(BackendConnectionError):
            await backend.list_models()


async def test_list_models_times_out(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.models_delay = 5
    backend.list_models_timeout = 0.3
    start = time.monotonic()

    with pytest.raises(BackendTimeoutError):
        await backend.list_models()

    assert time.monotonic() - start < 1.5


async def test_list_models_keeps_only_ids_a_request_and_a_file_can_carry(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    """A lone surrogate cannot be encoded (nor saved by HA), an over-long id is
    no model name: both are left out, as are repeats; the rest keep their order."""
    openai_server.models = [
        "evil\ud800model",
        "qwen3:4b",
        "x" * (MAX_MODEL_ID_CHARS + 1),
        "",
        "qwen3:4b",
        "llama3.2:3b",
    ]

    assert await backend.list_models() == ["qwen3:4b", "llama3.2:3b"]


async def test_list_models_keeps_at_most_the_limit(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.models = [f"model-{i}" for i in range(MAX_MODELS + 50)]

    models = await backend.list_models()

    assert models == [f"model-{i}" for i in range(MAX_MODELS)]


async def test_list_models_stops_reading_a_body_past_the_limit(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    entry = {"id": "m", "object": "model", "description": "x" * 1000}
    body = json.dumps({"object": "list", "data": [entry] * 10_000}).encode()
    assert len(body) > 2 * MAX_BODY_BYTES
    openai_server.models_body = body

    with pytest.raises(BackendReplyTooLargeError) as err:
        await backend.list_models()

    assert err.value.reason == "sent a reply that was too long"


# -- what the stream may hold ------------------------------------------------------------


def _event(content: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": content}}]}
    return json.dumps(chunk, ensure_ascii=False).encode()


@pytest.mark.parametrize("end", ["\n", "\r", "\r\n"])
async def test_sse_lines_end_only_at_cr_lf_or_crlf(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, end: str
) -> None:
    """U+2028, U+2029, U+0085, VT and FF are text inside an event, whatever the
    line ending, also when a CRLF or a character is cut between two reads."""
    text = "a\u2028b\u2029c\x85d\x0be\x0cf é"
    eol = end.encode()
    wire = b"data: " + _event(text) + eol + eol + b"data: " + _event("!") + eol + eol
    cut = wire.index("é".encode()) + 1  # inside the two bytes of "é"
    crlf = wire.index(eol, cut) + 1  # between CR and LF
    openai_server.reply(
        [Wire(wire[:cut]), Wire(wire[cut:crlf]), Wire(wire[crlf:])],
        finish_reason=None,
        role=False,
    )

    deltas = await collect(backend, ask())

    assert _text(deltas) == text + "!"


async def test_a_line_past_the_limit_ends_the_reply_as_too_long(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    piece = 256 * 1024
    openai_server.reply(
        [
            Wire(b'data: {"choices": [{"delta": {"content": "'),
            *[Wire(b"a" * piece)] * (MAX_EVENT_CHARS // piece + 2),
            Pause(30),  # a server that would go on: the limit ends it, not the timeout
        ],
        finish_reason=None,
        role=False,
    )
    start = time.monotonic()

    _, err = await collect_until_error(backend, ask(timeout=20))

    assert isinstance(err, BackendReplyTooLargeError)
    assert str(err).startswith(f"{LABEL} sent a reply that was too long")
    assert time.monotonic() - start < 10


async def test_an_event_of_many_lines_past_the_limit_is_too_long(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    line = b"data: " + b"a" * 1000 + b"\n"
    openai_server.reply(
        [Wire(line * 64)] * (MAX_EVENT_CHARS // 64_000 + 2),
        finish_reason=None,
        role=False,
    )

    _, err = await collect_until_error(backend, ask())

    assert isinstance(err, BackendReplyTooLargeError)


@pytest.mark.parametrize("stream", [True, False])
async def test_a_reply_past_the_limit_is_too_long(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, stream: bool
) -> None:
    """Text, reasoning and call arguments count together, streamed or not."""
    piece = "x" * 10_000
    count = MAX_REPLY_CHARS // len(piece) // 3 + 1
    openai_server.reply(
        [{"reasoning_content": piece}] * count
        + [{"content": piece}] * count
        + [
            {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f"}}]},
            *[{"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}] * count,
        ]
    )

    received, err = await collect_until_error(backend, ask(stream=stream))

    assert isinstance(err, BackendReplyTooLargeError)
    streamed = sum(len(getattr(d, "text", None) or "") for d in received)
    assert streamed <= MAX_REPLY_CHARS


async def test_a_whole_body_past_the_limit_is_too_long(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    """A reply asked for without streaming is read up to the body limit only."""
    openai_server.reply([{"content": "Hi"}, {"refusal": "y" * MAX_BODY_BYTES}])

    with pytest.raises(BackendReplyTooLargeError):
        await collect(backend, ask(stream=False))
