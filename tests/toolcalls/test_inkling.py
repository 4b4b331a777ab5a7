"""Inkling: calls, refusals, reasoning and what streams (issue #23).

The engine cases live in ``tests/fixtures/engine_families.jsonl`` (family
``inkling``); these tests pin what the fixtures' schema cannot: the refusals'
reasons, the reasoning kept out of the answer, the stream, and that the
reasoning blocks Inkling registers change nothing for other formats.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from custom_components.toolbelt.toolcalls import ParseResult, resolve_dialect
from custom_components.toolbelt.toolcalls.registry import (
    detector_for,
    get_dialect,
    preset_for_model,
)
from tests.toolcalls.dialect_helpers import catalog

CATALOG = catalog()
MODEL = "<|message_model|>"
THINK = "<|content_thinking|>"
TEXT = "<|content_text|>"
JSON = "<|content_invoke_tool_json|>"
RAW = "<|content_invoke_tool_text|>"
END = "<|end_message|>"
TOKENS = (MODEL, THINK, TEXT, JSON, RAW, END, "<|content_model_end_sampling|>")


def _call(name: str, args: dict[str, Any], header: str | None = None) -> str:
    payload = json.dumps({"name": name, "args": args})
    return f"{MODEL}{name if header is None else header}{JSON}{payload}{END}"


def _parsers() -> list[Any]:
    return [
        pytest.param(get_dialect("inkling"), id="dialect"),
        pytest.param(resolve_dialect("inkling"), id="preset"),
        pytest.param(resolve_dialect("auto"), id="auto"),
        pytest.param(resolve_dialect("auto", "Inkling-NVFP4"), id="auto-model"),
    ]


def _read(parser: Any, raw: str) -> ParseResult:
    return parser.parse(raw, CATALOG)


@pytest.mark.parametrize("parser", _parsers())
def test_thinking_is_reasoning_never_content(parser: Any) -> None:
    raw = (
        f"{MODEL}{THINK}The user wants the kitchen light on.{END}"
        f"{MODEL}{TEXT}Turning it on.{END}"
        + _call("HassTurnOn", {"name": "kitchen light"})
    )
    result = _read(parser, raw)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("HassTurnOn", {"name": "kitchen light"})
    ]
    assert result.content == "Turning it on."
    assert result.reasoning == "The user wants the kitchen light on."


@pytest.mark.parametrize("parser", _parsers())
def test_a_text_reply_after_thinking_speaks_only_the_text(parser: Any) -> None:
    raw = f"{THINK}Just a greeting.{END}{MODEL}{TEXT}Hello! How can I help?{END}"
    result = _read(parser, raw)
    assert result.calls == []
    assert result.rejected == []
    assert result.content == "Hello! How can I help?"
    assert result.reasoning == "Just a greeting."


@pytest.mark.parametrize("parser", _parsers())
def test_a_call_token_in_the_thinking_is_no_call(parser: Any) -> None:
    raw = (
        f"{THINK}I could write {JSON} here, but no.{END}"
        f"{MODEL}{TEXT}Nothing to do.{END}"
    )
    result = _read(parser, raw)
    assert result.calls == []
    assert result.rejected == []
    assert result.content == "Nothing to do."


@pytest.mark.parametrize("parser", _parsers())
def test_a_header_naming_another_tool_is_refused_and_never_spoken(
    parser: Any,
) -> None:
    raw = "Checking." + _call("HassTurnOn", {"name": "porch"}, header="HassTurnOff")
    result = _read(parser, raw)
    assert result.calls == []
    assert [c.name for c in result.rejected] == ["HassTurnOn"]
    assert "HassTurnOff" in result.rejected[0].reason
    assert "same tool name" in result.rejected[0].reason
    assert result.content == "Checking."


@pytest.mark.parametrize("parser", _parsers())
def test_a_malformed_payload_is_refused_and_the_next_call_runs(parser: Any) -> None:
    raw = f"{MODEL}HassTurnOn{JSON}{{not json{END}" + _call(
        "HassTurnOff", {"name": "porch"}
    )
    result = _read(parser, raw)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("HassTurnOff", {"name": "porch"})
    ]
    assert len(result.rejected) == 1
    assert "not valid JSON" in result.rejected[0].reason
    assert '"args"' in result.rejected[0].reason  # says what to write instead
    assert result.content == ""


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ('{"name": "HassTurnOn"}', '"args" must be a JSON object'),
        ('{"name": "HassTurnOn", "args": "kitchen"}', '"args" must be a JSON object'),
        ('{"args": {}}', 'no "name"'),
        ("[1, 2, 3]", "not a JSON object"),
        ("", "not a JSON object"),
    ],
)
def test_a_misshapen_payload_is_refused_with_what_to_write(
    payload: str, reason: str
) -> None:
    result = _read(get_dialect("inkling"), f"{MODEL}HassTurnOn{JSON}{payload}{END}")
    assert result.calls == []
    assert len(result.rejected) == 1
    assert reason in result.rejected[0].reason
    assert result.content == ""


@pytest.mark.parametrize("parser", _parsers())
def test_a_cut_off_payload_is_refused_as_truncated(parser: Any) -> None:
    raw = f"On it.{MODEL}HassTurnOn{JSON}" + '{"name": "HassTurnOn", "args": {"na'
    result = _read(parser, raw)
    assert result.calls == []
    assert [c.reason for c in result.rejected] == ["call is truncated"]
    assert result.content == "On it."


@pytest.mark.parametrize("parser", _parsers())
def test_a_raw_text_invocation_is_refused_asking_for_json(parser: Any) -> None:
    result = _read(parser, f"{MODEL}web_search{RAW}weather in Paris{END}")
    assert result.calls == []
    assert [c.name for c in result.rejected] == ["web_search"]
    assert JSON in result.rejected[0].reason
    assert result.content == ""


@pytest.mark.parametrize("parser", _parsers())
def test_the_header_the_prompt_opened_is_not_spoken(parser: Any) -> None:
    raw = 'HassTurnOn<|content_invoke_tool_json|>{"name":"HassTurnOn","args":{}}' + END
    result = _read(parser, raw)
    assert [c.name for c in result.calls] == ["HassTurnOn"]
    assert result.content == ""


def test_a_call_to_a_tool_outside_the_catalog_is_refused() -> None:
    result = _read(resolve_dialect("auto"), _call("delete_all", {}))
    assert result.calls == []
    assert [c.reason for c in result.rejected] == ["unknown tool: delete_all"]
    assert result.content == ""


def test_the_model_name_picks_the_preset_and_the_prompt_shows_the_format() -> None:
    assert preset_for_model("thinkingmachines/Inkling-NVFP4") == ("inkling",)
    prompt = get_dialect("inkling").system_prompt(CATALOG)
    assert f"{MODEL}tool_name{JSON}" in prompt
    assert '"args"' in prompt
    assert END in prompt


def test_a_reply_without_inkling_tokens_costs_auto_nothing() -> None:
    """``auto`` reads a reply with Inkling only when a call token is in it."""
    inkling = get_dialect("inkling")
    assert inkling.triggers == ("<|content_invoke_tool_",)
    for raw in (
        "The kitchen light is on.",
        f"{MODEL}{TEXT}The kitchen light is on.{END}",
        '<tool_call>{"name": "HassTurnOn", "arguments": {}}</tool_call>',
    ):
        assert not inkling.may_match(raw)


# The reasoning blocks Inkling registers open only with its own tokens: its
# closers end nothing else, in the final content or in the stream.
OTHERS = [
    ("<think>plan<|end_message|>more plan</think>The light is on.", "plan"),
    ("[THINK]plan<|end_message|>more[/THINK]The light is on.", "plan"),
    ("The light is on.<|end_message|>", None),
    ("<|end_message|>The light is on.", None),
]


@pytest.mark.parametrize(("raw", "reasoning"), OTHERS)
def test_inkling_closers_end_no_other_reasoning(
    raw: str, reasoning: str | None
) -> None:
    result = _read(resolve_dialect("auto"), raw)
    assert result.content == "The light is on."
    if reasoning is None:
        assert result.reasoning == ""
    else:
        assert result.reasoning.startswith(reasoning)
        assert "more" in result.reasoning
    for size in (1, 3, 100):
        released = _stream(raw, size, resolve_dialect("auto"))
        # Shown whole, or held for the final content (``[`` opens a reply).
        assert released in ("The light is on.", "")
        assert released or raw.startswith("[")


def _stream(raw: str, sizes: int | list[int], parser: Any) -> str:
    detector = detector_for(parser, CATALOG)
    out: list[str] = []
    pos = index = 0
    while pos < len(raw):
        size = sizes if isinstance(sizes, int) else sizes[index % len(sizes)]
        out.append(detector.feed(raw[pos : pos + size]))
        pos, index = pos + size, index + 1
    out.append(detector.finish())
    return "".join(out)


STREAMED = [
    # Thinking, then the answer: only the answer, and all of it, streams.
    (
        f"{MODEL}{THINK}The user greets me; answer briefly.{END}"
        f"{MODEL}{TEXT}Hello! The kitchen light is on.{END}",
        "Hello! The kitchen light is on.",
    ),
    (
        f"{THINK}Greeting.{END}{MODEL}{TEXT}Hello there. Anything else?"
        "<|content_model_end_sampling|>",
        "Hello there. Anything else?",
    ),
    # Thinking, text, then calls: the text streams, the rest is held.
    (
        f"{MODEL}{THINK}Turn it on.{END}{MODEL}{TEXT}Turning it on.{END}"
        + _call("HassTurnOn", {"name": "kitchen light"})
        + _call("HassTurnOff", {"name": "porch"}, header="other_tool"),
        "Turning it on.",
    ),
    # The prompt opened the message: the reply starts with a kind or a header.
    (f"{TEXT}Sure.{END}" + _call("HassTurnOn", {"name": "porch"}), "Sure."),
    (_call("HassTurnOn", {"name": "porch"})[len(MODEL) :], ""),
    # A header the catalog does not know is never spoken either.
    ("Let me look." + _call("get_weather", {"city": "SF"}), "Let me look."),
]


@pytest.mark.parametrize("parser_name", ["inkling", "auto"])
@pytest.mark.parametrize(("raw", "shown"), STREAMED)
def test_the_stream_speaks_only_the_answer(
    raw: str, shown: str, parser_name: str
) -> None:
    parser = resolve_dialect(parser_name)
    final = parser.parse(raw, CATALOG)
    rng = random.Random(raw)
    for sizes in (1, 2, 3, 5, 7, 16, 1000, [rng.randint(1, 9) for _ in range(40)]):
        released = _stream(raw, sizes, parser)
        assert released.strip() == shown, sizes
        assert " ".join(released.split()) == " ".join(final.content.split())
        for never in (*TOKENS, "Turn it on", "greets", "Greeting", "{", "other_tool"):
            assert never not in released, (sizes, never)
        for call in final.calls:
            assert call.name not in released
        assert "get_weather" not in released
