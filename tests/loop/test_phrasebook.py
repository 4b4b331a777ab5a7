"""The loop says its own sentences from the phrasebook its host gives it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_components.toolbelt.loop import Phrasebook
from custom_components.toolbelt.loop.phrasebook import ENGLISH, PHRASE_KEYS
from tests.loop.conftest import Harness, hermes

GERMAN = Phrasebook(
    gave_up="Entschuldigung, das ging nicht innerhalb der Grenze.",
    no_answer="Entschuldigung, das Modell hat keine Antwort gegeben.",
)
EN_JSON = (
    Path(__file__).parents[2]
    / "custom_components"
    / "toolbelt"
    / "translations"
    / "en.json"
)


@pytest.mark.parametrize("phrases", [ENGLISH, GERMAN], ids=["english", "german"])
async def test_a_reply_without_words_is_no_answer_in_the_hosts_words(
    harness: Harness, phrases: Phrasebook
) -> None:
    harness.server.reply_text("<think>The user greets me.</think>")

    turn = await harness.turn("hallo", phrases=phrases)

    assert turn.text == phrases.no_answer


async def test_the_tool_call_limit_is_said_in_the_hosts_words(harness: Harness) -> None:
    for _ in range(3):
        harness.server.reply_text(hermes(("HassTurnOn", {"name": "kitchen"})))

    turn = await harness.turn(phrases=GERMAN, max_tool_calls=1)

    assert turn.text == GERMAN.gave_up


def test_english_is_the_integrations_own_strings() -> None:
    """Without a host's translations the loop speaks en.json's sentences."""
    exceptions = json.loads(EN_JSON.read_text(encoding="utf-8"))["exceptions"]
    assert PHRASE_KEYS == ("gave_up", "no_answer")
    assert (
        Phrasebook(
            gave_up=exceptions["gave_up"]["message"],
            no_answer=exceptions["no_answer"]["message"],
        )
        == ENGLISH
    )
    assert ENGLISH.no_answer == "Sorry, the model gave no answer."
