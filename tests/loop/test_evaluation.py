"""Evaluation from token probabilities, over HTTP to the scripted server (HA-free)."""

from __future__ import annotations

from collections.abc import AsyncIterator
import math

import pytest
import pytest_asyncio

from custom_components.toolbelt.backend.errors import BackendBadRequestError
from custom_components.toolbelt.backend.openai_compat import OpenAICompatBackend
from custom_components.toolbelt.loop import AgentState, LoopSettings
from custom_components.toolbelt.loop.evaluation import (
    ANSWER_TOKENS,
    TOP_LOGPROBS,
    Evaluator,
    LogprobsUnavailable,
    NoLabelError,
    TooManyOptions,
    context_parts,
)
from tests.backend.common import open_backend
from tests.openai_server import OpenAIServer

NOUL = {"type": "noul", "instructions": "Has the package arrived?"}
CHOICE = {
    "type": "choice",
    "instructions": "Who is at the door?",
    "criteria": {
        "nobody": "The porch is empty",
        "courier": "Someone in a delivery uniform",
        "neighbour": "Someone the family knows",
    },
}
SCORE = {
    "type": "score",
    "instructions": "How urgent is this?",
    "criteria": ["not at all", "somewhat", "very"],
}
CONTEXT = context_parts("Check delivery", "Your package was left at the front door.")


def ln(p: float) -> float:
    return math.log(p)


@pytest_asyncio.fixture
async def backend(openai_server: OpenAIServer) -> AsyncIterator[OpenAICompatBackend]:
    async with open_backend(openai_server.base_url) as backend:
        yield backend


def evaluator(
    backend: OpenAICompatBackend, state: AgentState, *, stream: bool = True
) -> Evaluator:
    return Evaluator(
        backend, LoopSettings(model="test-model", timeout=5.0, stream=stream), state
    )


@pytest.mark.parametrize("stream", [True, False])
async def test_yes_no_sums_the_spellings_of_each_answer(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, stream: bool
) -> None:
    openai_server.reply_tokens(
        [
            (
                "Yes",
                {
                    "Yes": ln(0.6),
                    " yes": ln(0.1),
                    "YES": ln(0.05),
                    "No": ln(0.15),
                    "no": ln(0.05),
                    "Maybe": ln(0.05),
                },
            )
        ]
    )
    state = AgentState()

    answer = await evaluator(backend, state, stream=stream).answer(CONTEXT, NOUL)

    assert answer.kind == "noul"
    assert answer.options == ("yes", "no")
    assert answer.probabilities == pytest.approx((0.75 / 0.95, 0.2 / 0.95))
    assert state.logprobs is True
    body = openai_server.last_request.body
    assert (body["logprobs"], body["top_logprobs"]) == (True, TOP_LOGPROBS)
    assert body["max_tokens"] == ANSWER_TOKENS
    assert body["temperature"] == 0.0
    system, user = body["messages"]
    assert system["role"] == "system"
    assert user["content"] == [
        {
            "type": "text",
            "text": "Task: Check delivery\n\nThe data to evaluate:\n"
            "Your package was left at the front door.",
        },
        {
            "type": "text",
            "text": "Question: Has the package arrived?\nAnswer yes or no.",
        },
    ]


async def test_a_choice_is_read_at_the_first_label_after_a_preamble(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply_tokens(
        [
            ("Answer", {"Answer": ln(0.9)}),
            (":", {":": ln(0.99)}),
            (" B", {" B": ln(0.5), "B": ln(0.1), " A": ln(0.3), " C": ln(0.1)}),
            (".", {".": ln(0.9)}),
        ]
    )

    answer = await evaluator(backend, AgentState()).answer(CONTEXT, CHOICE)

    assert answer.options == ("nobody", "courier", "neighbour")
    assert answer.probabilities == pytest.approx((0.3, 0.6, 0.1))
    assert answer.best == "courier"
    question = openai_server.last_request.messages[1]["content"][-1]["text"]
    assert question == (
        "Question: Who is at the door?\nOptions:\n"
        "A. nobody: The porch is empty\n"
        "B. courier: Someone in a delivery uniform\n"
        "C. neighbour: Someone the family knows\n"
        "Answer with only the letter of one option: A, B or C."
    )


async def test_a_score_is_the_expected_level(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    # Level 1 sampled; "2" spelled twice, "0" absent from the alternatives.
    openai_server.reply_tokens([("1", {"1": ln(0.5), "2": ln(0.3), " 2": ln(0.2)})])

    answer = await evaluator(backend, AgentState()).answer(CONTEXT, SCORE)

    assert answer.probabilities == pytest.approx((0.0, 0.5, 0.5))
    assert answer.expected_index == pytest.approx(1.5)
    question = openai_server.last_request.messages[1]["content"][-1]["text"]
    assert question.endswith(
        "Levels, lowest first:\n0. not at all\n1. somewhat\n2. very\n"
        "Answer with only the label of one level: 0, 1 or 2."
    )


async def test_eleven_levels_are_lettered(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    """Two digits are two tokens in many vocabularies: letters stay one."""
    levels = [f"level {n}" for n in range(11)]
    openai_server.reply_tokens([("K", {"K": ln(0.8), "J": ln(0.2)})])

    answer = await evaluator(backend, AgentState()).answer(
        CONTEXT, {**SCORE, "criteria": levels}
    )

    assert answer.expected_index == pytest.approx(0.8 * 10 + 0.2 * 9)
    question = openai_server.last_request.messages[1]["content"][-1]["text"]
    assert "\nA. level 0\n" in question
    assert question.endswith("I, J or K.")


async def test_every_question_shares_the_same_prefix(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    """One request per question, each starting with the same bytes (prompt cache)."""
    openai_server.reply_tokens([("No", {"No": ln(0.9), "Yes": ln(0.1)})])
    openai_server.reply_tokens([("2", {"2": ln(1.0)})])

    answers = await evaluator(backend, AgentState()).answer_all(
        CONTEXT, {"arrived": NOUL, "urgency": SCORE}
    )

    assert answers["arrived"].probabilities == pytest.approx((0.1, 0.9))
    assert answers["urgency"].expected_index == pytest.approx(2.0)
    first, second = (r.messages for r in openai_server.requests)
    assert first[0] == second[0]
    assert first[1]["content"][:-1] == second[1]["content"][:-1] == CONTEXT


async def test_too_many_options_fail_before_any_request(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    many = {**CHOICE, "criteria": {f"option {n}": "x" for n in range(27)}}

    with pytest.raises(TooManyOptions) as caught:
        await evaluator(backend, AgentState()).answer_all(
            CONTEXT, {"fine": NOUL, "crowded": many}
        )

    assert caught.value.question == "crowded"
    assert caught.value.count == 27
    assert openai_server.requests == []


@pytest.mark.parametrize("stream", [True, False])
async def test_a_server_without_logprobs_is_said_and_remembered(
    openai_server: OpenAIServer, backend: OpenAICompatBackend, stream: bool
) -> None:
    openai_server.logprobs = False
    openai_server.reply_tokens([("Yes", {"Yes": ln(0.9)})])
    state = AgentState()
    judge = evaluator(backend, state, stream=stream)

    with pytest.raises(LogprobsUnavailable) as caught:
        await judge.answer(CONTEXT, NOUL)
    assert caught.value.refusal is None
    assert state.logprobs is False

    # Learned: the next evaluation fails at once, without a request.
    with pytest.raises(LogprobsUnavailable):
        await judge.answer(CONTEXT, NOUL)
    assert len(openai_server.requests) == 1


async def test_logprobs_without_alternatives_cannot_answer(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    """A server that gives only the chosen token's logprob (top_logprobs ignored)."""
    openai_server.reply_tokens([("Yes", {})])
    state = AgentState()

    with pytest.raises(LogprobsUnavailable):
        await evaluator(backend, state).answer(CONTEXT, NOUL)
    assert state.logprobs is False


async def test_a_refused_logprobs_field_is_said_in_the_servers_words(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    message = "This model does not support the 'logprobs' parameter."
    openai_server.reply_error(400, message=message)
    state = AgentState()

    with pytest.raises(LogprobsUnavailable) as caught:
        await evaluator(backend, state).answer(CONTEXT, NOUL)

    assert caught.value.refusal == message
    assert state.logprobs is False


async def test_another_refusal_is_the_servers_error_and_teaches_nothing(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply_error(400, message="model 'test-model' not found")
    state = AgentState()

    with pytest.raises(BackendBadRequestError):
        await evaluator(backend, state).answer(CONTEXT, NOUL)
    assert state.logprobs is None


async def test_a_reply_without_a_label_says_what_the_model_wrote(
    openai_server: OpenAIServer, backend: OpenAICompatBackend
) -> None:
    openai_server.reply_tokens(
        [("The", {"The": ln(0.9)}), (" parcel", {" parcel": ln(0.9)})]
    )
    state = AgentState()

    with pytest.raises(NoLabelError) as caught:
        await evaluator(backend, state).answer(CONTEXT, NOUL)

    assert caught.value.reply == "The parcel"
    assert caught.value.labels == ("yes", "no")
    assert state.logprobs is True  # the server did return them
