"""Errors a model server can cause, each with a short reason fit to be spoken.

The loop ends a turn with f"{err.server} {err.reason}" style speech and logs str(err),
which adds the server's own detail. Subclasses let HA code react (401 -> reauth).
"""

from __future__ import annotations

_MAX_REASON_DETAIL = 160


class BackendError(Exception):
    """Base class. `server` is the label the user knows; `reason` follows it in speech."""

    default_reason = "failed"

    def __init__(
        self, server: str, reason: str | None = None, *, detail: str | None = None
    ) -> None:
        self.server = server
        self.reason = reason or self.default_reason
        self.detail = detail
        text = f"{server} {self.reason}"
        super().__init__(f"{text}: {detail}" if detail else text)

    @property
    def server_message(self) -> str:
        """The server's own words about the failure, if it gave any."""
        return self.detail or ""


class BackendConnectionError(BackendError):
    """The server could not be reached (refused, DNS, TLS, reset before answering)."""

    default_reason = "could not be reached"


class BackendTimeoutError(BackendError):
    """The server did not finish answering within the request timeout."""

    default_reason = "did not answer in time"


class BackendAuthError(BackendError):
    """The server refused the API key (HTTP 401 or 403)."""

    default_reason = "rejected the API key"


class BackendServerError(BackendError):
    """The server failed (HTTP 5xx, or an error event inside the stream)."""

    def __init__(
        self, server: str, status: int | None, *, detail: str | None = None
    ) -> None:
        self.status = status
        reason = (
            f"had an internal error (HTTP {status})"
            if status
            else "reported an error while answering"
        )
        super().__init__(server, reason, detail=detail)


class BackendToolParseError(BackendServerError):
    """The server's own tool-call parser failed on the model's reply (llama.cpp's
    500s), so the reply never arrived. The loop asks again for the raw text
    (``CompletionRequest.raw_text``) and reads the call itself."""

    def __init__(self, server: str, status: int | None, *, detail: str) -> None:
        super().__init__(server, status, detail=detail)
        self.reason = "could not read the model's tool call"
        self.args = (f"{server} {self.reason}: {detail}",)


class BackendBadRequestError(BackendError):
    """The server rejected the request (other 4xx), e.g. an unknown model, the `tool`
    role, or the `stop` field. `message` is the server's own words."""

    def __init__(self, server: str, status: int, message: str) -> None:
        self.status = status
        self.message = message
        short = (
            message
            if len(message) <= _MAX_REASON_DETAIL
            else message[:_MAX_REASON_DETAIL] + "…"
        )
        reason = (
            f"rejected the request: {short}"
            if short
            else f"rejected the request (HTTP {status})"
        )
        super().__init__(server, reason, detail=f"HTTP {status}")

    @property
    def server_message(self) -> str:
        """The server's own words (``detail`` holds the status)."""
        return self.message


class BackendBusyError(BackendError):
    """The server is overloaded (HTTP 429). A busy server is not a broken one.

    `retry_after` is the server's own hint (Retry-After), in seconds, if it gave one.
    """

    default_reason = "is busy right now; please try again in a moment"

    def __init__(
        self, server: str, *, retry_after: float | None, detail: str | None = None
    ) -> None:
        self.retry_after = retry_after
        super().__init__(server, detail=detail)


class BackendContextOverflowError(BackendError):
    """The request does not fit the model's context window (HTTP 413, or a 4xx
    whose message says so): too much history or a too-long tool result."""

    default_reason = "could not fit this conversation into the model's context"


class BackendResponseError(BackendError):
    """The answer could not be read: malformed body, broken stream, not OpenAI-shaped."""

    default_reason = "sent a reply that could not be read"


class BackendReplyTooLargeError(BackendResponseError):
    """The answer went past a size limit (a line that never ends, an endless reply)."""

    default_reason = "sent a reply that was too long"
