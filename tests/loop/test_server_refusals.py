"""A server that refuses, is busy or overflows: one proven retry, never a lost turn.

What a retry proves (the server refuses the tool role) is kept in the agent's
state for later turns; what it does not prove is not."""

from __future__ import annotations

import pytest

from custom_components.toolbelt.backend.errors import BackendToolParseError
from custom_components.toolbelt.loop.events import TextOut
from tests.loop.conftest import PAGE_TEXT, TURN_ON, Harness, hermes
from tests.openai_server import Raw


async def test_server_rejecting_tool_role_gets_fallback_messages(
    harness: Harness,
) -> None:
    """A 400 on the tool-role request is retried once in fallback mode."""
    harness.server.reply_tool_calls(
        [{"name": "HassTurnOn", "arguments": {"name": "k"}}]
    )
    harness.server.reply_error(400, message="Unsupported role: tool")
    harness.server.reply_text("The light is on.")
    assert (await harness.turn("k on")).text == "The light is on."
    assert harness.state.tool_role is False  # later turns start in fallback mode
    retry = harness.server.requests[2].messages
    assert all(m["role"] != "tool" and not m.get("tool_calls") for m in retry)
    assistant, results = retry[-2:]
    assert assistant == {
        "role": "assistant",
        "content": '[called HassTurnOn({"name": "k"})]',
    }
    assert results["role"] == "user"
    assert '"success": true' in results["content"]
    assert harness.house.log == [("HassTurnOn", {"name": "k"})]  # not run twice


async def test_429_waits_as_asked_then_answers_and_keeps_the_tool_role(
    harness: Harness,
) -> None:
    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_error(
        429, message="Too many requests", headers={"Retry-After": "0.2"}
    )
    harness.server.reply_text("The light is on.")

    events = (await harness.turn("kitchen on")).events

    assert "".join(e.text for e in events if isinstance(e, TextOut)) == (
        "The light is on."
    )
    assert harness.state.tool_role  # a busy server says nothing about the tool role
    first_try, retry = harness.server.requests[1:]
    assert retry.messages == first_try.messages
    assert retry.messages[-1]["role"] == "tool"
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]


@pytest.mark.parametrize(
    "headers",
    [{"Retry-After": "0.1"}, {}, {"Retry-After": "3600"}],
    ids=["busy-twice", "no-retry-after", "wait-beyond-timeout"],
)
async def test_429_that_will_not_clear_is_a_busy_error(
    harness: Harness, headers: dict[str, str]
) -> None:
    from custom_components.toolbelt.backend.errors import BackendBusyError

    harness.server.reply_tool_calls(TURN_ON)
    for _ in range(2):
        harness.server.reply_error(429, message="slow down", headers=headers)

    with pytest.raises(BackendBusyError) as err:
        await harness.turn("kitchen on")

    assert err.value.reason == "is busy right now; please try again in a moment"
    assert harness.state.tool_role
    # Retried once only when the wait it asked for fits in the request timeout.
    assert len(harness.server.requests) == (
        3 if headers == {"Retry-After": "0.1"} else 2
    )


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "the request exceeds the available context size, try increasing it"),
        (400, "This model's maximum context length is 8192 tokens."),
        (413, "Payload Too Large"),
        (500, "the request exceeds the available context size, try increasing it"),
    ],
    ids=["llama.cpp", "vllm", "413", "as-500"],
)
async def test_context_overflow_trims_the_largest_result_once(
    harness: Harness, status: int, message: str
) -> None:
    harness.server.reply_tool_calls(
        [
            {"name": "web_fetch", "arguments": {"url": "https://example.org/eclipse"}},
            {"name": "HassTurnOn", "arguments": {"name": "kitchen"}},
        ]
    )
    harness.server.reply_error(status, message=message)
    harness.server.reply_text("It crosses Spain.")

    events = (await harness.turn("read it")).events

    assert "".join(e.text for e in events if isinstance(e, TextOut)) == (
        "It crosses Spain."
    )
    assert harness.state.tool_role
    too_long, retry = harness.server.requests[1:]
    page, light = (m["content"] for m in retry.messages if m["role"] == "tool")
    assert len(too_long.messages[-2]["content"]) > 50_000
    assert page.startswith("The eclipse crosses Spain.")
    assert page.endswith(
        f"[Toolbelt cut this result from {len(PAGE_TEXT)} to 2000 characters "
        "to fit the model's context.]"
    )
    assert len(page) < 2200
    assert "kitchen" in light  # the short result is left whole


async def test_context_overflow_with_nothing_to_trim_is_spoken(
    harness: Harness,
) -> None:
    """The history alone is too long: no retry, a clear error for the user."""
    from custom_components.toolbelt.backend.errors import (
        BackendContextOverflowError,
    )

    harness.server.reply_error(400, message="prompt is too long: 9000 > 8192")
    with pytest.raises(BackendContextOverflowError) as err:
        await harness.turn("kitchen on")
    assert "context" in err.value.reason
    assert len(harness.server.requests) == 1


async def test_a_400_the_fallback_retry_does_not_cure_does_not_demote(
    harness: Harness,
) -> None:
    """Only a fallback retry that works proves the server refuses the tool role."""
    from custom_components.toolbelt.backend.errors import BackendBadRequestError

    harness.server.reply_tool_calls(TURN_ON)
    harness.server.reply_error(400, message="Unknown field: foo")
    harness.server.reply_error(400, message="Unknown field: foo")

    with pytest.raises(BackendBadRequestError):
        await harness.turn("kitchen on")

    assert harness.state.tool_role
    tool_role, fallback = harness.server.requests[1:]
    assert tool_role.messages[-1]["role"] == "tool"
    assert all(m["role"] != "tool" for m in fallback.messages)


MISMATCH = (
    "The model produced output that does not match the expected Hermes 2 Pro format"
)


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_reply_the_servers_own_parser_lost_is_asked_for_raw(
    harness: Harness, streamed: bool
) -> None:
    """llama-server's other parser failure (the final parse), as it sends it:
    a 500, or mid-stream an error event after the role chunk. The same request
    again with tool_choice "none" returns the text, and Toolbelt reads it."""
    if streamed:
        harness.server.reply([Raw({"error": {"code": 500, "message": MISMATCH}})])
    else:
        harness.server.reply_error(500, message=MISMATCH)
    harness.server.reply_text(hermes(("HassTurnOn", {"name": "kitchen"})))
    harness.server.reply_text("The light is on.")

    turn = await harness.turn("kitchen on", stream=streamed)

    assert turn.text == "The light is on."
    assert harness.house.log == [("HassTurnOn", {"name": "kitchen"})]
    lost, raw, _answer = harness.server.requests
    assert "tool_choice" not in lost.body
    assert raw.body["tool_choice"] == "none"
    assert raw.tools == lost.tools  # the same prompt: the cache holds
    assert raw.messages == lost.messages


async def test_a_reply_lost_twice_is_spoken_as_that(harness: Harness) -> None:
    harness.server.reply_error(500, message=MISMATCH)
    harness.server.reply_error(500, message=MISMATCH)

    with pytest.raises(BackendToolParseError) as err:
        await harness.turn("kitchen on")

    assert err.value.reason == "could not read the model's tool call"
    assert len(harness.server.requests) == 2
