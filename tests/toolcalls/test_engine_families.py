"""Issue 23's model families of 2024-2026, as their engines' tests write them.

Same schema as the dev corpus (``tests/fixtures/engine_families.jsonl``);
every case goes through ``auto`` and through its family's preset, and the
cases cover every family the issue names.
"""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.toolbelt.toolcalls import resolve_dialect

from .dialect_helpers import family_cases
from .test_corpus import CATALOG, _check

CASES = family_cases()

# Fixture family -> our preset for that model family.
FAMILY_PRESET = {
    "olmo3": "olmo3",
    "minicpm": "minicpm",
    "gemma": "gemma",
    "apriel": "apriel",
    "hunyuan": "hunyuan",
    "jamba": "jamba",
    "functools": "phi4",
    "longcat": "longcat",
    "command_r": "command_r",
    "glm": "glm",
    "internlm": "internlm",
    "gigachat": "gigachat",
    "minimax": "minimax",
    "dots": "dots",
    "step_audio": "step_audio",
    "step3": "step3",
    "solar_open": "solar_open",
    "cwm": "cwm",
    "pangu": "pangu",
    "plamo": "plamo",
    "k2_horizon": "k2_horizon",
    "inkling": "inkling",
    "muse": "muse",
    "kimi": "kimi",
    "llm_jp_4_1": "gpt_oss",
    "gpt_oss_harmony": "gpt_oss",
    # Families read by an existing format (an audit's cases, issue 23).
    "apertus": "apertus",
    "berrylm": "qwen3_coder_xml",
    "cogito": "auto",
    "cohere2moe": "auto",
    "cohere_command4": "auto",
    "cohere_command_a": "auto",
    "deepseek_v32": "deepseek",
    "deepseek_v3_1": "deepseek",
    "deepseek_v4": "deepseek",
    "deepseek_v4_1": "deepseek",
    "ernie45": "auto",
    "functionary_v3_2": "functionary",
    "functiongemma": "gemma",
    "gemma4": "gemma",
    "glm47": "glm",
    "glm4_6": "glm",
    "glm5_3_flash": "glm5",
    "granite4": "hermes",
    "granite_20b_fc": "granite",
    "hy_v4": "hy",
    "hyperclovax_seed_think": "auto",
    "hyperclovax_seed_think_14b": "hermes",
    "iquest_coder": "qwen3_coder_xml",
    "k2_v3": "k2_horizon",
    "kimi_k2": "kimi_k2",
    "laguna": "laguna",
    "lfm2": "auto",
    "ling3": "glm",
    "llama4_pythonic": "pythonic",
    "mimo_v2_flash": "qwen3_coder_xml",
    "minicpm5": "minicpm",
    "minimax_m2": "minimax",
    "ministral": "auto",
    "multi_format": "auto",
    "nemotron_3_nano": "auto",
    "nemotron_json": "nemotron",
    "nemotron_nano_v2": "nemotron",
    "openpangu_v2": "pangu",
    "poolside_v1": "glm",
    "pythonic": "pythonic",
    "qwen25_coder": "hermes",
    "qwen3_5": "auto",
    "qwen3_6": "qwen3_coder_xml",
    "qwen3_coder": "qwen3_coder_xml",
    "rwkv": "hermes",
    "seed_oss": "seed_oss",
    "spark2_5": "glm",
    "spark3": "glm",
    "step3p5": "qwen3_coder_xml",
    "step3v": "deepseek",
    "telechat4": "telechat",
    "tng_r1t2": "hermes",
    "trinity": "hermes",
    "xingchen4": "telechat",
    "xlam": "auto",
    "xing4_0": "telechat",
    "iquest_q1": "iquest",
    "iquest_coder_v2": "iquest",
}


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


def test_every_family_of_the_issue_has_cases_with_a_source() -> None:
    """Guard against silently testing nothing, or a case with no provenance."""
    assert len({c["id"] for c in CASES}) == len(CASES)
    assert all(c["source"].strip() for c in CASES)
    families = {c["family"] for c in CASES}
    assert set(FAMILY_PRESET) | {"negative"} == families
    prefixes = {c["id"].rsplit("-", 1)[0] for c in CASES}
    assert {
        "olmo3",
        "minicpm",
        "gemma4",
        "apriel",
        "phi4",
        "longcat",
        "cmda",
    } <= prefixes
    assert {
        "glm47",
        "hunyuan",
        "jamba",
        "internlm",
        "gigachat",
        "gigachat35",
        "kimik3",
        "minimaxm3",
        "fence-example",
        "dots",
    } <= prefixes
    assert {"stepaudio2", "step3", "solaropen2", "cwm"} <= prefixes
    assert {"pangu", "openpangu2", "plamo3"} <= prefixes
    assert {"k2horizon", "inkling"} <= prefixes
    assert {"k2horizon"} <= prefixes
    assert {"muse"} <= prefixes
    assert {"laguna", "telechat4", "xingchen4", "xing40"} <= prefixes
    assert {"iquestq1", "iquest2", "glm53flash"} <= prefixes
