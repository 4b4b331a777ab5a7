"""The honesty guard's cost: recognizing a turn's words with HA's own sentences.

One Home Assistant with the dev instance's demo home (bench/prompt_bench.py),
Toolbelt's recognizer (``recognizer.IntentRecognizer``: the strict match HA's
built-in agent does, without running anything). Printed:

- loading HA's English sentences (``async_prepare``, which HA's Assist
  pipeline calls before a turn), and a first German turn without it;
- recognizing a new sentence (commands, questions, chat: none seen before)
  and the same sentence again (HA caches by text: what a turn costs when
  "Prefer handling commands locally" has just tried the same words);
- a chat turn's time to its first spoken words and to its end, against a
  local server that answers after FIRST_TOKEN_MS: with the guard as an Assist
  pipeline runs it (the language prepared, so recognition runs beside the
  request and costs a turn nothing once it is faster than the server), with
  the guard lazy (the language not prepared by Toolbelt: recognition starts
  when the first words arrive), and with recognition replaced by an instant
  "not a command".

Run from the repository root: .venv/bin/python -m bench.honesty_bench
(ROUNDS=20 FIRST_TOKEN_MS=0,150 by default; set them in the environment).
"""

from __future__ import annotations

# HA 2026.11 must be imported before httpx (tests/ha_bridge explains why).
import tests.ha_bridge.plugin  # noqa: F401  # isort: skip

import asyncio
from collections.abc import Awaitable, Callable
import os
import statistics
import tempfile
import time
from typing import Any
from unittest.mock import patch

from homeassistant import loader
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er, frame, llm
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from bench.prompt_bench import _dev_home
from custom_components.toolbelt.const import (
    CONF_BASE_URL,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_SERVER_KIND,
    DOMAIN,
)
from custom_components.toolbelt.ha import compat
from custom_components.toolbelt.ha.executor import HAExecutor
from custom_components.toolbelt.ha.recognizer import (
    LOADED_SENTENCES,
    IntentRecognizer,
    async_load_sentences,
)
from tests.ha.conftest import open_chat_session
from tests.openai_server import OpenAIServer

ROUNDS = int(os.environ.get("ROUNDS", "20"))
FIRST_TOKEN_MS = [
    float(ms) for ms in os.environ.get("FIRST_TOKEN_MS", "0,150").split(",")
]
# New words each time: HA caches recognition by text.
SENTENCES = [
    *(f"turn on the {n}" for n in ("kitchen light", "living room lamp")),
    "turn off the living room ceiling light",
    "set the living room lamp to 40%",
    "open the garage door",
    "close the living room blinds",
    "set the thermostat to 22 degrees",
    "lock the front door lock",
    "is the kitchen light on?",
    "what is the temperature in the living room",
    "tell me a joke",
    "what is the capital of France",
    "remind me what I said yesterday",
    "how are you today",
]


def _input(hass: HomeAssistant, text: str, language: str) -> Any:
    fields = conversation.ConversationInput.__dataclass_fields__
    extra = {"satellite_id": None} if "satellite_id" in fields else {}
    return conversation.ConversationInput(
        text=text,
        context=Context(),
        conversation_id=None,
        device_id=None,
        language=language,
        agent_id="conversation.bench",
        **extra,
    )


async def _recognizer(
    hass: HomeAssistant, text: str, language: str = "en"
) -> IntentRecognizer:
    """The recognizer one agent turn with Assist would build."""
    api = await llm.async_get_api(
        hass,
        llm.LLM_API_ASSIST,
        llm.LLMContext(
            platform=DOMAIN,
            context=None,
            language=language,
            assistant="conversation",
            device_id=None,
        ),
    )
    tools = [compat.tool_to_openai(t, api.custom_serializer) for t in api.tools]
    return IntentRecognizer(hass, _input(hass, text, language), tools, HAExecutor(api))


async def _ms(work: Callable[[], Awaitable[Any]]) -> float:
    started = time.perf_counter()
    await work()
    return (time.perf_counter() - started) * 1000


async def recognition(hass: HomeAssistant) -> dict[str, Any]:
    """Milliseconds: loading sentences, new words, words seen before."""
    figures: dict[str, Any] = {}
    figures["prepare en"] = await _ms(lambda: async_load_sentences(hass, "en"))
    german = await _recognizer(hass, "Schalte das Licht in der Küche ein", "de")
    figures["first German turn, unprepared"] = await _ms(german.recognize)
    new, again, commands = [], [], 0
    for round_ in range(ROUNDS):
        # A new word each round keeps HA's cache from answering.
        for text in SENTENCES:
            words = f"{text} {'please ' * round_}".strip()
            recognizer = await _recognizer(hass, words)
            started = time.perf_counter()
            verdict = await recognizer.recognize()
            new.append((time.perf_counter() - started) * 1000)
            commands += verdict is not None
            again.append(await _ms(recognizer.recognize))
    figures["new words"] = new
    figures["seen words"] = again
    figures["commands"] = commands / ROUNDS
    return figures


async def _agent(hass: HomeAssistant, server: OpenAIServer) -> str:
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Bench server",
        data={CONF_SERVER_KIND: "llamacpp", CONF_BASE_URL: server.base_url},
        subentries_data=[
            ConfigSubentryData(
                data={CONF_MODEL: "bench-model", CONF_LLM_HASS_API: ["assist"]},
                subentry_type="conversation",
                title="honesty",
                unique_id=None,
            )
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    (entity,) = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    return entity.entity_id


async def _chat_turn(
    hass: HomeAssistant, server: OpenAIServer, agent: str, text: str, delay: float
) -> tuple[float, float]:
    """(ms to the first streamed words, ms to the end) of one chat turn."""
    answer = "Paris is the capital of France."
    server.reply_text(answer, delay=delay)
    first: list[float] = []
    context = Context()
    started = time.perf_counter()

    def heard(_log: Any, delta: dict[str, Any]) -> None:
        if delta.get("content") and not first:
            first.append(time.perf_counter())

    with (
        open_chat_session(hass, context=context) as session,
        conversation.async_get_chat_log(hass, session, chat_log_delta_listener=heard),
    ):
        await conversation.async_converse(
            hass, text, session.conversation_id, context, agent_id=agent
        )
    ended = time.perf_counter()
    return (first[0] - started) * 1000, (ended - started) * 1000


async def turns(hass: HomeAssistant) -> list[tuple[float, str, float, float]]:
    """Chat turns with the guard, and with recognition answering at once."""

    async def instant(self: IntentRecognizer) -> None:
        return None

    rows = []
    async with OpenAIServer(models=["bench-model"]) as server:
        agent = await _agent(hass, server)
        for ms in FIRST_TOKEN_MS:
            for label in ("guard", "guard, lazy", "no recognition"):
                firsts, ends = [], []
                # Lazy: Toolbelt did not prepare the language (no pipeline
                # asked), so recognition starts when the first words arrive.
                prepared = {"en"} if label == "guard" else set()
                with (
                    patch.dict(hass.data, {LOADED_SENTENCES: prepared}),
                    patch.object(
                        IntentRecognizer,
                        "recognize",
                        instant
                        if label == "no recognition"
                        else IntentRecognizer.recognize,
                    ),
                ):
                    for round_ in range(ROUNDS):
                        # New words every turn: HA caches recognition by text.
                        text = f"what is the capital of France, question {len(rows)}"
                        text += f" {round_}"
                        first, end = await _chat_turn(
                            hass, server, agent, text, ms / 1000
                        )
                        firsts.append(first)
                        ends.append(end)
                rows.append(
                    (ms, label, statistics.median(firsts), statistics.median(ends))
                )
        for entry in hass.config_entries.async_entries(DOMAIN):
            await hass.config_entries.async_unload(entry.entry_id)
    return rows


async def main() -> tuple[dict[str, Any], list[tuple[float, str, float, float]]]:
    with tempfile.TemporaryDirectory() as config_dir:
        async with async_test_home_assistant(config_dir=config_dir) as hass:
            hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
            frame.async_setup(hass)
            await _dev_home(hass)
            figures = await recognition(hass)
            rows = await turns(hass)
            await hass.async_stop()
    return figures, rows


def report() -> None:
    """Run the bench and print the figures."""
    figures, rows = asyncio.run(main())
    print(f"loading English sentences (async_prepare): {figures['prepare en']:.0f} ms")
    german = figures["first German turn, unprepared"]
    print(f"first German turn without async_prepare: {german:.0f} ms")
    for key in ("new words", "seen words"):
        values = sorted(figures[key])
        p95 = values[int(len(values) * 0.95) - 1]
        print(
            f"recognizing {key} ({len(values)}): median {statistics.median(values):.1f}"
            f" ms, p95 {p95:.1f} ms, max {values[-1]:.1f} ms"
        )
    print(
        f"device commands among {len(SENTENCES)} sentences: {figures['commands']:.0f}"
    )
    print(f"chat turn, median of {ROUNDS}:")
    print(f"{'first token':>12} {'recognition':<15} {'first words':>12} {'turn':>8}")
    for ms, label, first, end in rows:
        print(f"{ms:>9.0f} ms {label:<15} {first:>9.1f} ms {end:>5.1f} ms")


if __name__ == "__main__":
    report()
