"""Toolbelt's own spoken sentences, in the conversation's language.

The texts live in strings.json's "exceptions" (mirrored in translations/en.json,
translated in translations/<language>.json). HA's translation cache serves them:
a key a language lacks, or whose placeholders differ from English, is English.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import translation
from homeassistant.util import language as language_util

from ..backend.errors import BackendError
from ..const import DOMAIN
from ..loop.phrasebook import PHRASE_KEYS, Phrasebook

# The languages Toolbelt ships (read at import, which HA runs in its executor).
LANGUAGES = tuple(
    sorted(
        path.stem
        for path in (Path(__file__).parents[1] / "translations").glob("*.json")
    )
)


class SpokenFailure(HomeAssistantError):
    """A failed turn or task, said as one sentence in its language.

    ``str()`` is that sentence. ``translation_key`` and its placeholders name
    it in strings.json's "exceptions", as HA's own errors do, so a frontend
    may show it in the language it runs in.
    """


class Phrases:
    """Our sentences in one language, English where that language lacks one."""

    def __init__(self, texts: Mapping[str, str], english: Mapping[str, str]) -> None:
        """Both as HA's translation cache gives them (flat keys)."""
        self._texts = texts
        self._english = english

    def say(self, key: str, **placeholders: str) -> str:
        """The sentence ``key`` with its placeholders filled in."""
        return self._texts[_message(key)].format(**placeholders)

    def server_name(self, kind: str, *, sentence: str | None = None) -> str:
        """The server kind ``kind`` as a sentence names it: the ``{server}`` value.

        Named for ``sentence`` (a key), it is English where that sentence is.
        """
        texts = self._texts
        if (
            sentence is not None
            and texts[_message(sentence)] == self._english[_message(sentence)]
        ):
            texts = self._english
        return texts[_message(f"server_name_{kind}")]

    def server_error(self, err: BackendError, kind: str) -> str:
        """What the user hears when the model server failed: its kind, then why.

        A sentence that fell back to English names the server in English too.
        """
        return str(self.server_failure(err, kind))

    def server_failure(self, err: BackendError, kind: str) -> SpokenFailure:
        """The model server's failure as an error that says ``server_error``."""
        return self.failure(err.key, kind, **err.placeholders)

    def failure(
        self, key: str, kind: str, *, spoken: bool = True, **placeholders: str
    ) -> SpokenFailure:
        """The sentence ``key`` about a ``kind`` server, as a ``SpokenFailure``.

        Its text names the server as this language does; its placeholders,
        for a frontend that translates the key itself, name it in English.
        ``spoken=False``: an error shown, not said, ends as HA renders its
        own translated errors (without the final period).
        """
        text = self.say(
            key, **placeholders, server=self.server_name(kind, sentence=key)
        )
        return SpokenFailure(
            text if spoken else text.rstrip("."),
            translation_domain=DOMAIN,
            translation_key=key,
            translation_placeholders={
                **placeholders,
                "server": self._english[_message(f"server_name_{kind}")],
            },
        )

    def phrasebook(self) -> Phrasebook:
        """The sentences the HA-free loop says itself."""
        return Phrasebook(**{key: self.say(key) for key in PHRASE_KEYS})


def _message(key: str) -> str:
    return f"component.{DOMAIN}.exceptions.{key}.message"


async def async_phrases(hass: HomeAssistant, language: str) -> Phrases:
    """Our sentences in the shipped language closest to ``language``, else English."""
    best = language_util.matches(language, LANGUAGES)
    english = await translation.async_get_translations(
        hass, "en", "exceptions", {DOMAIN}
    )
    if not best or best[0] == "en":
        return Phrases(english, english)
    texts = await translation.async_get_translations(
        hass, best[0], "exceptions", {DOMAIN}
    )
    return Phrases(texts, english)
