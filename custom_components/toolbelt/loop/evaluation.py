"""Evaluation questions (an AI Task's ``evaluate``) answered from token probabilities.

A question is one request: the shared context first (the task's data and
images, the same bytes for every question, so a local server reuses its prompt
cache), then the question and its candidate answers, each a label the model
writes as one token: ``yes``/``no``; ``A``, ``B``… for a choice; ``0``…``9``
for the levels of a score (letters from 11 levels on). The request asks for
each generated token's likeliest alternatives with their log-probabilities
(``top_logprobs``). At the first generated token that spells a label, a label's
probability is the sum over the alternatives that spell it (``Yes``, `` yes``,
``YES``…), normalised over the labels. A choice is then the likeliest option,
a score the expected level index.

A reply without log-probabilities, or a refusal of the field, is
``LogprobsUnavailable``, remembered in ``AgentState.logprobs`` so that later
evaluations fail at once; a reply that names no label is ``NoLabelError``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
import contextlib
from dataclasses import dataclass
import math
import string
from typing import Any

from ..backend.base import (
    CompletionRequest,
    LogprobsDelta,
    ModelBackend,
    TextDelta,
    TokenLogprob,
)
from ..backend.errors import BackendBadRequestError
from ..backend.status import refuses_logprobs
from .agent_state import AgentState
from .tool_loop import LoopSettings

# OpenAI's and vLLM's (default) maximum.
TOP_LOGPROBS = 20
# Room for a preamble ("Answer:", "**") before the label; the stream is closed
# as soon as the label comes.
ANSWER_TOKENS = 8
LETTERS = string.ascii_uppercase
YES_NO = ("yes", "no")
# Around a label in a token: spaces, markup, brackets, and the word-start marks
# of BPE and SentencePiece vocabularies, in case a server does not decode them.
_AROUND = " \t\r\n*_`'\"()[]{}<>.,:;!?\u0120\u010a\u2581"

SYSTEM_PROMPT = (
    "You evaluate what you are given and answer one question about it. Reply"
    " with only the label of your answer: no other words, no explanation."
)


class EvaluationError(Exception):
    """A question could not be answered from probabilities.

    ``question`` is the question's id, once ``Evaluator.answer_all`` knows it.
    """

    question: str | None = None


class LogprobsUnavailable(EvaluationError):
    """The server returned no token log-probabilities, or refused the field.

    ``refusal`` holds the server's own words when it refused.
    """

    def __init__(self, refusal: str | None = None) -> None:
        self.refusal = refusal
        super().__init__(
            f"refused token probabilities: {refusal}"
            if refusal
            else "returned no token probabilities"
        )


class NoLabelError(EvaluationError):
    """The model's reply began with none of the labels it was given."""

    def __init__(self, reply: str, labels: Sequence[str]) -> None:
        self.reply = reply
        self.labels = tuple(labels)
        super().__init__(f"the reply {reply!r} names none of {', '.join(labels)}")


class TooManyOptions(EvaluationError):
    """A choice or score with more candidates than there are labels."""

    def __init__(self, count: int) -> None:
        self.count = count
        super().__init__(f"{count} options; at most {len(LETTERS)} can be labelled")


@dataclass(frozen=True, slots=True)
class Answer:
    """One question's answer: a probability per option, in the question's order.

    ``kind`` is the question's type: ``noul`` (options ``yes``, ``no``),
    ``choice`` (its criteria's keys) or ``score`` (its levels, lowest first).
    """

    kind: str
    options: tuple[str, ...]
    probabilities: tuple[float, ...]

    @property
    def best(self) -> str:
        """The likeliest option (the first of equals)."""
        top = max(self.probabilities)
        return self.options[self.probabilities.index(top)]

    @property
    def expected_index(self) -> float:
        """The expected option index: a score's expected level."""
        return sum(index * p for index, p in enumerate(self.probabilities))


def candidates(question: Mapping[str, Any]) -> tuple[tuple[str, ...], list[str]]:
    """A question's options, and the label the model writes for each."""
    kind = question["type"]
    if kind == "noul":
        return YES_NO, list(YES_NO)
    criteria = question["criteria"]
    options = tuple(criteria) if kind == "choice" else tuple(map(str, criteria))
    if len(options) > len(LETTERS):
        raise TooManyOptions(len(options))
    if kind == "score" and len(options) <= 10:
        return options, [str(index) for index in range(len(options))]
    return options, list(LETTERS[: len(options)])


def question_text(question: Mapping[str, Any], labels: Sequence[str]) -> str:
    """The question, its candidate answers, and how to answer."""
    kind = question["type"]
    lines = [f"Question: {question['instructions']}"]
    if kind == "noul":
        lines.append("Answer yes or no.")
        return "\n".join(lines)
    criteria = question["criteria"]
    if kind == "choice":
        lines.append("Options:")
        lines += [
            f"{label}. {key}: {criteria[key]}"
            for label, key in zip(labels, criteria, strict=True)
        ]
        word = "letter of one option"
    else:
        lines.append("Levels, lowest first:")
        lines += [
            f"{label}. {level}" for label, level in zip(labels, criteria, strict=True)
        ]
        word = "label of one level"
    lines.append(f"Answer with only the {word}: {_either(labels)}.")
    return "\n".join(lines)


def context_parts(
    task_name: str, data: str | None, images: Sequence[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """What every question of a task shares: its name, its data, its images."""
    if data is None:
        text = f"Task: {task_name}\n\nThe data to evaluate is in the images."
    else:
        text = f"Task: {task_name}\n\nThe data to evaluate:\n{data}"
    return [{"type": "text", "text": text}, *images]


def label_probabilities(
    token: TokenLogprob, labels: Sequence[str]
) -> tuple[float, ...] | None:
    """Each label's probability at this token; None if the token is no label.

    The token itself counts with its alternatives (a server may leave it out
    of them); each distinct spelling counts once.
    """
    by_key = {label.casefold(): label for label in labels}
    if _label_key(token.token) not in by_key:
        return None
    if not token.top:
        raise LogprobsUnavailable
    mass = dict.fromkeys(labels, 0.0)
    seen: set[str] = set()
    for text, logprob in ((token.token, token.logprob), *token.top):
        label = by_key.get(_label_key(text))
        if label is not None and text not in seen:
            seen.add(text)
            mass[label] += math.exp(logprob)
    total = sum(mass.values())
    return tuple(mass[label] / total for label in labels)


class Evaluator:
    """Answers a task's questions, one request each, on one model."""

    def __init__(
        self, backend: ModelBackend, settings: LoopSettings, state: AgentState
    ) -> None:
        """``state``: what the agent learned; its ``logprobs`` is kept up to date."""
        self._backend = backend
        self._settings = settings
        self._state = state

    async def answer_all(
        self,
        context: Sequence[dict[str, Any]],
        questions: Mapping[str, Mapping[str, Any]],
    ) -> dict[str, Answer]:
        """Every question's answer, by id; each is checked before any is asked."""
        for question_id, question in questions.items():
            with _about(question_id):
                candidates(question)
        answers = {}
        for question_id, question in questions.items():
            with _about(question_id):
                answers[question_id] = await self.answer(context, question)
        return answers

    async def answer(
        self, context: Sequence[dict[str, Any]], question: Mapping[str, Any]
    ) -> Answer:
        """One question's answer; raises EvaluationError or BackendError."""
        if self._state.logprobs is False:
            raise LogprobsUnavailable
        options, labels = candidates(question)
        settings = self._settings
        request = CompletionRequest(
            model=settings.model,
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {
                    "role": "user",
                    "content": [
                        *context,
                        {"type": "text", "text": question_text(question, labels)},
                    ],
                },
            ],
            temperature=0.0,
            max_tokens=ANSWER_TOKENS,
            stream=settings.stream,
            timeout=settings.timeout,
            logprobs=TOP_LOGPROBS,
        )
        try:
            found, reply = await self._ask(request, labels)
        except BackendBadRequestError as err:
            if not refuses_logprobs(err.message):
                raise
            self._state.logprobs = False
            raise LogprobsUnavailable(err.message) from err
        except LogprobsUnavailable:
            self._state.logprobs = False
            raise
        self._state.logprobs = True
        if found is None:
            raise NoLabelError(reply, labels)
        return Answer(question["type"], options, found)

    async def _ask(
        self, request: CompletionRequest, labels: Sequence[str]
    ) -> tuple[tuple[float, ...] | None, str]:
        """The labels' probabilities at the first label token, and the reply."""
        text: list[str] = []
        tokens: list[str] = []
        # Closing the stream at the label stops the server generating.
        async with contextlib.aclosing(self._backend.complete(request)) as deltas:
            async for delta in deltas:
                if isinstance(delta, TextDelta):
                    text.append(delta.text)
                if not isinstance(delta, LogprobsDelta):
                    continue
                for token in delta.tokens:
                    tokens.append(token.token)
                    found = label_probabilities(token, labels)
                    if found is not None:
                        return found, "".join(tokens)
        if not tokens:
            raise LogprobsUnavailable
        return None, "".join(text) or "".join(tokens)


@contextlib.contextmanager
def _about(question_id: str) -> Iterator[None]:
    """Name the question in an EvaluationError raised inside."""
    try:
        yield
    except EvaluationError as err:
        err.question = question_id
        raise


def _label_key(token: str) -> str:
    return token.strip(_AROUND).casefold()


def _either(labels: Sequence[str]) -> str:
    """``A, B or C``."""
    return f"{', '.join(labels[:-1])} or {labels[-1]}"
