"""``ai_task.evaluate`` (HA 2026.11) in real HA, answered from token probabilities.

An automation calls the action with questions and state; it gets back one
answer per question: the probability of yes, a choice with its distribution,
a score with its levels' probabilities. On an HA without the action the entity
offers data generation (and attachments) only.
"""

from __future__ import annotations

import math
from typing import Any

from homeassistant.components import ai_task
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
import pytest

from custom_components.toolbelt.ha import compat
from custom_components.toolbelt.loop.evaluation import SYSTEM_PROMPT
from tests.ha.test_ai_task import add_task
from tests.ha.test_ai_task_attachments import (  # noqa: F401 - media is a fixture
    LLAMACPP_NO_MMPROJ,
    PNG_URL,
    SNAPSHOT,
    media,
)
from tests.openai_server import OpenAIServer

needs_evaluate = pytest.mark.skipif(
    not compat.CURRENT.evaluate_feature,
    reason="ai_task.evaluate came with HA 2026.11",
)
ARRIVED = {"type": "noul", "instructions": "Has the package arrived?"}
WHO = {
    "type": "choice",
    "instructions": "Who left it?",
    "criteria": {"courier": "A delivery company", "neighbour": "Someone next door"},
}
URGENCY = {
    "type": "score",
    "instructions": "How soon must someone fetch it?",
    "criteria": ["it can wait", "today", "right now"],
}
STATE = {"message": "Your package was left at the front door.", "rain": True}


def ln(p: float) -> float:
    return math.log(p)


async def evaluate(hass: HomeAssistant, task: str, **data: Any) -> dict[str, Any]:
    """The ``ai_task.evaluate`` action as an automation runs it; its response."""
    return await hass.services.async_call(
        "ai_task",
        "evaluate",
        {"task_name": "Check delivery", "entity_id": task, **data},
        blocking=True,
        return_response=True,
    )


async def evaluation_error(
    hass: HomeAssistant,
    task: str,
    error: type[HomeAssistantError] = HomeAssistantError,
    **data: Any,
) -> str:
    """What an evaluation that must fail says."""
    data.setdefault("state", STATE)
    data.setdefault("questions", {"arrived": ARRIVED})
    with pytest.raises(error) as caught:
        await evaluate(hass, task, **data)
    return str(caught.value)


async def test_the_entity_offers_what_this_ha_has(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)

    features = hass.states.get(task).attributes["supported_features"]
    feature = ai_task.AITaskEntityFeature
    assert features & feature.GENERATE_DATA
    assert features & feature.SUPPORT_ATTACHMENTS
    assert bool(features & compat.CURRENT.evaluate_feature) == hasattr(
        feature, "EVALUATE"
    )


@needs_evaluate
async def test_each_question_is_answered_from_probabilities(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    entry, task = await add_task(hass, openai_server)
    openai_server.reply_tokens(
        [("Yes", {"Yes": ln(0.7), " yes": ln(0.1), "No": ln(0.2)})]
    )
    openai_server.reply_tokens([("A", {"A": ln(0.6), "B": ln(0.3), "C": ln(0.1)})])
    openai_server.reply_tokens([("1", {"0": ln(0.2), "1": ln(0.5), "2": ln(0.3)})])

    response = await evaluate(
        hass,
        task,
        state=STATE,
        questions={"arrived": ARRIVED, "who": WHO, "urgency": URGENCY},
    )

    answers = response["answers"]
    assert answers["arrived"]["type"] == "noul"
    assert answers["arrived"]["noul"] == pytest.approx(0.8)
    assert answers["who"]["type"] == "choice"
    assert answers["who"]["choice"] == "courier"
    # "C" labels no option: only A and B count.
    assert answers["who"]["probabilities"] == pytest.approx(
        {"courier": 2 / 3, "neighbour": 1 / 3}
    )
    assert answers["urgency"]["type"] == "score"
    assert answers["urgency"]["score"] == pytest.approx(1.1)
    assert answers["urgency"]["probabilities"] == pytest.approx([0.2, 0.5, 0.3])

    arrived, who, urgency = openai_server.requests
    assert arrived.messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
    data = arrived.messages[1]["content"][0]["text"]
    assert data == (
        "Task: Check delivery\n\nThe data to evaluate:\n"
        '{"message":"Your package was left at the front door.","rain":true}'
    )
    assert who.messages[1]["content"][-1]["text"].startswith(
        "Question: Who left it?\nOptions:\nA. courier: A delivery company\n"
    )
    assert all(
        r.body["logprobs"] and r.body["top_logprobs"] == 20
        for r in (arrived, who, urgency)
    )
    assert all(r.body["model"] == "test-model" for r in openai_server.requests)
    subentry = next(s for s in entry.subentries.values() if s.title == "Task writer")
    assert entry.runtime_data.agent_state(subentry).logprobs is True


@needs_evaluate
@pytest.mark.usefixtures("media")
async def test_an_image_alone_is_evaluated(
    hass: HomeAssistant, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    openai_server.reply_tokens([("no", {"no": ln(0.9), "yes": ln(0.1)})])

    response = await ai_task.async_evaluate(
        hass,
        task_name="Porch",
        entity_id=task,
        questions={"arrived": ARRIVED},
        attachments=[SNAPSHOT],
    )

    assert response.answers["arrived"].noul == pytest.approx(0.1)
    content = openai_server.last_request.messages[1]["content"]
    assert content[:2] == [
        {
            "type": "text",
            "text": "Task: Porch\n\nThe data to evaluate is in the images.",
        },
        {"type": "image_url", "image_url": {"url": PNG_URL}},
    ]


@needs_evaluate
@pytest.mark.usefixtures("media")
async def test_a_model_that_cannot_see_is_named(
    hass: HomeAssistant, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    openai_server.refuse_images(*LLAMACPP_NO_MMPROJ)

    said = await evaluation_error(hass, task, state=None, attachments=[SNAPSHOT])

    assert said.startswith(
        "The model test-model does not accept images (the llama.cpp server refused"
    )


@needs_evaluate
async def test_a_server_that_returns_no_probabilities_is_said_once_learned(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    """Ollama before 0.12.11: the fields are taken, no probabilities come back."""
    entry, task = await add_task(hass, openai_server, server_kind="ollama")
    openai_server.logprobs = False
    openai_server.reply_tokens([("Yes", {"Yes": ln(0.9)})])

    for _ in range(2):
        assert await evaluation_error(hass, task) == (
            "Sorry, Ollama returned no token probabilities, which an evaluation"
            " needs. llama.cpp, vLLM, Ollama 0.12.11 or newer and OpenAI's models"
            " without reasoning return them"
        )

    # The second evaluation did not ask the server again.
    assert len(openai_server.requests) == 1
    subentry = next(s for s in entry.subentries.values() if s.title == "Task writer")
    assert entry.runtime_data.agent_state(subentry).logprobs is False


@needs_evaluate
async def test_a_refusal_of_the_field_is_said_in_the_servers_words(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server, server_kind="openai")
    openai_server.reply_error(
        400, message="This model does not support the 'logprobs' parameter."
    )

    assert await evaluation_error(hass, task) == (
        "Sorry, OpenAI refused to return token probabilities, which an evaluation"
        " needs: This model does not support the 'logprobs' parameter."
    )


@needs_evaluate
async def test_a_kind_without_logprobs_offers_no_evaluation(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server, server_kind="lmstudio")

    said = await evaluation_error(hass, task, ServiceValidationError)

    assert said == "AI Task entity ai_task.task_writer does not support evaluation"
    assert openai_server.requests == []


@needs_evaluate
async def test_an_answer_without_a_label_says_what_the_model_wrote(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    openai_server.reply_tokens(
        [("Probably", {"Probably": ln(0.8)}), (".", {".": ln(0.9)})]
    )

    assert await evaluation_error(hass, task) == (
        'The model answered question arrived with "Probably.", which names none'
        " of its answers (yes, no)"
    )


@needs_evaluate
async def test_more_options_than_labels_fail_before_any_request(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    crowded = {**URGENCY, "criteria": [f"level {n}" for n in range(30)]}

    said = await evaluation_error(
        hass,
        task,
        ServiceValidationError,
        questions={"arrived": ARRIVED, "fine": crowded},
    )

    assert said == (
        "Question fine has 30 options; an evaluation can tell at most 26 apart"
    )
    assert openai_server.requests == []
