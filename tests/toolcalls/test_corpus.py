"""Every dev-corpus case through ``auto`` and through its family's preset.

BFCL-style: exact names, arguments compared by value (50 == 50.0, "10" != 10),
ids where the wire format carries them, and the user-visible content after
collapsing whitespace.
"""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.toolbelt.toolcalls import ParseResult, resolve_dialect
from tests.toolcalls.dialect_helpers import (
    by_value,
    calls,
    catalog,
    corpus_cases,
    ws,
)

CASES = corpus_cases()
CATALOG = catalog()

# Corpus family -> our preset for that model family.
FAMILY_PRESET = {
    "hermes": "hermes",
    "qwen": "qwen",
    "qwen3_coder_xml": "qwen3_coder",
    "llama3_json": "llama3",
    "pythonic": "llama4",
    "mistral": "mistral",
    "xlam": "xlam",
    "granite": "granite",
    "gemma": "gemma",
    "functionary": "functionary",
    "deepseek": "deepseek",
    "gpt_oss": "gpt_oss",
    "command_r": "command_r",
    "functools": "phi4",
    "react": "react",
    "tool_header": "react",
    "markdown_json": "markdown_json",
    "home_llm": "home_llm",
    "glm": "glm",
    "kimi_k2": "kimi",
    "minimax": "minimax",
    "nemotron": "nemotron",
    "apertus": "apertus",
    "seed_oss": "seed_oss",
}


def _check(case: dict[str, Any], result: ParseResult) -> None:
    got = calls(result)
    want = [(e["name"], by_value(e["arguments"])) for e in case["expected"]]
    assert got == want, f"{case['id']}: calls differ"
    for expected, call in zip(case["expected"], result.calls, strict=True):
        if "id" in expected:
            assert call.id == expected["id"], f"{case['id']}: id not kept verbatim"
        assert call.id, "every call needs an id"
    assert ws(result.content) == ws(case["expected_content"])


def _params(preset_only: bool) -> list[Any]:
    return [
        pytest.param(case, id=case["id"])
        for case in CASES
        if not preset_only or case["family"] in FAMILY_PRESET
    ]


@pytest.mark.parametrize("case", _params(preset_only=False))
def test_auto_chain(case: dict[str, Any]) -> None:
    _check(case, resolve_dialect("auto").parse(case["raw"], CATALOG))


@pytest.mark.parametrize("case", _params(preset_only=True))
def test_family_preset(case: dict[str, Any]) -> None:
    dialect = resolve_dialect(FAMILY_PRESET[case["family"]])
    _check(case, dialect.parse(case["raw"], CATALOG))


def test_corpus_is_complete() -> None:
    """Guard against silently testing nothing (e.g. an emptied fixture)."""
    assert len(CASES) >= 70
    assert len({c["id"] for c in CASES}) == len(CASES)
