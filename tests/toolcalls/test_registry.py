"""Registry, presets and tool_format resolution."""

from __future__ import annotations

from typing import ClassVar

import pytest

from custom_components.toolbelt.toolcalls import (
    Catalog,
    ChainDialect,
    Dialect,
    ParseResult,
    UnknownDialectError,
    get_dialect,
    preset_for_model,
    register_dialect,
    register_preset,
    registry,
    resolve_dialect,
)
from custom_components.toolbelt.toolcalls.registry import (
    AUTO_ORDER,
    DIALECTS,
    PRESETS,
    detector_for,
    dialect_names,
)


def test_every_dialect_is_registered_under_its_own_name() -> None:
    assert dialect_names() == tuple(DIALECTS)
    for name in DIALECTS:
        assert get_dialect(name).name == name


def test_unknown_dialect_raises() -> None:
    with pytest.raises(UnknownDialectError):
        get_dialect("klingon")
    with pytest.raises(UnknownDialectError):
        resolve_dialect("klingon")


def test_unknown_name_in_a_preset_raises_at_registration() -> None:
    with pytest.raises(UnknownDialectError):
        register_preset("broken", ("hermes", "no_such_dialect"))
    assert "broken" not in PRESETS


def test_every_preset_resolves_and_auto_tries_every_text_dialect() -> None:
    """A name that is a dialect and a preset (``qwen``) means the dialect."""
    for name, chain in PRESETS.items():
        resolved = resolve_dialect(name)
        if name in DIALECTS:
            assert resolved is get_dialect(name)
        else:
            assert [d.name for d in resolved.dialects] == list(chain), name
    assert sorted(AUTO_ORDER) == sorted(set(DIALECTS) - {"native"})


@pytest.mark.parametrize(
    ("model", "chain"),
    [
        ("Qwen2.5-7B-Instruct", ("qwen", "hermes")),
        ("qwen3:8b", ("qwen", "hermes")),
        ("Qwen3-Coder-30B-A3B", ("qwen3_coder_xml", "qwen", "hermes")),
        ("llama3.2:3b", ("llama3", "pythonic")),
        ("meta-llama/Llama-3.1-8B-Instruct", ("llama3", "pythonic")),
        ("mistral-nemo", ("mistral",)),
        ("Ministral-8B", ("mistral",)),
        ("devstral-small", ("mistral",)),
        ("granite3.3:8b", ("granite", "hermes")),
        ("gemma3:4b", ("gemma",)),
        ("functionary-small-v3.2", ("functionary",)),
        ("deepseek-r1:7b", ("deepseek",)),
        ("gpt-oss:20b", ("gpt_oss",)),
        ("command-r7b", ("command_r",)),
        ("phi-4-mini", ("functools",)),
        ("xLAM-2-8b-fc-r", ("xlam", "hermes")),
        ("Hammer2.1-7b", ("xlam", "hermes")),
        ("glm-4.5-air", ("glm", "hermes")),
        ("GLM-5.3-Flash", ("glm", "hermes")),
        ("Kimi-K2-Instruct", ("kimi_k2",)),
        ("LFM2-1.2B", ("pythonic",)),
        ("Hermes-3-Llama-3.1-8B", ("hermes",)),
        ("allenai/Olmo-3-7B-Instruct", ("olmo3",)),
        ("openbmb/MiniCPM4-8B", ("minicpm", "pythonic")),
        ("ServiceNow-AI/Apriel-1.6-15b-Thinker", ("apriel",)),
        ("tencent/Hunyuan-7B-Instruct", ("hy", "apriel")),
        ("tencent/Hy3-preview", ("hy", "apriel")),
        ("rednote-hilab/dots.llm1.inst", ("dots",)),
        ("ai21labs/AI21-Jamba-Reasoning-3B", ("apriel",)),
        ("meituan-longcat/LongCat-Flash-Chat", ("longcat",)),
        ("internlm3-8b-instruct", ("internlm",)),
        ("intern-s1-mini", ("internlm",)),
        ("ai-sage/GigaChat3-10B-A1.8B", ("gigachat",)),
        ("openPangu-Embedded-7B", ("pangu",)),
        ("plamo-3-8b", ("plamo",)),
        ("k2-horizon-instruct", ("k2_horizon",)),
        ("thinkingmachines/Inkling-NVFP4", ("inkling",)),
        ("muse-glimmer-32b", ("muse",)),
        ("Glimmer-8B", ("muse",)),
        ("poolside/Laguna-XS.2", ("glm", "hermes")),
        ("Tele-AI/TeleChat4-36B", ("glm", "hermes")),
        ("IQuestLab/IQuest-Coder-V2-40B", ("glm", "hermes")),
        ("phi4-mini:3.8b", ("functools",)),
        ("totally-unknown-model", ()),
        (None, ()),
    ],
)
def test_presets_by_model(model: str | None, chain: tuple[str, ...]) -> None:
    assert preset_for_model(model) == chain


def test_auto_tries_specific_markers_first_and_model_preset_in_front() -> None:
    auto = resolve_dialect("auto")
    assert isinstance(auto, ChainDialect)
    order = [d.name for d in auto.dialects]
    assert order.index("mistral") < order.index("hermes") < order.index("react")
    assert "native" not in order
    with_model = resolve_dialect("auto", "mistral-nemo")
    assert with_model.dialects[0].name == "mistral"
    assert set(AUTO_ORDER) >= set(order)


def test_explicit_dialect_and_preset() -> None:
    assert resolve_dialect("react").name == "react"
    assert [d.name for d in resolve_dialect("qwen3_coder").dialects] == [
        "qwen3_coder_xml",
        "qwen",
        "hermes",
    ]


def test_chain_takes_prompt_stops_and_results_from_first_text_dialect() -> None:
    chain = ChainDialect(
        [get_dialect("native"), get_dialect("react"), get_dialect("hermes")]
    )
    assert chain.stop_sequences() == get_dialect("react").stop_sequences()
    assert "Action Input" in chain.system_prompt(Catalog())


def test_register_custom_dialect(monkeypatch: pytest.MonkeyPatch) -> None:
    # Keep the registration local to this test.
    monkeypatch.setattr(registry, "_classes", dict(registry._classes))
    monkeypatch.setattr(registry, "_instances", dict(registry._instances))
    monkeypatch.setattr(registry, "_union_cache", [])

    class Shout(Dialect):
        name: ClassVar[str] = "shout_test"
        markers: ClassVar[tuple[str, ...]] = ("!!CALL ",)

        def parse(self, text: str, catalog: Catalog) -> ParseResult:
            return ParseResult(content=text.lower())

    register_dialect("shout_test", Shout)
    assert resolve_dialect("shout_test").parse("HI", Catalog()).content == "hi"
    assert "!!CALL " in detector_for(get_dialect("hermes"))._markers
    with pytest.raises(TypeError):
        register_dialect("bad", object)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model", "opened"),
    [
        ("allenai/Olmo-3-7B-Think", True),
        ("allenai/Olmo-3-7B-Instruct", False),
        ("ServiceNow-AI/Apriel-1.6-15b-Thinker", True),
        ("apriel-1.5-15b-thinker", True),
        ("qwen3:8b", False),
        ("tencent/Hy3-preview", True),
        ("hy3:latest", True),
        ("tencent/HY-4", True),
        ("tencent/Hunyuan-A13B-Instruct", False),
        ("why3", False),
        ("naver-hyperclovax/HyperCLOVAX-SEED-Think-32B", True),
        ("hyperclovax-seed-think-32b:q4_k_m", True),
        # Its reasoning ends with a new assistant turn, not a closer.
        ("naver-hyperclovax/HyperCLOVAX-SEED-Think-14B", False),
        ("hyperclovax-seed-think:14b", False),
        ("hyperclovax_seed_think_14b", False),
        ("LLM360/K2-Think", False),
        ("qwen3:8b-think", False),
        ("Qwen/Qwen3-4B-Thinking-2507", True),
        ("moonshotai/Kimi-K2-Thinking", True),
        ("qwen3-8b-no-think", False),
        ("qwen3:8b-nothink", False),
        ("deepthinker-7b", False),
        ("stepfun-ai/step3", True),
        ("stepfun-ai/Step-3.5-Flash", True),
        ("step3p5-flash-gguf", True),
        ("stepfun-ai/Step-Audio-2-mini", False),
        ("step-30b", False),
        ("MiniMaxAI/MiniMax-M2", True),
        ("MiniMaxAI/MiniMax-M2.5", True),
        ("minimax-m2.1:q4", True),
        # Hybrids users switch off: the stream would hold the whole answer.
        ("MiniMaxAI/MiniMax-M3", False),
        ("Qwen/Qwen3.6-35B-A3B", False),
        ("zai-org/GLM-4.7", False),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", False),
        ("ByteDance-Seed/Seed-OSS-36B-Instruct", False),
        ("moonshotai/Kimi-K2.5", False),
    ],
)
def test_template_opened_reasoning_by_model(model: str, opened: bool) -> None:
    """Replies of models whose template always opens the reasoning (OLMo 3
    Think, HyperCLOVAX SEED Think 32B, Step-3/3.5, MiniMax M2, Apriel, Hunyuan
    Hy3/HY 4, ...) start inside it."""
    assert registry.opens_reasoning_in_template(model) is opened
