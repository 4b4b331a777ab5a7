"""Reading what a refusing server means: wait and ask again, or send less.

A 429 is a busy server, and its Retry-After says how long to wait. A request
that overflows the model's context comes back as 413 from some servers and as
a 400 with the server's own wording from most: llama.cpp, vLLM, Ollama, LM
Studio and OpenAI each phrase it differently, so we match their phrases. The
same goes for a model that cannot see images, and a server or model that will
not return token log-probabilities.
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


# A model that takes no images. llama.cpp without --mmproj (HTTP 500): "image
# input is not supported - hint: ... provide the mmproj"; Ollama: "this model is
# missing data required for image input"; vLLM (400): "<model> is not a
# multimodal model"; OpenAI (400): "image_url is only supported by certain
# models"; others: "does not support images", "vision is not supported".
_IMAGES_REFUSED = re.compile(
    r"image input is not supported|missing data required for image input"
    r"|not a multimodal model|image_url is only supported|mmproj"
    r"|(?:does not|doesn't) support (?:images?|vision)"
    r"|vision is not (?:supported|enabled)",
    re.IGNORECASE,
)


def refuses_images(message: str) -> bool:
    """Whether a server's refusal says the model does not take images."""
    return bool(_IMAGES_REFUSED.search(message or ""))


def refuses_logprobs(message: str) -> bool:
    """Whether a server's refusal is about the ``logprobs``/``top_logprobs`` fields.

    OpenAI's reasoning models: "This model does not support the 'logprobs'
    parameter"; vLLM: "Requested sample logprobs of 20, which is greater than
    max allowed: 5".
    """
    return "logprob" in (message or "").lower()


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
