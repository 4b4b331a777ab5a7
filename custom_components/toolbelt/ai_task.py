"""AI Task: one ``ai_task`` entity per ``ai_task_data`` subentry.

A task runs through the same tool loop as a conversation turn (native or text
tool calls, the task's own LLM API if it brings one). A task with a
``structure`` must return data of that shape: when the server honoured a JSON
schema at setup (and the task calls no tools) the reply is constrained to it;
otherwise the reply is checked against the schema and, if it does not fit,
the model gets one corrective message and one more try.

Images attached to a task go to the model with its instructions
(``attachments.py``). Where HA has it (2026.11) and the server kind returns
token log-probabilities, the entity also evaluates questions (``evaluate``)
from the probabilities of the answers' labels (``loop/evaluation.py``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from homeassistant.components import ai_task, conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.json import json_dumps

from .backend.errors import BackendError
from .const import CONF_CONSTRAINTS, DOMAIN, LOGGER, SUBENTRY_AI_TASK
from .ha import compat
from .ha.attachments import async_image_parts
from .ha.entity import ToolbeltLLMEntity, add_subentry_entities
from .ha.entry import ToolbeltConfigEntry, entry_in_use
from .ha.settings import agent_settings, loop_settings
from .ha.spoken import async_phrases
from .loop.evaluation import (
    Answer,
    EvaluationError,
    Evaluator,
    LogprobsUnavailable,
    NoLabelError,
    TooManyOptions,
    context_parts,
)
from .loop.structured import (
    StructureError,
    answer_format,
    corrective_message,
    format_instructions,
    read_structured,
)

JSON_SCHEMA = "json_schema"


async def async_setup_entry(
    hass: HomeAssistant,
    entry: ToolbeltConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One AI Task entity per ai_task_data subentry."""
    add_subentry_entities(
        entry, async_add_entities, SUBENTRY_AI_TASK, ToolbeltTaskEntity
    )


class ToolbeltTaskEntity(ai_task.AITaskEntity, ToolbeltLLMEntity):
    """Generates text or structured data with one model on the entry's server."""

    def __init__(self, entry: ToolbeltConfigEntry, subentry: ConfigSubentry) -> None:
        """Data with attachments; evaluation where HA and the server kind allow."""
        super().__init__(entry, subentry)
        self._attr_supported_features = compat.task_features(
            logprobs=entry.runtime_data.kind.logprobs
        )

    async def _async_generate_data(
        self, task: ai_task.GenDataTask, chat_log: conversation.ChatLog
    ) -> ai_task.GenDataTaskResult:
        """Text, or data of the task's structure (one corrective retry).

        A reload asked for meanwhile (a subentry edited, a model switched)
        waits until the task ends, as it waits for a conversation turn. A task
        is no agent: tools that act on "this agent" do not take it for one.
        """
        with entry_in_use(self.hass, self.entry):
            return await self._async_generate(task, chat_log)

    async def _async_generate(
        self, task: ai_task.GenDataTask, chat_log: conversation.ChatLog
    ) -> ai_task.GenDataTaskResult:
        images = await async_image_parts(self.hass, task.attachments or ())
        run = partial(
            self._async_handle_chat_log,
            chat_log,
            await async_phrases(self.hass, self.hass.config.language),
            images=images,
            # Tool-choice constraints belong to agents; a task constrains its answer.
            options={**self.subentry.data, CONF_CONSTRAINTS: []},
        )
        if not task.structure:
            await run()
            return ai_task.GenDataTaskResult(
                conversation_id=chat_log.conversation_id, data=_answer(chat_log)
            )
        llm_api = chat_log.llm_api
        schema = compat.structure_schema(
            task.structure, llm_api.custom_serializer if llm_api else None
        )
        honoured = JSON_SCHEMA in agent_settings(self.subentry.data).constraints
        refused = JSON_SCHEMA in self.agent_state.refused
        # A schema on every request would keep the model from calling tools.
        constrained = honoured and not refused and not (llm_api and llm_api.tools)
        for attempt in (1, 2):
            await run(
                instructions=format_instructions(schema),
                answer_format=answer_format(schema) if constrained else None,
            )
            try:
                data = read_structured(_answer(chat_log), schema)
            except StructureError as err:
                LOGGER.debug("%s: reply %d not structured: %s", self.name, attempt, err)
                if attempt == 2:
                    raise HomeAssistantError(
                        f"The model's answer did not match the task's structure: {err}"
                    ) from err
                chat_log.async_add_user_content(
                    conversation.UserContent(corrective_message(err, schema))
                )
                continue
            return ai_task.GenDataTaskResult(
                conversation_id=chat_log.conversation_id, data=data
            )
        raise AssertionError("unreachable")  # pragma: no cover

    async def _async_evaluate(
        self, task: ai_task.EvaluationTask
    ) -> ai_task.EvaluationTaskResult:
        """Answer each question from the probabilities of its answers' labels.

        A reload asked for meanwhile waits, as for a task that generates data.
        """
        with entry_in_use(self.hass, self.entry):
            images = await async_image_parts(self.hass, task.attachments or ())
            runtime = self.entry.runtime_data
            evaluator = Evaluator(
                runtime.backend,
                loop_settings(self.subentry.data, runtime.kind),
                self.agent_state,
            )
            context = context_parts(
                task.name, _state_text(task.state), [*images.values()]
            )
            try:
                answers = await evaluator.answer_all(context, task.questions)
            except EvaluationError as err:
                LOGGER.debug("%s: %s: %s", self.name, err.question, err)
                raise self._evaluation_error(err) from err
            except BackendError as err:
                self._backend_failed(err)
                phrases = await async_phrases(self.hass, self.hass.config.language)
                raise self._spoken_failure(err, phrases, images) from err
        return ai_task.EvaluationTaskResult(
            answers={key: _ha_answer(answer) for key, answer in answers.items()}
        )

    def _evaluation_error(self, err: EvaluationError) -> HomeAssistantError:
        """A question that probabilities could not answer, said plainly."""
        question = err.question or ""
        if isinstance(err, TooManyOptions):
            return ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="evaluation_too_many_options",
                translation_placeholders={
                    "question": question,
                    "count": str(err.count),
                },
            )
        if isinstance(err, NoLabelError):
            return HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="evaluation_no_label",
                translation_placeholders={
                    "question": question,
                    "reply": err.reply.strip(),
                    "labels": ", ".join(err.labels),
                },
            )
        server = self.entry.runtime_data.backend.label
        if isinstance(err, LogprobsUnavailable) and err.refusal:
            return HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="logprobs_refused",
                translation_placeholders={"server": server, "message": err.refusal},
            )
        return HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="no_logprobs",
            translation_placeholders={"server": server},
        )


def _state_text(state: Any) -> str | None:
    """The data a task evaluates, as the model reads it (JSON unless text)."""
    if state is None or isinstance(state, str):
        return state
    return json_dumps(state)


def _ha_answer(answer: Answer) -> Any:
    """Our answer as HA's answer of the question's type."""
    if answer.kind == "noul":
        return ai_task.NoulAnswer(noul=answer.probabilities[0])
    if answer.kind == "choice":
        return ai_task.ChoiceAnswer(
            choice=answer.best,
            probabilities=dict(zip(answer.options, answer.probabilities, strict=True)),
        )
    return ai_task.ScoreAnswer(
        score=answer.expected_index, probabilities=list(answer.probabilities)
    )


def _answer(chat_log: conversation.ChatLog) -> str:
    """The last assistant message: the task's answer."""
    last = chat_log.content[-1]
    if not isinstance(last, conversation.AssistantContent):
        raise HomeAssistantError("The model gave no answer")
    return last.content or ""
