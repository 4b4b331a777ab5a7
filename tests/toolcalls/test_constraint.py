"""Constraints checked by the engines' own compilers: jsonschema and llguidance.

llguidance is the grammar engine inside llama.cpp; it compiles our GBNF the way
the server would, and a byte-level tokenizer lets it judge whole replies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import llguidance as llg
import pytest

from custom_components.toolbelt.toolcalls import Catalog, get_dialect
from custom_components.toolbelt.toolcalls.prompting.constraint import (
    FRAMES,
    ConstraintError,
    Shape,
    fingerprint,
    gbnf,
    json_schema,
    unwrap_answer,
)

TOOLS: list[dict[str, Any]] = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "corpus" / "tools.json").read_text()
)
CATALOG = Catalog.from_openai(TOOLS)
GOOD = {"name": "HassSetPosition", "arguments": {"position": 30, "name": "blinds"}}
WRONG_NAME = {"name": "HassSetPositions", "arguments": {"position": 30}}
MISSING = {"name": "HassSetPosition", "arguments": {"name": "blinds"}}
WRONG_TYPE = {"name": "HassSetPosition", "arguments": {"position": "thirty"}}
PROSE = "The blinds are at 30 %. Anything else?"


class _Bytes:
    """One token per byte, plus EOS: llguidance then judges text, not a vocabulary."""

    eos_token_id = 256
    bos_token_id = None
    tokens = (*(bytes([i]) for i in range(256)), b"<eos>")
    special_token_ids = (256,)

    def __call__(self, data: bytes) -> list[int]:
        return list(data)


TOKENIZER = llg.LLTokenizer(llg.TokenizerWrapper(_Bytes()))


def _compiled(grammar: str) -> str:
    lark = llg.grammar_from("gbnf", grammar)
    failed, warnings = llg.LLMatcher.validate_grammar_with_warnings(lark, TOKENIZER)
    assert not failed, warnings
    return lark


def _accepts(lark: str, text: str) -> bool:
    matcher = llg.LLMatcher(TOKENIZER, lark)
    consumed = matcher.consume_tokens(TOKENIZER.tokenize_bytes(text.encode()))
    return consumed and matcher.is_accepting() and not matcher.is_error()


def _tagged(call: dict[str, Any]) -> str:
    return f"<tool_call>{json.dumps(call)}</tool_call>"


def _valid(schema: dict[str, Any], value: Any) -> bool:
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize("shape", [Shape.ANY_CALL, Shape.ANSWER_OR_CALL])
def test_schema_accepts_a_right_call_and_rejects_wrong_ones(shape: Shape) -> None:
    schema = json_schema(CATALOG, shape)
    assert _valid(schema, GOOD)
    for bad in (WRONG_NAME, MISSING, WRONG_TYPE):
        assert not _valid(schema, bad), bad


def test_schema_for_one_tool_refuses_the_others() -> None:
    schema = json_schema(CATALOG, Shape.ONE_CALL, "HassSetPosition")
    assert _valid(schema, GOOD)
    assert not _valid(schema, {"name": "HassTurnOn", "arguments": {"name": "x"}})


def test_schema_answer_or_call_takes_an_answer_object() -> None:
    assert _valid(json_schema(CATALOG, Shape.ANSWER_OR_CALL), {"answer": PROSE})
    assert not _valid(json_schema(CATALOG, Shape.ANY_CALL), {"answer": PROSE})
    assert unwrap_answer(json.dumps({"answer": PROSE})) == PROSE
    assert unwrap_answer(json.dumps(GOOD)) is None
    assert unwrap_answer(PROSE) is None


@pytest.mark.parametrize("shape", [Shape.ANY_CALL, Shape.ANSWER_OR_CALL])
def test_grammar_accepts_a_right_call_and_rejects_wrong_ones(shape: Shape) -> None:
    lark = _compiled(gbnf(CATALOG, shape))
    assert _accepts(lark, _tagged(GOOD))
    assert _accepts(
        lark, '<tool_call>\n{"name":"GetLiveContext","arguments":{}}\n</tool_call>'
    )
    for bad in (WRONG_NAME, MISSING, WRONG_TYPE):
        assert not _accepts(lark, _tagged(bad)), bad


def test_grammar_answer_or_call_accepts_prose_and_only_then() -> None:
    assert _accepts(_compiled(gbnf(CATALOG, Shape.ANSWER_OR_CALL)), PROSE)
    assert not _accepts(_compiled(gbnf(CATALOG, Shape.ANY_CALL)), PROSE)
    # Prose cannot open like markup: a half-made call is not an answer.
    assert not _accepts(_compiled(gbnf(CATALOG, Shape.ANSWER_OR_CALL)), "<tool_call>{")


def test_grammar_for_one_tool_refuses_the_others() -> None:
    lark = _compiled(gbnf(CATALOG, Shape.ONE_CALL, "HassSetPosition"))
    assert _accepts(lark, _tagged(GOOD))
    assert not _accepts(lark, _tagged({"name": "HassTurnOn", "arguments": {}}))


def test_grammar_covers_enums_arrays_optional_keys_and_any_value() -> None:
    catalog = Catalog.from_openai(
        [
            {
                "name": "media",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "mode": {"type": "string", "enum": ["play", "pause"]},
                        "ids": {"type": "array", "items": {"type": "integer"}},
                        "volume": {"type": ["number", "null"]},
                        "extra": {},
                    },
                },
            }
        ]
    )
    lark = _compiled(gbnf(catalog, Shape.ANY_CALL))

    def call(args: dict[str, Any]) -> str:
        return _tagged({"name": "media", "arguments": args})

    assert _accepts(lark, call({}))
    assert _accepts(lark, call({"ids": [1, 2], "volume": None}))
    assert _accepts(lark, call({"mode": "pause", "extra": {"a": [1, "x", True]}}))
    assert _accepts(lark, call({"volume": -0.5}))
    assert not _accepts(lark, call({"mode": "stop"}))
    assert not _accepts(lark, call({"ids": ["1"]}))


def test_a_broken_grammar_fails_to_compile() -> None:
    """The check above is real: llguidance refuses what llama.cpp would refuse."""
    broken = gbnf(CATALOG, Shape.ANY_CALL).replace("ws ::=", "whitespace ::=")
    with pytest.raises(ValueError):
        _compiled(broken)


def test_what_the_constraint_allows_is_what_the_parser_reads() -> None:
    hermes = get_dialect("hermes")
    tagged = hermes.parse(_tagged(GOOD), CATALOG)
    bare = hermes.parse(json.dumps(GOOD), CATALOG)
    for result in (tagged, bare):
        assert [(c.name, c.arguments) for c in result.calls] == [
            ("HassSetPosition", {"position": 30, "name": "blinds"})
        ]
        assert not result.content.strip()
    assert hermes.parse(PROSE, CATALOG).content.strip() == PROSE


def test_cached_per_catalog_fingerprint() -> None:
    same = Catalog.from_openai(json.loads(json.dumps(TOOLS)))
    assert fingerprint(same) == fingerprint(CATALOG)
    assert gbnf(same, Shape.ANY_CALL) is gbnf(CATALOG, Shape.ANY_CALL)
    assert json_schema(same, Shape.ANY_CALL) is json_schema(CATALOG, Shape.ANY_CALL)
    other = Catalog.from_openai(TOOLS[:3])
    assert fingerprint(other) != fingerprint(CATALOG)


def test_bad_requests_get_clear_errors() -> None:
    with pytest.raises(ConstraintError, match="at least one tool"):
        gbnf(Catalog(), Shape.ANY_CALL)
    with pytest.raises(ConstraintError, match="unknown tool 'Nope'"):
        json_schema(CATALOG, Shape.ONE_CALL, "Nope")
    with pytest.raises(ConstraintError, match="needs the tool's name"):
        gbnf(CATALOG, Shape.ONE_CALL)


def _framed(frame: str, call: dict[str, Any]) -> str:
    """A call as each dialect's own prompt tells the model to write it."""
    args = json.dumps(call["arguments"])
    body = json.dumps(call)
    return {
        "hermes": f"<tool_call>\n{body}\n</tool_call>",
        "qwen": f"<tool_call>\n{body}\n</tool_call>",
        "react": f"Thought: set it\nAction: {call['name']}\nAction Input: {args}",
        "llama3": json.dumps({"name": call["name"], "parameters": call["arguments"]}),
        "mistral": f"[TOOL_CALLS][{body}]",
        "xlam": f"[{body}]",
        "markdown_json": f"```json\n{body}\n```",
    }[frame]


ANSWERS = {"react": "Thought: I can answer now.\nFinal Answer: " + PROSE}


@pytest.mark.parametrize("frame", sorted(FRAMES))
def test_each_frame_allows_its_own_format_and_the_dialect_reads_it(frame: str) -> None:
    """A grammar imposes what the agent's prompt describes, not hermes for all."""
    lark = _compiled(gbnf(CATALOG, Shape.ANY_CALL, frame=frame))
    text = _framed(frame, GOOD)
    assert _accepts(lark, text)
    parsed = get_dialect(frame).parse(text, CATALOG)
    assert [(c.name, c.arguments) for c in parsed.calls] == [
        (GOOD["name"], GOOD["arguments"])
    ]
    assert not parsed.content.strip()
    for bad in (WRONG_NAME, MISSING, WRONG_TYPE):
        assert not _accepts(lark, _framed(frame, bad)), bad
    assert not _accepts(lark, PROSE)
    if FRAMES[frame] != FRAMES["hermes"]:
        assert not _accepts(lark, _tagged(GOOD))


@pytest.mark.parametrize("frame", sorted(FRAMES))
def test_each_frame_answer_or_call_takes_prose_but_no_half_call(frame: str) -> None:
    lark = _compiled(gbnf(CATALOG, Shape.ANSWER_OR_CALL, frame=frame))
    assert _accepts(lark, ANSWERS.get(frame, PROSE))
    assert _accepts(lark, _framed(frame, GOOD))
    half = _framed(frame, GOOD)[: len(_framed(frame, GOOD)) // 2]
    assert not _accepts(lark, half + " and then I stopped")


@pytest.mark.parametrize(
    ("prefix", "opened"),
    [
        ("<think>\nThe user wants the blinds at 30.\n</think>\n\n", False),
        ("<think></think>\n", False),
        # The chat template opened the block: only its closer is written.
        ("The user wants the blinds at 30.\n</think>\n\n", True),
    ],
)
def test_grammar_lets_a_thinking_model_reason_first(prefix: str, opened: bool) -> None:
    lark = _compiled(gbnf(CATALOG, Shape.ANY_CALL, opened_reasoning=opened))
    assert _accepts(lark, prefix + _tagged(GOOD))
    assert not _accepts(lark, prefix + PROSE)
    parsed = get_dialect("hermes").parse(prefix + _tagged(GOOD), CATALOG)
    assert [c.name for c in parsed.calls] == ["HassSetPosition"]
    assert not parsed.content.strip()


def test_a_model_whose_template_opens_no_reasoning_cannot_chat_as_reasoning() -> None:
    """Found on the real llama-server: a chatty model under a forcing grammar
    wrote its chat, closed it with ``</think>``, and the chat was spoken."""
    lark = _compiled(gbnf(CATALOG, Shape.ANY_CALL))
    assert not _accepts(lark, "Sure, I can do that.</think>" + _tagged(GOOD))


def test_unknown_frame_is_a_clear_error() -> None:
    with pytest.raises(ConstraintError, match="no grammar frame 'yaml'"):
        gbnf(CATALOG, Shape.ANY_CALL, frame="yaml")
