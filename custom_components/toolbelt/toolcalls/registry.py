"""Dialect registry, model-family presets and ``tool_format`` resolution.

Built-in dialects live one per file in ``dialects/`` and are listed in
``DIALECTS`` (name -> class); they are imported with this module, which the
platform imports when it loads, so a turn on Home Assistant's event loop never
imports one. A preset is an ordered dialect chain for a model family; naming a
dialect that does not exist is an error when the preset is registered or
resolved, never a silent skip.
"""

from __future__ import annotations

from collections.abc import Iterable
import re

from .catalog import Catalog
from .chain import ChainDialect
from .dialects.apertus import ApertusDialect
from .dialects.apriel import AprielDialect
from .dialects.base import Dialect
from .dialects.command_r import CommandRDialect
from .dialects.deepseek import DeepSeekDialect
from .dialects.dots import DotsDialect
from .dialects.functionary import FunctionaryDialect
from .dialects.gemma import GemmaDialect
from .dialects.gigachat import GigaChatDialect
from .dialects.glm import GlmDialect
from .dialects.gpt_oss import GptOssDialect
from .dialects.granite import GraniteDialect
from .dialects.hermes import HermesDialect
from .dialects.home_llm import HomeLlmDialect
from .dialects.hy import HyDialect
from .dialects.inkling import InklingDialect
from .dialects.internlm import InternLmDialect
from .dialects.k2_horizon import K2HorizonDialect
from .dialects.kimi_k2 import KimiK2Dialect
from .dialects.llama3 import Llama3Dialect
from .dialects.longcat import LongCatDialect
from .dialects.markdown_json import MarkdownJsonDialect
from .dialects.minicpm import MiniCpmDialect
from .dialects.minimax import MiniMaxDialect
from .dialects.mistral import MistralDialect
from .dialects.muse import MuseDialect
from .dialects.native import NativeDialect
from .dialects.nemotron import NemotronDialect
from .dialects.olmo3 import Olmo3Dialect
from .dialects.pangu import PanguDialect
from .dialects.phi4_functools import FunctoolsDialect
from .dialects.plamo import PlamoDialect
from .dialects.pythonic import PythonicDialect
from .dialects.qwen import QwenDialect
from .dialects.qwen3_coder_xml import Qwen3CoderXmlDialect
from .dialects.react import ReactDialect
from .dialects.seed_oss import SeedOssDialect
from .dialects.solar_open import SolarOpenDialect
from .dialects.xlam import XlamDialect
from .reading.openers import InlineOpener
from .text.streaming import DEFAULT_START_MARKERS, StreamDetector

__all__ = [
    "AUTO_ORDER",
    "DIALECTS",
    "PRESETS",
    "UnknownDialectError",
    "detector_for",
    "dialect_names",
    "get_dialect",
    "opens_reasoning_in_template",
    "preset_for_model",
    "register_dialect",
    "register_preset",
    "resolve_dialect",
]


class UnknownDialectError(ValueError):
    """A dialect or preset name that is not registered."""


# Every built-in dialect, imported with this module: nothing is imported later,
# on Home Assistant's event loop, when a turn first needs a dialect.
DIALECTS: dict[str, type[Dialect]] = {
    "native": NativeDialect,
    "react": ReactDialect,
    "hermes": HermesDialect,
    "qwen": QwenDialect,
    "qwen3_coder_xml": Qwen3CoderXmlDialect,
    "llama3": Llama3Dialect,
    "mistral": MistralDialect,
    "xlam": XlamDialect,
    "functools": FunctoolsDialect,
    "markdown_json": MarkdownJsonDialect,
    "home_llm": HomeLlmDialect,
    "pythonic": PythonicDialect,
    "granite": GraniteDialect,
    "gemma": GemmaDialect,
    "functionary": FunctionaryDialect,
    "deepseek": DeepSeekDialect,
    "gpt_oss": GptOssDialect,
    "command_r": CommandRDialect,
    "glm": GlmDialect,
    "kimi_k2": KimiK2Dialect,
    "minimax": MiniMaxDialect,
    "nemotron": NemotronDialect,
    "apertus": ApertusDialect,
    "seed_oss": SeedOssDialect,
    "olmo3": Olmo3Dialect,
    "minicpm": MiniCpmDialect,
    "apriel": AprielDialect,
    "longcat": LongCatDialect,
    "internlm": InternLmDialect,
    "gigachat": GigaChatDialect,
    "hy": HyDialect,
    "dots": DotsDialect,
    "solar_open": SolarOpenDialect,
    "pangu": PanguDialect,
    "plamo": PlamoDialect,
    "k2_horizon": K2HorizonDialect,
    "inkling": InklingDialect,
    "muse": MuseDialect,
}

# ``auto``: most specific markers first, marker-less and lenient forms last.
AUTO_ORDER: tuple[str, ...] = (
    "muse",
    "gpt_oss",
    "deepseek",
    "kimi_k2",
    "dots",
    "minimax",
    "hy",
    "apriel",
    "seed_oss",
    "olmo3",
    "longcat",
    "internlm",
    "gigachat",
    "solar_open",
    "pangu",
    "plamo",
    "k2_horizon",
    "inkling",
    "glm",
    "nemotron",
    "apertus",
    "command_r",
    "gemma",
    "qwen3_coder_xml",
    "granite",
    "mistral",
    "functools",
    "hermes",
    # From here on (``AUTO_LATER``): marker-less and lenient forms.
    "qwen",
    "llama3",
    "xlam",
    "home_llm",
    "markdown_json",
    "react",
    "pythonic",
    "minicpm",
    "functionary",
)

PRESETS: dict[str, tuple[str, ...]] = {
    "hermes": ("hermes",),
    "qwen": ("qwen", "hermes"),
    "qwen3_coder": ("qwen3_coder_xml", "qwen", "hermes"),
    "llama3": ("llama3", "pythonic"),
    "llama4": ("pythonic", "llama3"),
    "mistral": ("mistral",),
    "xlam": ("xlam", "hermes"),
    "granite": ("granite", "hermes"),
    "gemma": ("gemma",),
    "functionary": ("functionary",),
    "deepseek": ("deepseek",),
    "gpt_oss": ("gpt_oss",),
    "command_r": ("command_r",),
    "phi4": ("functools",),
    "firefunction": ("functools",),
    "glm": ("glm", "hermes"),
    "glm5": ("glm", "hermes"),
    "kimi": ("kimi_k2",),
    "lfm2": ("pythonic",),
    "minimax": ("minimax",),
    "nemotron": ("nemotron",),
    "apertus": ("apertus",),
    "seed_oss": ("seed_oss",),
    "olmo3": ("olmo3",),
    "minicpm": ("minicpm", "pythonic"),
    "apriel": ("apriel",),
    "hunyuan": ("hy", "apriel"),
    "jamba": ("apriel",),
    "longcat": ("longcat",),
    "internlm": ("internlm",),
    "gigachat": ("gigachat",),
    "dots": ("dots",),
    "solar_open": ("solar_open",),
    "step3": ("deepseek",),
    "step_audio": ("hermes",),
    "cwm": ("hermes",),
    "pangu": ("pangu",),
    "plamo": ("plamo",),
    "k2_horizon": ("k2_horizon",),
    "inkling": ("inkling",),
    "muse": ("muse",),
    "laguna": ("glm", "hermes"),
    "telechat": ("glm", "hermes"),
    "iquest": ("glm", "hermes"),
    "react": ("react",),
    "markdown_json": ("markdown_json",),
    "home_llm": ("home_llm", "markdown_json"),
    "native": ("native",),
}

# Model name (lower-cased) -> preset; the first match wins, so specific first.
_MODEL_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), preset)
    for pattern, preset in (
        (r"qwen[\d.]*-?coder|qwen3\.5|qwen3-next", "qwen3_coder"),
        (r"qwen|qwq", "qwen"),
        (r"hermes|nous", "hermes"),
        (r"xlam|hammer", "xlam"),
        (r"llama[-_ ]?4", "llama4"),
        (r"llama[-_ ]?3", "llama3"),
        (r"mistral|mixtral|ministral|devstral|magistral|codestral|pixtral", "mistral"),
        (r"granite", "granite"),
        (r"functiongemma|gemma", "gemma"),
        (r"functionary", "functionary"),
        (r"deepseek", "deepseek"),
        (r"gpt-?oss", "gpt_oss"),
        (r"command-?r|command-?a|c4ai|cohere", "command_r"),
        (r"phi-?4", "phi4"),
        (r"firefunction", "firefunction"),
        (r"glm-?5", "glm5"),
        (r"glm", "glm"),
        (r"kimi", "kimi"),
        (r"lfm2|liquid", "lfm2"),
        (r"minimax", "minimax"),
        (r"nemotron", "nemotron"),
        (r"apertus", "apertus"),
        (r"seed-?oss", "seed_oss"),
        (r"olmo", "olmo3"),
        (r"minicpm", "minicpm"),
        (r"apriel", "apriel"),
        (r"hunyuan|(?:^|[/_ -])hy-?\d", "hunyuan"),
        (r"jamba", "jamba"),
        (r"longcat", "longcat"),
        (r"intern-?(?:lm|s1)", "internlm"),
        (r"gigachat", "gigachat"),
        (r"dots[.\-_ ]?(?:llm|vlm)", "dots"),
        (r"solar-?open", "solar_open"),
        (r"step-?audio", "step_audio"),
        (r"step-?3(?![.\dp])", "step3"),
        (r"\bcwm\b", "cwm"),
        (r"pangu", "pangu"),
        (r"plamo", "plamo"),
        (r"k2[-_ ]?horizon", "k2_horizon"),
        (r"inkling", "inkling"),
        (r"muse|glimmer", "muse"),
        (r"laguna|poolside", "laguna"),
        (r"telechat|xing-?chen|xing-?4", "telechat"),
        (r"iquest", "iquest"),
        (r"home-?llm|home-3b|home-1b", "home_llm"),
    )
)

# Families whose chat template always writes the reasoning opener (``<think>``)
# into the prompt, so the reply holds only the closer: Qwen3 *-Thinking-2507,
# QwQ, DeepSeek-R1 and its distills, any other name with the word Thinking,
# OLMo 3 Think, HyperCLOVAX SEED Think 32B (not 14B, which ends its reasoning
# with a new assistant turn instead); a bare "Think" in other names is no
# sign (K2-Think, "qwen3:8b-think" tags), StepFun Step-3 and
# Step-3.5 (reasoning-only), MiniMax M2/M2.x (no switch in its template),
# Hunyuan Hy3 and HY 4 (``<think:opensource>``, unless asked for no reasoning);
# Apriel's prompt ends with "Here are my reasoning steps:" (1.6), or its reply
# opens with them (1.5). Hybrids whose users often switch thinking off stay out:
# the stream would hold their whole answer.
_TEMPLATE_THINKING = re.compile(
    r"deepseek[-_ ]?r1|r1[-_ ]distill|qwq|apriel"
    r"|(?<![a-z])(?<!no[-_ ])thinking(?![a-z])|olmo.*think"
    r"|hyperclovax[-_ ]seed[-_ ]think(?![-_ :]?14b)"
    r"|(?:^|[/_ :-])step-?3(?:\.5|p5)?(?![0-9])"
    r"|minimax[-_ ]?m2(?![0-9])"
    r"|(?:^|[/_ :-])hy-?[34](?![0-9])"
)

_classes: dict[str, type[Dialect]] = {}
_instances: dict[str, Dialect] = {}


def register_dialect(name: str, cls: type[Dialect]) -> None:
    """Make ``cls`` available as ``name`` (replaces a built-in of that name)."""
    if not name or not isinstance(cls, type) or not issubclass(cls, Dialect):
        raise TypeError("register_dialect needs a name and a Dialect subclass")
    _classes[name] = cls
    _instances.pop(name, None)
    _union_cache.clear()
    _chains.clear()


def get_dialect(name: str) -> Dialect:
    """The dialect registered as ``name``; raises ``UnknownDialectError``."""
    if name in _instances:
        return _instances[name]
    cls = _classes.get(name) or DIALECTS.get(name)
    if cls is None:
        raise UnknownDialectError(
            f"unknown tool-call dialect {name!r}; known: {', '.join(dialect_names())}"
        )
    instance = cls()
    _instances[name] = instance
    return instance


def dialect_names() -> tuple[str, ...]:
    """Names of every dialect that can be loaded, built-ins first."""
    extras = [n for n in _classes if n not in DIALECTS]
    return (*DIALECTS, *extras)


# ``auto``'s marker-less and lenient forms: bare JSON, fences, ReAct labels,
# Python calls. A chain looks for their triggers (the commonest words and
# signs: a newline, ``(``, ``Action``...) only when the members before them
# have not settled the reply (none read a call that leaves no other format's
# markup behind), so a plain reply in one of the marked formats never pays for
# them.
AUTO_LATER: tuple[str, ...] = AUTO_ORDER[AUTO_ORDER.index("qwen") :]

_chains: dict[tuple[tuple[str, ...], str], ChainDialect] = {}


def _chain(names: Iterable[str], label: str) -> ChainDialect:
    """The chain of these members, built once (a turn resolves its format each time)."""
    key = (tuple(dict.fromkeys(names)), label)
    chain = _chains.get(key)
    if chain is None:
        chain = ChainDialect(
            [get_dialect(n) for n in key[0]], name=label, later=AUTO_LATER
        )
        if len(_chains) < 256:
            _chains[key] = chain
    return chain


def register_preset(name: str, chain: Iterable[str]) -> None:
    """Add or replace a preset; every dialect in it must already be registered."""
    chain = tuple(chain)
    if not chain:
        raise ValueError(f"preset {name!r} is empty")
    for dialect in chain:
        get_dialect(dialect)  # raises UnknownDialectError
    PRESETS[name] = chain


def preset_name_for_model(model: str | None) -> str | None:
    """The preset a model name belongs to, or None when no family matches."""
    if not model:
        return None
    low = model.lower()
    for pattern, preset in _MODEL_RULES:
        if pattern.search(low):
            return preset
    return None


def preset_for_model(model: str | None) -> tuple[str, ...]:
    """The dialect chain for a model name; ``()`` when no family matches."""
    preset = preset_name_for_model(model)
    return PRESETS.get(preset, ()) if preset else ()


def auto_names() -> tuple[str, ...]:
    """The ``auto`` order, then dialects registered at run time (never ``native``)."""
    extras = (n for n in dialect_names() if n not in AUTO_ORDER and n != "native")
    return (*AUTO_ORDER, *extras)


def resolve_dialect(
    tool_format: str | None = "auto", model: str | None = None
) -> Dialect:
    """Turn a ``tool_format`` setting into a dialect.

    ``"auto"`` (or empty): a chain over every dialect, most specific markers
    first; with a known ``model`` its preset goes in front. A preset name gives
    that chain; a dialect name gives that dialect. Unknown names raise
    ``UnknownDialectError``, as does a preset naming a missing dialect.
    """
    fmt = (tool_format or "auto").strip().lower()
    if fmt == "auto":
        return _chain((*preset_for_model(model), *auto_names()), "auto")
    if fmt in DIALECTS or fmt in _classes:
        return get_dialect(fmt)
    if fmt in PRESETS:
        return _chain(PRESETS[fmt], fmt)
    raise UnknownDialectError(
        f"unknown tool_format {tool_format!r}; use 'auto', a preset "
        f"({', '.join(sorted(PRESETS))}) or a dialect ({', '.join(dialect_names())})"
    )


_Union = tuple[
    tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[InlineOpener, ...]
]
_union_cache: list[_Union] = []


def _union() -> _Union:
    """Markers, start markers, dropped words and inline openers of every
    registered dialect (cached)."""
    if not _union_cache:
        markers: dict[str, None] = {}
        starts: dict[str, None] = dict.fromkeys(DEFAULT_START_MARKERS)
        dropped: dict[str, None] = {}
        openers: dict[InlineOpener, None] = {}
        for name in dialect_names():
            dialect = get_dialect(name)
            markers.update(dict.fromkeys(dialect.markers))
            starts.update(dict.fromkeys(dialect.start_markers))
            dropped.update(dict.fromkeys(dialect.dropped))
            openers.update(dict.fromkeys(dialect.inline_openers))
        _union_cache.append(
            (tuple(markers), tuple(starts), tuple(dropped), tuple(openers))
        )
    return _union_cache[0]


def opens_reasoning_in_template(model: str | None) -> bool:
    """Whether the model's replies start inside a reasoning block (template-opened)."""
    return model is not None and _TEMPLATE_THINKING.search(model.lower()) is not None


def detector_for(
    dialect: Dialect,
    catalog: Catalog | None = None,
    *,
    start_in_reasoning: bool = False,
) -> StreamDetector:
    """A detector holding on ``dialect``'s markers plus every registered one.

    Every registered dialect counts (markers, start markers, inline openers),
    because the loop may fall back to another format. With a ``catalog``, a
    reply or line that opens with a tool's name (exact, or without its
    ``intent__`` namespace, as the catalog resolves it) holds too: formats like
    Functionary's write a call as a bare name.
    """
    markers, starts, dropped, openers = _union()
    names: tuple[str, ...] = ()
    if catalog is not None:
        names = (
            *catalog.names,
            *(n.rsplit("__", 1)[1] for n in catalog.names if "__" in n),
        )
    return StreamDetector(
        (*dialect.markers, *markers),
        start_markers=(*dialect.start_markers, *starts),
        names=tuple(dict.fromkeys(names)),
        dropped=(*dialect.dropped, *dropped),
        start_in_reasoning=start_in_reasoning,
        thought_first=dialect.thought_first,
        inline_openers=(*dialect.inline_openers, *openers),
    )


# The default chain and its trigger index are built when the integration
# loads, not during a turn on Home Assistant's event loop.
resolve_dialect("auto")
