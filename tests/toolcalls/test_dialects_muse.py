"""Muse Glimmer: ``to=self`` reasoning, ``to=user`` answer, ATEM calls to tools.

The engine cases (``muse-*`` in ``tests/fixtures/engine_families.jsonl``) are
ported from sgl-project/sglang's test_muse_glimmer_detector.py and
test_muse_glimmer_reasoning_parser.py and FreeToken's
test_muse_glimmer_parsers.py; these tests add what a user notices beyond the
calls and the content: the reasoning kept apart, and what is spoken while the
reply streams.
"""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls.registry import (
    detector_for,
    get_dialect,
    resolve_dialect,
)
from tests.toolcalls.dialect_helpers import calls, catalog, expect, parse, parse_auto


def atem(tool: str, **params: str) -> str:
    body = "".join(
        f'<atem:parameter name="{k}">{v}</atem:parameter>\n' for k, v in params.items()
    )
    return (
        f'<atem:function_calls>\n<atem:invoke name="{tool}">\n{body}'
        "</atem:invoke>\n</atem:function_calls>"
    )


def channel(tool: str, closer: str = "<|eot|>", **params: str) -> str:
    return f"<|start|>assistant to={tool}<|message|>{atem(tool, **params)}{closer}"


THINK = " to=self<|message|>The user wants the porch light.<|eom|>"
CALL = channel("HassTurnOn", name="porch light")
PORCH = expect(("HassTurnOn", {"name": "porch light"}))

# (reply, calls, content, reasoning)
REPLIES = [
    (THINK + CALL, PORCH, "", "The user wants the porch light."),
    (
        THINK + "<|start|>assistant to=user<|message|>It is on already.<|eot|>",
        [],
        "It is on already.",
        "The user wants the porch light.",
    ),
    (
        " to=self<|message|>alpha<|eom|><|start|>assistant to=self<|message|>beta"
        "<|eom|><|start|>assistant to=user<|message|>done<|eot|>",
        [],
        "done",
        "alpha\nbeta",
    ),
    (
        THINK + "<|start|>assistant to=user<|message|>Turning it on.<|eom|>" + CALL,
        PORCH,
        "Turning it on.",
        "The user wants the porch light.",
    ),
    (
        THINK
        + channel("HassTurnOn", "<|eom|>", name="porch light")
        + "<|start|>assistant to=self<|message|>Done.<|eom|>"
        "<|start|>assistant to=user<|message|>The porch light is on.<|eot|>",
        PORCH,
        "The porch light is on.",
        "The user wants the porch light.\nDone.",
    ),
]


@pytest.mark.parametrize(("raw", "want", "content", "reasoning"), REPLIES)
def test_calls_answer_and_reasoning_are_kept_apart(
    raw: str, want: list, content: str, reasoning: str
) -> None:
    for result in (parse("muse", raw), parse_auto(raw)):
        assert calls(result) == want
        assert result.rejected == []
        assert result.content == content
        assert result.reasoning == reasoning


def _stream(dialect: str, raw: str, size: int) -> tuple[str, bool]:
    parser = resolve_dialect(dialect)
    detector = detector_for(parser, catalog())
    out = [detector.feed(raw[i : i + size]) for i in range(0, len(raw), size)]
    holding = detector.holding
    out.append(detector.finish())
    return "".join(out), holding


# The spoken answer comes before any call, so all of it streams.
STREAMED = [(raw, content) for raw, want, content, _ in REPLIES[:4]]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
@pytest.mark.parametrize("dialect", ["auto", "muse"])
@pytest.mark.parametrize(("raw", "content"), STREAMED)
def test_only_the_answer_is_spoken_while_streaming(
    raw: str, content: str, dialect: str, size: int
) -> None:
    released, _ = _stream(dialect, raw, size)
    assert released == content
    assert released == resolve_dialect(dialect).parse(raw, catalog()).content


@pytest.mark.parametrize("size", [1, 3, 1000])
@pytest.mark.parametrize("dialect", ["auto", "muse"])
def test_an_answer_after_a_call_waits_for_the_parse(dialect: str, size: int) -> None:
    """Once a tool channel opens, the rest is held: the loop shows the parsed
    content, never the reasoning, headers or the ATEM block."""
    raw = REPLIES[4][0]
    released, holding = _stream(dialect, raw, size)
    assert holding
    assert released == ""


@pytest.mark.parametrize("size", [1, 4, 1000])
def test_a_bare_tool_header_is_never_spoken(size: int) -> None:
    raw = " to=HassTurnOn<|message|>" + atem("HassTurnOn", name="porch light")
    assert _stream("auto", raw, size) == ("", True)
    assert calls(parse_auto(raw)) == PORCH


@pytest.mark.parametrize("size", [1, 2, 1000])
@pytest.mark.parametrize(
    "reply", ["to=whom it may concern: hello.", "to", "t", "total: 3 lights."]
)
def test_prose_that_opens_like_a_header_is_spoken(reply: str, size: int) -> None:
    assert _stream("auto", reply, size) == (reply, False)


def test_a_doubled_name_is_the_catalog_tool() -> None:
    """The template doubles a bare name's namespace (``X.X``)."""
    raw = channel("HassTurnOn.HassTurnOn", name="porch light")
    assert calls(parse("muse", raw)) == PORCH
    other = parse("muse", channel("HassTurnOn.HassTurnOff", name="porch light"))
    assert other.calls == []
    assert [r.reason for r in other.rejected] == [
        "unknown tool: HassTurnOn.HassTurnOff"
    ]


def test_prose_beside_the_block_in_a_tool_channel_is_not_spoken() -> None:
    raw = (
        "<|start|>assistant to=HassTurnOn<|message|>calling now: "
        + atem("HassTurnOn", name="porch light")
        + "<|eot|>"
    )
    for result in (parse("muse", raw), parse_auto(raw)):
        assert calls(result) == PORCH
        assert result.content == ""


def test_a_block_in_the_reasoning_is_no_call() -> None:
    raw = (
        f" to=self<|message|>Maybe {atem('HassTurnOn', name='X')} no.<|eom|>"
        "<|start|>assistant to=user<|message|>I will not call it.<|eot|>"
    )
    for result in (parse("muse", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.rejected == []
        assert result.content == "I will not call it."


def test_auto_does_not_read_replies_without_its_tokens() -> None:
    """A chain asks a member only when one of its triggers is in the reply."""
    muse = get_dialect("muse")
    harmony = (
        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>"
        "final<|message|>The light is on.<|return|>"
    )
    for reply in ("The light is on.", harmony, "<tool_call>{}</tool_call>"):
        assert not muse.may_match(reply)
    assert muse.may_match(REPLIES[0][0])


def test_the_prompt_asks_for_an_atem_block() -> None:
    muse = get_dialect("muse")
    prompt = muse.system_prompt(catalog())
    assert "<atem:function_calls>" in prompt
    assert '<atem:parameter name="arg">' in prompt
    assert "HassTurnOn" in prompt
    assert muse.stop_sequences() == ["</atem:function_calls>"]


# Upstream's headerless switches: a channel left for the next with no end
# token, its header written bare (FreeToken's HIGH-2 and R2 HIGH-1 cases).
SWITCHES = [
    (
        " to=self<|message|>I should turn it on. to=HassTurnOn<|message|>"
        + atem("HassTurnOn", name="porch light")
        + "<|eot|>",
        PORCH,
        "",
        "I should turn it on.",
    ),
    (
        " to=self<|message|>quick thought to=user<|message|>Here you go.<|eot|>",
        [],
        "Here you go.",
        "quick thought",
    ),
    (
        " to=HassTurnOn<|message|>"
        + atem("HassTurnOn", name="porch light")
        + "to=user<|message|>It is on.<|eot|>",
        PORCH,
        "It is on.",
        "",
    ),
]


@pytest.mark.parametrize(("raw", "want", "content", "reasoning"), SWITCHES)
def test_a_bare_header_switches_channel(
    raw: str, want: list, content: str, reasoning: str
) -> None:
    for result in (parse("muse", raw), parse_auto(raw)):
        assert calls(result) == want
        assert result.content == content
        assert result.reasoning == reasoning


@pytest.mark.parametrize("size", [1, 3, 1000])
@pytest.mark.parametrize(("raw", "want", "content", "reasoning"), SWITCHES)
def test_a_switch_out_of_reasoning_never_speaks_it(
    raw: str, want: list, content: str, reasoning: str, size: int
) -> None:
    released, holding = _stream("auto", raw, size)
    assert holding == bool(want)
    assert released == ("" if want else content)


@pytest.mark.parametrize("dialect", ["auto", "muse"])
@pytest.mark.parametrize(
    "raw",
    [
        # A bare answer header after an end token: the reasoning ends there.
        " to=self<|message|>The user greets me.<|eom|> to=user<|message|>"
        "Hello! How can I help?<|eot|>",
        " to=self<|message|>The user greets me.<|eot|>\nto=user<|message|>"
        "Hello! How can I help?<|eot|>",
        " to=self<|message|>The user greets me.<|eom|><|start|>assistant to=user"
        "<|message|>Hello! How can I help?<|eot|>",
    ],
)
def test_an_answer_after_reasoning_is_spoken_not_reasoning(
    raw: str, dialect: str
) -> None:
    """Other formats' cleanups drop Muse's end tokens before the reasoning
    is split off: the answer's header must still end the reasoning."""
    result = resolve_dialect(dialect).parse(raw, catalog())
    assert result.calls == []
    assert result.content == "Hello! How can I help?"
    assert result.reasoning == "The user greets me."
    released, _ = _stream(dialect, raw, 3)
    assert released == result.content
