"""The honesty guard's Home Assistant side: the user's words as HA reads them.

HA's built-in agent recognizes the sentences of home-assistant-intents (and
the user's custom sentences) in the user's language. A turn's words that it
reads as an intent that changes a device are a device command; a question
("is the kitchen light on?", ``HassGetState``) or chat is not. Only strict
matches count, as with "Prefer handling commands locally": exposed entities,
exact wording. Recognition never runs the intent; the loop decides what the
answer may claim (loop/honesty.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant

from ..const import DOMAIN
from ..loop.honesty import Recognized
from ..toolcalls.model import ToolCall
from ..toolcalls.reading.calls import new_call_id
from . import compat
from .confirmations import has_sentences, nothing_changed
from .executor import HAExecutor
from .intent_tools import is_device_command_name, plain_name

# Languages whose sentences Toolbelt asked HA to load (``async_prepare``).
LOADED_SENTENCES = f"{DOMAIN}_sentences_loaded"


async def async_load_sentences(hass: HomeAssistant, language: str) -> None:
    """Have HA load its sentences of ``language`` now, not in a turn."""
    if not has_sentences(language):
        return
    await compat.async_prepare_recognizer(hass, language)
    hass.data.setdefault(LOADED_SENTENCES, set()).add(language)


class IntentRecognizer:
    """One turn's words, read by HA's own intent recognizer (``CommandRecognizer``).

    ``run``: the agent lets HA run the recognized command when the model will
    not (the agent option), so the verdict carries it as a call of the
    agent's own tool for that intent.
    """

    def __init__(
        self,
        hass: HomeAssistant,
        user_input: conversation.ConversationInput,
        tools: Sequence[dict[str, Any]],
        executor: HAExecutor,
        *,
        run: bool = False,
    ) -> None:
        """Bind the turn's words, the agent's tools and how calls are judged."""
        self._hass = hass
        self._input = user_input
        self._tools = {
            plain_name(tool["function"]["name"]): tool["function"] for tool in tools
        }
        self._executor = executor
        self._run = run
        language = user_input.language or hass.config.language
        self.warm = language in hass.data.get(LOADED_SENTENCES, ())

    async def recognize(self) -> Recognized | None:
        """The words as a device command, or None."""
        language = self._input.language or self._hass.config.language
        if not has_sentences(language):
            return None
        found = await compat.async_recognize_intent(self._hass, self._input)
        if found is None:
            return None
        unchanged = nothing_changed(language)
        tool = self._tools.get(found.name)
        if tool is None:
            # A command the agent has no tool for: nothing it said changed a thing.
            if not is_device_command_name(found.name):
                return None
            return Recognized(intent=found.name, unchanged=unchanged)
        call = ToolCall(
            id=new_call_id(),
            name=tool["name"],
            arguments=_arguments(tool.get("parameters") or {}, found.slots),
        )
        if not self._executor.is_device_command(call):
            return None
        return Recognized(
            intent=found.name,
            unchanged=unchanged,
            tool=call.name,
            call=call if self._run else None,
        )


def _arguments(parameters: dict[str, Any], slots: dict[str, Any]) -> dict[str, Any]:
    """The recognized slots the tool takes, shaped as its schema asks.

    HA's sentences give one value per slot (``domain: light``); a tool whose
    argument is a list (``domain: [light]``) gets it as a one-item list.
    """
    props = parameters.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name, value in slots.items():
        prop = props.get(name)
        if not isinstance(prop, dict):
            continue
        if prop.get("type") == "array" and not isinstance(value, list):
            value = [value]
        arguments[name] = value
    return arguments
