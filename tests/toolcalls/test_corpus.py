"""Every dev-corpus case through ``auto`` and through its family's preset.

BFCL-style: exact names, arguments compared by value (50 == 50.0, "10" != 10),
ids where the wire format carries them, and the user-visible content after
collapsing whitespace. Families whose dialect file does not exist yet are
xfail, decided from the registry, so they count as soon as the file lands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custom_components.toolbelt.toolcalls import (
    Catalog,
    ParseResult,
    UnknownDialectError,
    resolve_dialect,
)
from custom_components.toolbelt.toolcalls.registry import PRESETS, dialect_names

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"
CASES = [
    json.loads(line)
    for line in (CORPUS / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
CATALOG = Catalog.from_openai(json.loads((CORPUS / "tools.json").read_text()))

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


def _missing(family: str) -> list[str]:
    preset = FAMILY_PRESET.get(family)
    if preset is None:
        return []
    present = set(dialect_names())
    return [name for name in PRESETS[preset] if name not in present]


def _num(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [_num(v) for v in value]
    if isinstance(value, dict):
        return {k: _num(v) for k, v in value.items()}
    return value


def _check(case: dict[str, Any], result: ParseResult) -> None:
    got = [(c.name, _num(c.arguments)) for c in result.calls]
    want = [(e["name"], _num(e["arguments"])) for e in case["expected"]]
    assert got == want, f"{case['id']}: calls differ"
    for expected, call in zip(case["expected"], result.calls, strict=True):
        if "id" in expected:
            assert call.id == expected["id"], f"{case['id']}: id not kept verbatim"
        assert call.id, "every call needs an id"
    assert " ".join(result.content.split()) == " ".join(
        case["expected_content"].split()
    )


def _params(preset_only: bool) -> list[Any]:
    params = []
    for case in CASES:
        if preset_only and case["family"] not in FAMILY_PRESET:
            continue
        missing = _missing(case["family"])
        marks = (
            [
                pytest.mark.xfail(
                    reason=f"dialect not written yet: {missing}", strict=False
                )
            ]
            if missing
            else []
        )
        params.append(pytest.param(case, id=case["id"], marks=marks))
    return params


@pytest.mark.parametrize("case", _params(preset_only=False))
def test_auto_chain(case: dict[str, Any]) -> None:
    _check(case, resolve_dialect("auto").parse(case["raw"], CATALOG))


@pytest.mark.parametrize("case", _params(preset_only=True))
def test_family_preset(case: dict[str, Any]) -> None:
    try:
        dialect = resolve_dialect(FAMILY_PRESET[case["family"]])
    except UnknownDialectError:
        pytest.xfail("preset names a dialect that is not written yet")
    _check(case, dialect.parse(case["raw"], CATALOG))


def test_corpus_is_complete() -> None:
    """Guard against silently testing nothing (e.g. an emptied fixture)."""
    assert len(CASES) >= 70
    assert len({c["id"] for c in CASES}) == len(CASES)
