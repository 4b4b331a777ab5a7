"""Model quirks never reach speech, and ordinary prose is left alone."""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls import Catalog, parse
from custom_components.toolbelt.toolcalls.text.quirks import strip_quirks


@pytest.mark.parametrize(
    ("raw", "spoken"),
    [
        ("Assistant: The porch light is off.", "The porch light is off."),
        (
            "[b]Done[/b], the [color=red]red[/color] lamp is on.",
            "Done, the red lamp is on.",
        ),
        (
            "It is 21 degrees.\nUser: and the kitchen?\nAssistant: 19.",
            "It is 21 degrees.",
        ),
        ("It is 21 degrees.\n### Instruction: say more", "It is 21 degrees."),
    ],
)
def test_quirks_are_removed(raw: str, spoken: str) -> None:
    assert strip_quirks(raw) == spoken
    assert parse(raw, Catalog.from_openai([])).content == spoken


@pytest.mark.parametrize(
    "prose",
    [
        "The user manual says: reset it twice.",
        "AI assistants like me can dim lights. Your [kitchen] light is on.",
        "Response times are fast: about 2 seconds.",
    ],
)
def test_prose_is_kept(prose: str) -> None:
    assert strip_quirks(prose) == prose
