"""Toolbelt's own spoken sentences, in the conversation's language.

The texts live in strings.json's "exceptions" (mirrored in translations/en.json,
translated in translations/<language>.json). HA's translation cache serves them:
a key a language lacks, or whose placeholders differ from English, is English.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.helpers import translation
from homeassistant.util import language as language_util

from .backend.errors import BackendError
from .const import DOMAIN
from .loop.phrasebook import PHRASE_KEYS, Phrasebook

# The languages Toolbelt ships (read at import, which HA runs in its executor).
LANGUAGES = tuple(
    sorted(
        path.stem for path in (Path(__file__).parent / "translations").glob("*.json")
    )
)
_PREFIX = f"component.{DOMAIN}.exceptions."


class Phrases:
    """Our sentences in one language."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        """``texts`` as HA's translation cache gives them (flat keys)."""
        self._texts = texts

    def say(self, key: str, **placeholders: str) -> str:
        """The sentence ``key`` with its placeholders filled in."""
        return self._texts[f"{_PREFIX}{key}.message"].format(**placeholders)

    def server_error(self, err: BackendError, kind: str) -> str:
        """What the user hears when the model server failed: its kind, then why."""
        server = self.say(f"server_name_{kind}")
        return self.say(err.key, **err.placeholders, server=server)

    def phrasebook(self) -> Phrasebook:
        """The sentences the HA-free loop says itself."""
        return Phrasebook(**{key: self.say(key) for key in PHRASE_KEYS})


async def async_phrases(hass: HomeAssistant, language: str) -> Phrases:
    """Our sentences in the shipped language closest to ``language``, else English."""
    best = language_util.matches(language, LANGUAGES)
    texts = await translation.async_get_translations(
        hass, best[0] if best else "en", "exceptions", {DOMAIN}
    )
    return Phrases(texts)
