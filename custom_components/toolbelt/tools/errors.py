"""Errors our tools raise on purpose.

A ``ServiceError`` is a web service a tool uses (search engine, memory server)
failing; the model server's errors are ``backend.errors.BackendError``.

Every message is written for the model: it says what happened and what to do next, so
the model can tell the user or try again. The Tool object turns any of these into
``ERROR: <Type>: <message>`` text; nothing here ends a turn.
"""

from __future__ import annotations

from .const import EDITORS_ADMINS, EDITORS_NOBODY, EDITORS_USERS


class ToolError(Exception):
    """A failure the model can read and act on."""


class ServiceError(ToolError):
    """A tool's web service (search engine, memory server) failed; ``service`` names it."""

    def __init__(self, service: str, message: str) -> None:
        super().__init__(message)
        self.service = service


class ServiceAuthError(ServiceError):
    """The service refused our credentials or configuration; the user must fix it."""

    def __init__(
        self, service: str, message: str, user_hint: str | None = None
    ) -> None:
        super().__init__(service, message)
        self.user_hint = user_hint or message
        """What to fix, worded for the person reading a repair issue."""


class ServiceRateLimitedError(ServiceError):
    """The service asked us to slow down (HTTP 429 or equivalent)."""


class ServiceUnavailableError(ServiceError):
    """The service is down, slow past its timeout, or answered nonsense."""


class ServiceWrongApiError(ServiceUnavailableError):
    """Something answered at the address, but not the engine's API.

    ``problem`` says what was found, so a form can say it too: "not_found" (no
    API at this path, e.g. HTTP 404), "not_json" or "bad_shape" (JSON of another
    format).
    """

    def __init__(self, service: str, message: str, problem: str) -> None:
        super().__init__(service, message)
        self.problem = problem


class FetchRefusedError(ToolError):
    """A page we will not read: unsafe address, binary, too large, wrong scheme."""


class FetchFailedError(ToolError):
    """The page could not be read: HTTP error, timeout, connection failure."""


class MemoryNotFoundError(ToolError):
    """No memory with that id is visible to this conversation."""


# Why a shared memory was not changed, by the 'Who may change shared memories
# and persona notes' setting: what the model should tell the user.
_SHARED_MEMORY_RULES = {
    EDITORS_ADMINS: "only a Home Assistant administrator may change or delete shared "
    "memories. Tell the user it was not changed, and that an administrator can do it.",
    EDITORS_USERS: "only a logged-in Home Assistant user may change or delete shared "
    "memories, and this conversation has no user (a voice satellite or an "
    "automation). Tell the user it was not changed, and that they can do it from "
    "the Home Assistant app.",
    EDITORS_NOBODY: "the Toolbelt tools settings let nobody change or delete shared "
    "memories; new facts can still be stored. Tell the user it was not changed; an "
    "administrator can change that setting.",
}


# Why a persona note was not added or removed, by the same setting: the notes go
# into the system prompt of everyone who talks to the agent.
_PERSONA_RULES = {
    EDITORS_ADMINS: "only a Home Assistant administrator may add or remove them. "
    "Tell the user it was not changed, and that an administrator can do it.",
    EDITORS_USERS: "only a logged-in Home Assistant user may add or remove them, "
    "and this conversation has no user (a voice satellite or an automation). Tell "
    "the user it was not changed, and that they can do it from the Home Assistant "
    "app.",
    EDITORS_NOBODY: "the Toolbelt tools settings let nobody add or remove them. "
    "Tell the user it was not changed; an administrator can change that setting.",
}


class PersonaLockedError(ToolError):
    """This conversation may not change the notes every user of the agent gets."""

    def __init__(self, editors: str = EDITORS_ADMINS) -> None:
        """The reason, in words the model can pass on; editors is the setting."""
        rule = _PERSONA_RULES.get(editors, _PERSONA_RULES[EDITORS_ADMINS])
        super().__init__(
            "Your persona notes are part of every user's conversations with you, "
            f"and {rule}"
        )


class SharedMemoryLockedError(ToolError):
    """This conversation may not change memories shared by the whole home."""

    def __init__(self, editors: str = EDITORS_ADMINS) -> None:
        """The reason, in words the model can pass on; editors is the setting."""
        rule = _SHARED_MEMORY_RULES.get(editors, _SHARED_MEMORY_RULES[EDITORS_ADMINS])
        super().__init__(f"This memory is shared by everyone in the home, and {rule}")
