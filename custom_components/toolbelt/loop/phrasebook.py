"""The sentences the loop says itself, in the conversation's language.

The host fills a Phrasebook from its translations: each field is the key of a
spoken sentence in strings.json's "exceptions" (the one home of the texts).
``ENGLISH`` is that file's English, read once at import, for hosts without
translations (the HA-free tests and benchmarks).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
import json
from pathlib import Path

# The integration's English strings (translations/en.json mirrors strings.json).
_ENGLISH = Path(__file__).parents[1] / "translations" / "en.json"


@dataclass(frozen=True, slots=True)
class Phrasebook:
    """What the loop may say instead of the model."""

    gave_up: str
    """The tool-call limit ended the turn before an answer."""
    no_answer: str
    """The model's last reply said nothing."""


# The translation keys a host looks up (the field names).
PHRASE_KEYS = tuple(field.name for field in fields(Phrasebook))


def _english() -> Phrasebook:
    exceptions = json.loads(_ENGLISH.read_text(encoding="utf-8"))["exceptions"]
    return Phrasebook(**{key: exceptions[key]["message"] for key in PHRASE_KEYS})


ENGLISH = _english()
