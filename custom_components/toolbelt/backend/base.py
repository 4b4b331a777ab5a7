"""The protocol the tool loop consumes: a request in, a stream of small deltas out.

Kept tiny so the loop does not depend on the openai SDK, and tests can drive the loop
with any object that yields these deltas.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..toolcalls.text.surrogates import mend_surrogates

# A request that sets no timeout, and an agent's default: a model server must
# never hang a turn. The one home of this number.
DEFAULT_REQUEST_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the answer text, as it arrived (lone surrogates mended)."""

    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", mend_surrogates(self.text))


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning (never spoken; lone surrogates mended)."""

    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", mend_surrogates(self.text))


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A raw fragment of a native tool call, as a server streams it.

    Never yielded by ``ModelBackend.complete``: the backend joins fragments by
    index (``accumulate.ToolCallAccumulator``) and yields whole calls on ``Finish``.
    """

    index: int
    id: str | None
    name: str | None
    arguments: str | None

    def __post_init__(self) -> None:
        for field in ("id", "name", "arguments"):
            if (value := getattr(self, field)) is not None:
                object.__setattr__(self, field, mend_surrogates(value))


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One generated token: its log-probability and the likeliest alternatives.

    ``top`` holds (token, logprob) pairs as the server ranked them (OpenAI's
    ``top_logprobs``); it is empty when the server gave none.
    """

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class LogprobsDelta:
    """The log-probabilities of the tokens of a piece of the answer.

    Only sent when the request asked for them (``CompletionRequest.logprobs``)
    and the server returned them.
    """

    tokens: tuple[TokenLogprob, ...]


@dataclass(frozen=True, slots=True)
class Finish:
    """Always the last delta of a reply: why it ended, token usage if known, and
    the reply's native tool calls, whole.

    ``tool_calls``: OpenAI ``tool_calls`` entries (``id`` None where the server
    sent none, ``function.arguments`` the raw text), in the server's index order.
    """

    reason: str | None
    usage: dict[str, int] | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()


Delta = TextDelta | ReasoningDelta | LogprobsDelta | Finish


@dataclass(slots=True)
class CompletionRequest:
    """One chat-completions call. `timeout` bounds the whole request, in seconds."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    stop: list[str] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = True
    timeout: float | None = None
    # Decoding constraints (see toolcalls/prompting/constraint.py); None sends nothing.
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    grammar: str | None = None
    # Ask for the reply as the model wrote it, unparsed (the server kind's
    # ``raw_reply``): after the server's own tool-call parser failed on it.
    raw_text: bool = False
    # Ask for each token's log-probability and this many alternatives
    # (``logprobs``/``top_logprobs``); None sends neither.
    logprobs: int | None = None

    @property
    def constrained(self) -> bool:
        """True when the request carries any decoding constraint."""
        return bool(self.tool_choice or self.response_format or self.grammar)

    def unconstrained(self) -> CompletionRequest:
        """The same request without any decoding constraint (the server refused one)."""
        return replace(self, tool_choice=None, response_format=None, grammar=None)


class ModelBackend(Protocol):
    """What the loop needs from a model server. Errors are backend.errors.BackendError."""

    def complete(self, request: CompletionRequest) -> AsyncGenerator[Delta]:
        """Yield the reply as deltas, ending with exactly one Finish (whole calls on it)."""
        ...

    async def list_models(self) -> list[str]:
        """Return the model ids the server offers."""
        ...
