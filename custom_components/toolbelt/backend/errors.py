"""Errors a model server can cause, each with a short reason and a spoken sentence.

``reason`` is English for the log (str(err) adds the server's own detail), the
model and the agent check. What the user hears is the sentence named by ``key``
(a key of strings.json's "exceptions") with ``placeholders`` and the server's
name, in the conversation's language. Subclasses let HA code react (401 -> reauth).
"""

from __future__ import annotations

_MAX_REASON_DETAIL = 160


class BackendError(Exception):
    """Base class. `server` is the kind's English label; `reason` follows it."""

    default_reason = "failed"
    # The spoken sentence: a translation key, and placeholders besides {server}.
    default_key = "server_failed"

    def __init__(
        self,
        server: str,
        reason: str | None = None,
        *,
        detail: str | None = None,
        key: str | None = None,
        placeholders: dict[str, str] | None = None,
    ) -> None:
        self.server = server
        self.reason = reason or self.default_reason
        self.detail = detail
        self.key = key or self.default_key
        self.placeholders = placeholders or {}
        text = f"{server} {self.reason}"
        super().__init__(f"{text}: {detail}" if detail else text)

    @property
    def server_message(self) -> str:
        """The server's own words about the failure, if it gave any."""
        return self.detail or ""


class BackendConnectionError(BackendError):
    """The server could not be reached (refused, DNS, TLS, reset before answering)."""

    default_reason = "could not be reached"
    default_key = "server_not_reached"


class BackendTimeoutError(BackendError):
    """The server did not finish answering within the request timeout."""

    default_reason = "did not answer in time"
    default_key = "server_timeout"


class BackendAuthError(BackendError):
    """The server refused the API key (HTTP 401 or 403)."""

    default_reason = "rejected the API key"
    default_key = "server_auth"


class BackendServerError(BackendError):
    """The server failed (HTTP 5xx, or an error event inside the stream)."""

    def __init__(
        self, server: str, status: int | None, *, detail: str | None = None
    ) -> None:
        self.status = status
        if status:
            reason = f"had an internal error (HTTP {status})"
            key, placeholders = "server_internal_error", {"status": str(status)}
        else:
            reason = "reported an error while answering"
            key, placeholders = "server_stream_error", {}
        super().__init__(
            server, reason, detail=detail, key=key, placeholders=placeholders
        )


class BackendToolParseError(BackendServerError):
    """The server's own tool-call parser failed on the model's reply (llama.cpp's
    500s), so the reply never arrived. The loop asks again for the raw text
    (``CompletionRequest.raw_text``) and reads the call itself."""

    def __init__(self, server: str, status: int | None, *, detail: str) -> None:
        super().__init__(server, status, detail=detail)
        self.reason = "could not read the model's tool call"
        self.key, self.placeholders = "server_tool_parse", {}
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
        if short:
            reason = f"rejected the request: {short}"
            key, placeholders = "server_bad_request", {"message": short}
        else:
            reason = f"rejected the request (HTTP {status})"
            key, placeholders = "server_bad_request_status", {"status": str(status)}
        super().__init__(
            server, reason, detail=f"HTTP {status}", key=key, placeholders=placeholders
        )

    @property
    def server_message(self) -> str:
        """The server's own words (``detail`` holds the status)."""
        return self.message


class BackendBusyError(BackendError):
    """The server is overloaded (HTTP 429). A busy server is not a broken one.

    `retry_after` is the server's own hint (Retry-After), in seconds, if it gave one.
    """

    default_reason = "is busy right now; please try again in a moment"
    default_key = "server_busy"

    def __init__(
        self, server: str, *, retry_after: float | None, detail: str | None = None
    ) -> None:
        self.retry_after = retry_after
        super().__init__(server, detail=detail)


class BackendContextOverflowError(BackendError):
    """The request does not fit the model's context window (HTTP 413, or a 4xx
    whose message says so): too much history or a too-long tool result."""

    default_reason = "could not fit this conversation into the model's context"
    default_key = "context_overflow"


class BackendResponseError(BackendError):
    """The answer could not be read: malformed body, broken stream, not OpenAI-shaped."""

    default_reason = "sent a reply that could not be read"
    default_key = "server_bad_reply"


class BackendReplyTooLargeError(BackendResponseError):
    """The answer went past a size limit (a line that never ends, an endless reply)."""

    default_reason = "sent a reply that was too long"
    default_key = "server_reply_too_long"
