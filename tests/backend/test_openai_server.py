"""The scripted server itself speaks OpenAI's wire format exactly (strict validation)."""

from __future__ import annotations

import json

import httpx
from openai.types.chat import ChatCompletion, ChatCompletionChunk
import pytest

from tests.openai_server import NO_REPLY_MESSAGE, OpenAIServer, Pause

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


async def _sse_lines(server: OpenAIServer, **extra: object) -> list[str]:
    async with (
        httpx.AsyncClient() as client,
        client.stream(
            "POST",
            f"{server.base_url}/chat/completions",
            json={**BODY, "stream": True, **extra},
        ) as resp,
    ):
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        return [line async for line in resp.aiter_lines() if line]


async def test_streamed_chunks_validate_as_openai_chunks(
    openai_server: OpenAIServer,
) -> None:
    openai_server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "lamp"}}], content="Ok."
    )

    lines = await _sse_lines(openai_server, stream_options={"include_usage": True})

    assert lines[-1] == "data: [DONE]"
    assert all(line.startswith("data: ") for line in lines)
    chunks = [
        ChatCompletionChunk.model_validate(json.loads(line[6:])) for line in lines[:-1]
    ]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-2].choices[0].finish_reason == "tool_calls"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    first_call = chunks[1].choices[0].delta.tool_calls[0]
    assert first_call.id.startswith("call_")
    assert first_call.function.name == "HassTurnOn"
    args = "".join(
        c.choices[0].delta.tool_calls[0].function.arguments
        for c in chunks
        if c.choices and c.choices[0].delta.tool_calls
    )
    assert json.loads(args) == {"name": "lamp"}


async def test_records_chunks_and_their_write_times(
    openai_server: OpenAIServer,
) -> None:
    openai_server.reply([{"content": "a"}, Pause(0.05), {"content": "b"}])

    await _sse_lines(openai_server)

    rec = openai_server.last_request
    assert [c["choices"][0]["delta"].get("content") for c in rec.chunks] == [
        "a",
        "b",
        None,
    ]
    assert len(rec.chunk_times) == 3
    assert rec.chunk_times[1] - rec.chunk_times[0] >= 0.05


async def test_non_streamed_body_validates_as_chat_completion(
    openai_server: OpenAIServer,
) -> None:
    openai_server.reply_reasoning("think", "answer", field="reasoning")
    async with httpx.AsyncClient() as client:
        resp = await client.post(
            f"{openai_server.base_url}/chat/completions", json=BODY
        )

    completion = ChatCompletion.model_validate(resp.json())
    assert completion.choices[0].message.content == "answer"
    assert completion.choices[0].message.model_extra["reasoning"] == "think"
    assert completion.choices[0].finish_reason == "stop"


async def test_unscripted_request_gets_a_clear_500(openai_server: OpenAIServer) -> None:
    async with httpx.AsyncClient() as client:
        resp = await client.post(
            f"{openai_server.base_url}/chat/completions", json=BODY
        )

    assert resp.status_code == 500
    assert resp.json()["error"]["message"] == NO_REPLY_MESSAGE
    assert openai_server.requests[0].messages == BODY["messages"]


async def test_missing_key_gets_openais_401_body(openai_server_factory) -> None:
    server = await openai_server_factory(require_api_key="sk-1")
    async with httpx.AsyncClient() as client:
        resp = await client.get(f"{server.base_url}/models")

    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "invalid_api_key"


def test_chunks_must_join_to_the_text() -> None:
    with pytest.raises(ValueError, match="do not join"):
        OpenAIServer().reply_text("Done!", chunks=["Do", "ne"])


TOKENS = [("Yes", {"Yes": -0.1, " yes": -2.9, "No": -3.5}), ("!", {"!": -0.2})]


async def test_streamed_logprobs_validate_and_are_cut_to_top_logprobs(
    openai_server: OpenAIServer,
) -> None:
    openai_server.reply_tokens(TOKENS)

    lines = await _sse_lines(openai_server, logprobs=True, top_logprobs=2)

    chunks = [
        ChatCompletionChunk.model_validate(json.loads(line[6:])) for line in lines[:-1]
    ]
    entries = [
        entry
        for chunk in chunks
        if chunk.choices and chunk.choices[0].logprobs
        for entry in chunk.choices[0].logprobs.content
    ]
    assert [(e.token, e.logprob) for e in entries] == [("Yes", -0.1), ("!", -0.2)]
    assert [(t.token, t.logprob) for t in entries[0].top_logprobs] == [
        ("Yes", -0.1),
        (" yes", -2.9),
    ]
    assert entries[0].bytes == list(b"Yes")


async def test_logprobs_only_when_asked_and_whole_replies_carry_them_all(
    openai_server: OpenAIServer,
) -> None:
    openai_server.reply_tokens(TOKENS)
    openai_server.reply_tokens(TOKENS)
    async with httpx.AsyncClient() as client:
        url = f"{openai_server.base_url}/chat/completions"
        plain = await client.post(url, json=BODY)
        asked = await client.post(
            url, json={**BODY, "logprobs": True, "top_logprobs": 20}
        )

    assert ChatCompletion.model_validate(plain.json()).choices[0].logprobs is None
    choice = ChatCompletion.model_validate(asked.json()).choices[0]
    assert choice.message.content == "Yes!"
    assert [e.token for e in choice.logprobs.content] == ["Yes", "!"]
    assert len(choice.logprobs.content[0].top_logprobs) == 3


async def test_image_content_is_refused_on_demand(openai_server: OpenAIServer) -> None:
    openai_server.refuse_images(500, "image input is not supported")
    openai_server.reply_text("Plain text is fine.")
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
    async with httpx.AsyncClient() as client:
        url = f"{openai_server.base_url}/chat/completions"
        refused = await client.post(
            url,
            json={**BODY, "messages": [{"role": "user", "content": [image]}]},
        )
        answered = await client.post(url, json=BODY)

    assert refused.status_code == 500
    assert refused.json()["error"]["message"] == "image input is not supported"
    assert answered.json()["choices"][0]["message"]["content"] == "Plain text is fine."
