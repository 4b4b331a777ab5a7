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
