"""The ``handoff`` tool: another conversation agent answers this turn.

The model passes the user's own words, with a short note, to an agent the
user allowed (HA's built-in agent for fast local intents, or another Toolbelt
agent with a bigger model). That agent's reply is this turn's answer: the tool
takes control (``ToolOutcome.answer``) and no further model request is made.

Loops are refused: the agents a request has passed through travel with it in
a context variable (the target runs inside this call), so no agent already in
the chain is asked again, and a request is handed off at most twice.

Outside data: the note goes into the target's system prompt, so a conversation
that has read outside data hands off without it (``NOTE_LEFT_OUT``). The mark
travels both ways with the turn (the target gets the same HA context): the
target's own tools see this conversation's mark, and what the target read marks
this conversation.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent

from ..loop.executor import ToolOutcome
from ..toolcalls.model import ToolCall
from ..tools.outside_readers import outside_readers

HANDOFF_TOOL = "handoff"
MAX_HANDOFFS = 2
# The whole answer of the other agent, its own tool calls included.
HANDOFF_TIMEOUT = 120.0

# Said in the target's system prompt instead of a note written after outside data.
NOTE_LEFT_OUT = (
    " Its note was left out because the conversation had read text from outside"
    " this home (web pages, search results, memories or past conversations)."
)

# Entity ids of the agents this request has passed through, the first included.
_CHAIN: ContextVar[tuple[str, ...]] = ContextVar("toolbelt_handoff_chain", default=())


def handoff_in_progress() -> bool:
    """Whether this turn runs inside another agent's hand-off (it is not the first)."""
    return bool(_CHAIN.get())


class HandoffError(Exception):
    """The hand-off cannot happen; the message tells the model what to do."""


class Handoff:
    """One turn's hand-off tool: its targets, and the request it would pass on."""

    personal = True
    """Its note holds what the model knows of the user (``Tool.personal``)."""

    def __init__(
        self,
        hass: HomeAssistant,
        source: str,
        targets: list[str],
        user_input: conversation.ConversationInput,
        conversation_id: str,
    ) -> None:
        """Bind the tool to this agent, its allowed targets and this turn."""
        self._hass = hass
        self._source = source
        self._targets = [t for t in targets if t != source]
        self._input = user_input
        self._conversation_id = conversation_id

    def _name(self, entity_id: str) -> str:
        state = self._hass.states.get(entity_id)
        return state.name if state else entity_id

    def openai_tool(self) -> dict[str, Any]:
        """The tool as the model sees it; the targets are its only choices."""
        agents = "; ".join(f"{t} ({self._name(t)})" for t in self._targets)
        return {
            "type": "function",
            "function": {
                "name": HANDOFF_TOOL,
                "description": (
                    "Pass the user's request to another assistant, which answers"
                    " the user instead of you; its answer is spoken as it is. Use"
                    " it when that assistant is better at the request. Assistants:"
                    f" {agents}."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "agent": {"type": "string", "enum": list(self._targets)},
                        "note": {
                            "type": "string",
                            "description": "A short note for that assistant:"
                            " what you already know that helps it.",
                        },
                    },
                    "required": ["agent"],
                },
            },
        }

    @property
    def offered(self) -> bool:
        """Only an agent with targets offers the tool."""
        return bool(self._targets)

    def is_read_only(self, call: ToolCall) -> bool:
        """The other agent may change devices: it runs in order."""
        return False

    def is_device_command(self, call: ToolCall) -> bool:
        """Not a device command itself; the other agent keeps its own caps."""
        return False

    def validates_arguments(self, call: ToolCall) -> bool:
        """The loop checks the arguments against the schema above."""
        return False

    async def run(self, call: ToolCall) -> ToolOutcome:
        """Ask the target; its reply becomes the answer, or an error the model reads."""
        target = str(call.arguments.get("agent", ""))
        if target not in self._targets:
            raise HandoffError(
                f"{target or 'no agent'} is not an assistant you may hand off to;"
                f" use one of: {', '.join(self._targets)}"
            )
        chain = _CHAIN.get() or (self._source,)
        if target in chain:
            raise HandoffError(
                f"{target} already had this request (chain: {' -> '.join(chain)});"
                " answer the user yourself"
            )
        if len(chain) - 1 >= MAX_HANDOFFS:
            raise HandoffError(
                f"this request was already handed off {MAX_HANDOFFS} times, the"
                " most allowed; answer the user yourself"
            )
        user_input = self._input
        readers = outside_readers(self._hass)
        turn_id = user_input.context.id
        # The turn carries this conversation's mark to the target's own tools.
        read_outside = readers.share(self._conversation_id, turn_id)
        prompt = f"{self._name(self._source)} handed this request to you."
        if note := str(call.arguments.get("note") or "").strip():
            # The note goes into the target's system prompt: after outside data
            # it could carry a page's instructions there, so it stays out.
            prompt += NOTE_LEFT_OUT if read_outside else f" Its note: {note}"
        token = _CHAIN.set((*chain, target))
        try:
            async with asyncio.timeout(HANDOFF_TIMEOUT):
                result = await conversation.async_converse(
                    self._hass,
                    user_input.text,
                    # Linked: the target keeps its own conversation with this one.
                    f"{self._conversation_id}-{target}",
                    user_input.context,
                    language=user_input.language,
                    agent_id=target,
                    device_id=user_input.device_id,
                    satellite_id=user_input.satellite_id,
                    extra_system_prompt=prompt,
                )
        except TimeoutError as err:
            raise HandoffError(
                f"{target} did not answer within {HANDOFF_TIMEOUT:.0f} s"
            ) from err
        finally:
            _CHAIN.reset(token)
            # The target's answer is this turn's: what it read marks this
            # conversation too.
            readers.share(self._conversation_id, turn_id)
        response = result.response
        speech = ((response.speech.get("plain") or {}).get("speech") or "").strip()
        if response.response_type is intent.IntentResponseType.ERROR or not speech:
            raise HandoffError(
                f"{target} could not answer: {speech or 'it gave no answer'}"
            )
        return ToolOutcome(data={"agent": target, "answer": speech}, answer=speech)
