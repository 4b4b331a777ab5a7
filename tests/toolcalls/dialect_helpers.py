"""Helpers for the per-dialect tests: the corpus catalog, parsing, streaming.

Every dialect test parses with the catalog of ``tests/fixtures/corpus`` (the
smart-home tools the corpus cases assume), both through the dialect itself and
through the public ``auto`` chain, so marker ordering is exercised too.
"""

from __future__ import annotations

from functools import cache
import json
from pathlib import Path
import re
from typing import Any

from custom_components.toolbelt.toolcalls.catalog import Catalog
from custom_components.toolbelt.toolcalls.model import ParseResult
from custom_components.toolbelt.toolcalls.registry import (
    detector_for,
    get_dialect,
    resolve_dialect,
)
from custom_components.toolbelt.tools.definitions import ALIASES

CORPUS = Path(__file__).parent.parent / "fixtures" / "corpus"


@cache
def catalog() -> Catalog:
    """The corpus tool catalog (the allowlist and the schemas), with the other
    names a Toolbelt agent's parser takes for its tools and HA's."""
    tools = json.loads((CORPUS / "tools.json").read_text())
    return Catalog.from_openai(tools, ALIASES)


def corpus_cases(family: str | None = None) -> list[dict[str, Any]]:
    """Dev-corpus cases (of one family), for ``pytest.mark.parametrize``."""
    with (CORPUS / "dev.jsonl").open(encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle if line.strip()]
    return [case for case in cases if family in (None, case["family"])]


def engine_cases(name: str = "engine_misses.jsonl") -> list[dict[str, Any]]:
    """Cases ported from the engines' test suites (same schema as the corpus).

    ``engine_misses.jsonl`` holds issue 9's misses, ``engine_families.jsonl``
    the 2024-2026 families of issue 23.
    """
    path = CORPUS.parent / name
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def family_cases() -> list[dict[str, Any]]:
    """Issue 23's cases: the 2024-2026 model families."""
    return engine_cases("engine_families.jsonl")


def parse(dialect: str, text: str) -> ParseResult:
    """Parse with one dialect."""
    return get_dialect(dialect).parse(text, catalog())


def parse_auto(text: str) -> ParseResult:
    """Parse with the default ``auto`` chain."""
    return resolve_dialect("auto").parse(text, catalog())


def by_value(value: Any) -> Any:
    """Numbers compare by value (50 == 50.0); strings never equal numbers."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [by_value(v) for v in value]
    if isinstance(value, dict):
        return {k: by_value(v) for k, v in value.items()}
    return value


def calls(result: ParseResult) -> list[tuple[str, Any]]:
    """``[(name, arguments)]`` with numbers normalised, for comparisons."""
    return [(call.name, by_value(call.arguments)) for call in result.calls]


def expect(*pairs: tuple[str, dict[str, Any]]) -> list[tuple[str, Any]]:
    """The same normalisation for expected calls."""
    return [(name, by_value(args)) for name, args in pairs]


def ws(text: str) -> str:
    """Collapse whitespace runs (the corpus content comparison)."""
    return re.sub(r"\s+", " ", text).strip()


def check_corpus_case(dialect: str, case: dict[str, Any]) -> None:
    """A corpus case parses to its expected calls, ids and content, alone and in auto."""
    expected = [(c["name"], by_value(c["arguments"])) for c in case["expected"]]
    for result in (parse(dialect, case["raw"]), parse_auto(case["raw"])):
        assert calls(result) == expected, case["id"]
        for want, got in zip(case["expected"], result.calls, strict=True):
            if "id" in want:
                assert got.id == want["id"], case["id"]
        assert ws(result.content) == ws(case["expected_content"]), case["id"]


def stream(dialect: str, text: str, *, size: int = 1) -> tuple[str, bool]:
    """Feed ``text`` in chunks of ``size`` to the dialect's detector.

    Returns what it released as safe to show and whether it ended up holding.
    """
    detector = detector_for(get_dialect(dialect), catalog())
    released = []
    for index in range(0, len(text), size):
        released.append(detector.feed(text[index : index + size]))
    holding = detector.holding
    released.append(detector.finish())
    return "".join(released), holding
