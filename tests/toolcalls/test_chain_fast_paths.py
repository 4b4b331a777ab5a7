"""A chain's shortcuts answer what the work they skip would have answered."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st
import pytest

from custom_components.toolbelt.toolcalls.chain import ChainDialect
from custom_components.toolbelt.toolcalls.registry import PRESETS, resolve_dialect

CHAINS = [
    resolve_dialect(name)
    for name in ("auto", *sorted(PRESETS))
    if isinstance(resolve_dialect(name), ChainDialect)
]
# What the chains' cleanups look for, and pieces of the scaffolding around it.
PIECES = sorted(
    {word for chain in CHAINS for word in chain._cleans.words}  # type: ignore[attr-defined,union-attr]
    | {"<", ">", "/", ":", "\n", " ", "Answer", "response", "tool", "co"}
)


def _every_step(chain: ChainDialect, text: str) -> str:
    for _, step in chain._sanitizers:  # type: ignore[attr-defined]
        text = step(text)
    return text


@pytest.mark.parametrize("chain", CHAINS, ids=lambda chain: chain.name)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=16))
def test_sanitize_runs_only_the_steps_that_change_the_text(
    chain: ChainDialect, pieces: list[str]
) -> None:
    """Each member's cleanup runs when its own strings are in the text (as an
    earlier step left it); skipping the others changes nothing."""
    text = "".join(pieces)
    assert chain.sanitize(text) == _every_step(chain, text)


@pytest.mark.parametrize(
    ("text", "cleaned"),
    [
        ("Sure <<answer>co: 0>here<<answer>/co: 0>", "Sure here"),
        ("A <<answer>|tool_call|> b", "A  b"),
        ("a</func<answer>tion> b", "a b"),
        ("x <res<answer>ponse>y</res<answer>ponse>", "x y"),
    ],
)
def test_a_cleanup_that_joins_a_later_members_strings_is_followed_by_it(
    text: str, cleaned: str
) -> None:
    """A step's output is looked at again: a string that a removal (here
    Apriel's ``<answer>``) brings together is cleaned by the member after it
    (Command R, Granite, Functionary), as running every step would."""
    auto = resolve_dialect("auto")
    assert isinstance(auto, ChainDialect)
    assert auto.sanitize(text) == _every_step(auto, text) == cleaned


AUTO = resolve_dialect("auto")
TRIGGERS = sorted(
    {t for d in AUTO.dialects for t in d.triggers}  # type: ignore[attr-defined]
)


def _reached(chain: ChainDialect, text: str) -> list[str]:
    """The members a chain would try on ``text`` if none of them found a call."""
    names: list[str] = []
    present = 0
    for step in chain._passes:  # type: ignore[attr-defined]
        present |= step.triggers.mask(text) << step.shift
        names += [member.dialect.name for member in step.candidates(present)]
    return names


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(TRIGGERS) | st.text(max_size=4), max_size=12))
def test_the_later_members_are_tried_on_their_own_triggers(pieces: list[str]) -> None:
    """``auto`` looks for its marker-less members' triggers in a second pass
    (``registry.AUTO_LATER``); the members it tries are those holding a
    trigger in the reply, in order, as one pass over every trigger finds."""
    assert isinstance(AUTO, ChainDialect)
    text = "".join(pieces)
    expected = [
        d.name
        for d in AUTO.dialects
        if not d.structured
        and (not d.triggers or any(trigger in text for trigger in d.triggers))
    ]
    assert _reached(AUTO, text) == expected
    assert len(AUTO._passes) == 2  # type: ignore[attr-defined]
