"""Instant confirmations: what to say after device commands that all worked.

The words are Home Assistant's own. An intent result that carries speech is
spoken as it is. Otherwise the intent's response template from
home-assistant-intents (the sentences HA's built-in agent says: "Turned on the
light", "Licht eingeschaltet") is rendered in the conversation's language,
with the call's slots and the first matched entity, as HA's agent renders it.
A command without an intent (a script, another integration's tool) gets a
short "Done." in that language. When a command was asked for and nothing ran,
the honesty guard says so in the same languages.
"""

from __future__ import annotations

from collections.abc import Sequence
import json
from typing import Any

from home_assistant_intents import get_intents, get_languages
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import TemplateError
from homeassistant.helpers import intent, template
from homeassistant.util import language as language_util

from ..const import DOMAIN, LOGGER
from ..loop.events import ResultOut

_RESPONSES = f"{DOMAIN}_intent_responses"
FALLBACK_LANGUAGE = "en"

# "Done." where no intent response exists; by primary language subtag.
DONE: dict[str, str] = {
    "en": "Done.",
    "de": "Erledigt.",
    "fr": "C'est fait.",
    "es": "Hecho.",
    "it": "Fatto.",
    "nl": "Klaar.",
    "pt": "Feito.",
    "pl": "Zrobione.",
    "sv": "Klart.",
    "da": "Færdig.",
    "nb": "Ferdig.",
    "fi": "Valmis.",
    "cs": "Hotovo.",
    "ru": "Готово.",
    "uk": "Готово.",
}


# Said when a device command was asked for and nothing ran (the honesty guard).
NOTHING_CHANGED: dict[str, str] = {
    "en": "Sorry, I did not do that: nothing was changed.",
    "de": "Entschuldigung, das habe ich nicht getan: Es wurde nichts geändert.",
    "fr": "Désolé, je ne l'ai pas fait : rien n'a été modifié.",
    "es": "Lo siento, no lo he hecho: no se ha cambiado nada.",
    "it": "Mi dispiace, non l'ho fatto: non è stato cambiato nulla.",
    "nl": "Sorry, dat heb ik niet gedaan: er is niets veranderd.",
    "pt": "Desculpe, não o fiz: nada foi alterado.",
    "pl": "Przepraszam, nie zrobiłem tego: nic nie zostało zmienione.",
    "sv": "Förlåt, det gjorde jag inte: inget har ändrats.",
    "da": "Beklager, det gjorde jeg ikke: intet er ændret.",
    "nb": "Beklager, det gjorde jeg ikke: ingenting er endret.",
    "fi": "Anteeksi, en tehnyt sitä: mitään ei muutettu.",
    "cs": "Promiňte, to jsem neudělal: nic se nezměnilo.",
    "ru": "Извините, я этого не сделал: ничего не изменилось.",
    "uk": "Вибачте, я цього не зробив: нічого не змінилося.",
}


def nothing_changed(language: str | None) -> str:
    """The honesty guard's sentence, in ``language`` (else English)."""
    return _in_language(NOTHING_CHANGED, language or FALLBACK_LANGUAGE)


async def async_confirmation(
    hass: HomeAssistant, language: str | None, outcomes: Sequence[ResultOut]
) -> str:
    """One short sentence for the whole round, in ``language``."""
    language = language or hass.config.language or FALLBACK_LANGUAGE
    responses = await _async_responses(hass, language)
    sentences: list[str] = []
    for outcome in outcomes:
        sentence = _sentence(hass, responses, outcome.data) or _done(language)
        if sentence not in sentences:
            sentences.append(sentence)
    if len(sentences) == 1:
        return sentences[0]
    return " ".join(s if s[-1:] in ".!?。" else s + "." for s in sentences)


def _done(language: str) -> str:
    return _in_language(DONE, language)


def _in_language(table: dict[str, str], language: str) -> str:
    """The table's sentence for the language's primary subtag, else English."""
    return table.get(language.replace("_", "-").split("-")[0].lower(), table["en"])


def has_sentences(language: str) -> bool:
    """Whether HA's own sentences (home-assistant-intents) cover ``language``."""
    return bool(language_util.matches(language, get_languages()))


def _sentence(hass: HomeAssistant, responses: dict[str, Any], data: Any) -> str | None:
    """The result's own speech, else its intent's response template."""
    response = getattr(data, "original", None)
    if not isinstance(response, intent.IntentResponse):
        return None
    spoken = (response.speech.get("plain") or {}).get("speech")
    if isinstance(spoken, str) and spoken.strip():
        return spoken.strip()
    if response.intent is None:
        return None
    templates = responses.get(response.intent.intent_type) or {}
    slots: dict[str, Any] = {
        name: slot.get("text") or slot.get("value") if isinstance(slot, dict) else slot
        for name, slot in response.intent.slots.items()
    }
    slots |= response.speech_slots
    states = response.matched_states or response.unmatched_states
    state = states[0] if states else None
    # The key HA's sentence would name: the entity's domain, a slot the call
    # used (HassLightSet: brightness, color, temperature), else the default.
    keys = [state.domain] if state else []
    keys += [*slots, "default"]
    key = next((k for k in keys if k in templates), None)
    if key is None:
        return None
    try:
        speech = template.Template(templates[key], hass).async_render(
            {
                "slots": slots,
                "state": template.TemplateState(hass, state) if state else None,
                "query": {
                    "matched": [
                        template.TemplateState(hass, s) for s in response.matched_states
                    ],
                    "unmatched": [
                        template.TemplateState(hass, s)
                        for s in response.unmatched_states
                    ],
                },
            },
            parse_result=False,
        )
    except TemplateError as err:
        LOGGER.debug("Intent response template failed: %s", err)
        return None
    text = " ".join(str(speech).split())
    # A template that found no word for this entity would say "None".
    return text if text and "None" not in text.split() else None


async def _async_responses(hass: HomeAssistant, language: str) -> dict[str, Any]:
    """The intent response templates of ``language``, loaded once (off the loop)."""
    cache: dict[str, dict[str, Any]] = hass.data.setdefault(_RESPONSES, {})
    if language in cache:
        return cache[language]
    cache[language] = await hass.async_add_executor_job(_load_responses, language)
    return cache[language]


def _load_responses(language: str) -> dict[str, Any]:
    """Blocking: read the language's file from home-assistant-intents."""
    matches = language_util.matches(language, get_languages())
    if not matches:
        return {}
    data = get_intents(matches[0], json_load=json.load) or {}
    return (data.get("responses") or {}).get("intents") or {}
