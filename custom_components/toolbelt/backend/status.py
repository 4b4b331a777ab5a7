"""Reading what a refusing server means: wait and ask again, or send less.

A 429 is a busy server, and its Retry-After says how long to wait. A request
that overflows the model's context comes back as 413 from some servers and as
a 400 with the server's own wording from most: llama.cpp, vLLM, Ollama, LM
Studio and OpenAI each phrase it differently, so we match their phrases.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
import re
from typing import Any

# llama.cpp: "the request exceeds the available context size"; vLLM: "This
# model's maximum context length is 4096 tokens"; OpenAI: "context_length_exceeded";
# Ollama/LM Studio: "context window", "prompt is too long", "too many tokens".
_OVERFLOW = re.compile(
    r"context[ _-]?(?:length|size|window|limit)|n_ctx|prompt is too long"
    r"|too many tokens|maximum (?:context|number of tokens)|exceeds? the (?:available )?context",
    re.IGNORECASE,
)


def is_context_overflow(message: str) -> bool:
    """Whether a server's refusal says the request is too long for the model."""
    return bool(_OVERFLOW.search(message or ""))


def retry_after(response: Any) -> float | None:
    """Seconds a 429's Retry-After asks for (delta-seconds or an HTTP date)."""
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return max(seconds, 0.0) if seconds == seconds else None  # NaN is no answer
