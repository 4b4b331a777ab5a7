"""The server kinds a user can pick, with defaults and per-server quirks as data.

Every difference between servers that the client must respect lives in this table,
so no other module branches on the server kind: a quirk is a trait here and the
code that honours it (the backend reads ``OpenAICompatBackend.kind``, the loop
``LoopSettings.server``, the agent check the backend's kind). How people name a
kind is a translation (strings.json): the picker's label under
``selector.server_kind``, the kind in a sentence under ``server_name_<key>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

# The openai SDK insists on some key; local servers ignore it (llama.cpp's docs use this).
PLACEHOLDER_API_KEY = "sk-no-key-required"


@dataclass(frozen=True, slots=True)
class ServerKind:
    """What we know about one kind of OpenAI-compatible server."""

    key: str
    short: str
    """The kind in an entry's title: "llama.cpp on 192.168.1.20". A title is
    stored once, as typed or suggested: HA does not translate it."""
    default_base_url: str
    # The defaults below are what most servers do; each kind states only how it
    # differs.
    api_key_required: bool = False
    # A service at one address (``default_base_url``): an entry there is titled
    # by the kind alone ("OpenAI"), not "OpenAI on api.openai.com".
    hosted: bool = False
    # Accepts stream_options={"include_usage": True} (token usage in the last chunk).
    stream_usage: bool = True
    # Delta/message fields that carry reasoning, preferred first. Only the first
    # non-empty one is read per delta: some servers send the same text under both.
    reasoning_fields: tuple[str, ...] = ("reasoning", "reasoning_content")
    # Renders `tool`-role messages into the prompt, so text-dialect results can go
    # back in that role; if False the loop sends results as a user message instead.
    tool_role: bool = True
    # Request field for the output token limit.
    max_tokens_field: str = "max_tokens"
    # Decoding constraints it may take, in the order the agent check tries them:
    # "tool_choice" (the OpenAI field), "grammar" (llama.cpp GBNF) and
    # "json_schema" (response_format). The check keeps only what is honoured.
    constraints: tuple[str, ...] = ("tool_choice", "json_schema")
    # tool_choice may name one tool; if not, "required" goes with that tool alone.
    named_tool_choice: bool = True
    # Words of the server's own errors that mean its tool-call parser failed on
    # the model's reply (which is then lost), and the request fields that ask
    # for the raw reply instead, the tools still in the prompt (so the prompt
    # cache still holds): Toolbelt then reads the call itself.
    tool_parse_errors: tuple[str, ...] = ()
    raw_reply: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # Returns token log-probabilities (``logprobs``/``top_logprobs``), which an
    # AI Task's evaluation reads; an AI task on a kind without them does not
    # offer evaluation. Whether one server and model really return them is
    # learned on the first evaluation (``AgentState.logprobs``).
    logprobs: bool = True
    # The warm-up (warmup.py): whether sending an agent's fixed prompt ahead of
    # its first turn pays off. A local server keeps the start of a prompt it
    # processed and skips it next time; OpenAI bills the warm-up and keeps its
    # cache for minutes only.
    warm_up: bool = True
    # How long, in seconds, the server keeps an idle model loaded unless told
    # otherwise (its cache goes with it); None: until it stops.
    idle_unload: float | None = None
    # The server's own request (on its root, outside /v1) that sets how long
    # the model stays loaded after it: ``{"model": …, "keep_alive": seconds}``.
    keep_alive_path: str | None = None
    # Where the server reports the context size a request may fill, tried in
    # order (backend/context_size.py reads each).
    context_sources: tuple[str, ...] = ()
    # What to change on the server for a larger context, said on the agent
    # check's form when the agent's prompt does not fit.
    context_hint: str = "give the model a larger context on the server"


# reasoning_content first: these servers' own field name.
_CONTENT_FIRST = ("reasoning_content", "reasoning")

OPENAI = ServerKind(
    key="openai",
    short="OpenAI",
    default_base_url="https://api.openai.com/v1",
    api_key_required=True,
    hosted=True,
    max_tokens_field="max_completion_tokens",
    constraints=("tool_choice",),
    warm_up=False,
)
OLLAMA = ServerKind(
    key="ollama",
    short="Ollama",
    default_base_url="http://localhost:11434/v1",
    # Ollama maps response_format to its own `format`; it returns logprobs
    # from version 0.12.11.
    # An idle model is unloaded after OLLAMA_KEEP_ALIVE (5 minutes by
    # default), its cache with it. The OpenAI endpoint has no keep_alive
    # field and each request through it sets the server's default again, so
    # the agent's choice goes through Ollama's own API after each request:
    # /api/generate without a prompt only loads the model and sets it.
    idle_unload=300.0,
    keep_alive_path="/api/generate",
    # /api/ps: the context of the loaded model (its num_ctx, which a
    # request through the OpenAI endpoint cannot set); /api/show: num_ctx
    # from the model's Modelfile, when the model is not loaded.
    context_sources=("ollama_ps", "ollama_show"),
    context_hint=(
        "give the model a larger context on the Ollama server"
        " (OLLAMA_CONTEXT_LENGTH=8192, or PARAMETER num_ctx 8192 in a Modelfile;"
        " Ollama's default is 4096 on GPUs under 24 GB)"
    ),
)
LLAMACPP = ServerKind(
    key="llamacpp",
    short="llama.cpp",
    default_base_url="http://localhost:8080/v1",
    reasoning_fields=_CONTENT_FIRST,
    constraints=("tool_choice", "grammar", "json_schema"),
    # llama-server reads a named tool_choice object as "auto".
    named_tool_choice=False,
    # With tools, llama-server parses the reply itself and answers 500 when its
    # parser fails: its lazy grammar rejects markup it cannot read ("Unexpected
    # empty grammar stack after accepting piece"), or the final parse does.
    # tool_choice "none" renders the same prompt but returns the text as it is.
    tool_parse_errors=(
        "Unexpected empty grammar stack",
        "The model produced output that does not match the expected",
    ),
    raw_reply=MappingProxyType({"tool_choice": "none"}),
    # /v1/models: meta.n_ctx, the context of one slot (-c divided among
    # --parallel slots); /props: default_generation_settings.n_ctx, the same
    # from older builds.
    context_sources=("llamacpp_models", "llamacpp_props"),
    context_hint=(
        "start llama-server with a larger context (-c 8192; with --parallel N"
        " each slot gets 1/N of it)"
    ),
)
VLLM = ServerKind(
    key="vllm",
    short="vLLM",
    default_base_url="http://localhost:8000/v1",
    # vLLM renamed reasoning_content to reasoning (late 2025) and sent both for a
    # while: the default order prefers the new name.
    # Its prefix cache (on by default since V1) keeps the warm prefix.
    context_sources=("vllm_models",),
    context_hint="start vLLM with a larger --max-model-len",
)
LMSTUDIO = ServerKind(
    key="lmstudio",
    short="LM Studio",
    default_base_url="http://localhost:1234/v1",
    stream_usage=False,
    reasoning_fields=_CONTENT_FIRST,
    # Accepts the logprobs field and returns none.
    logprobs=False,
)
OTHER = ServerKind(
    key="other",
    short="Model server",
    default_base_url="http://localhost:8000/v1",
    # Unknown servers may reject fields they do not know: send only the basics.
    stream_usage=False,
    reasoning_fields=_CONTENT_FIRST,
    tool_role=False,
)

SERVER_KINDS: dict[str, ServerKind] = {
    kind.key: kind for kind in (OPENAI, OLLAMA, LLAMACPP, VLLM, LMSTUDIO, OTHER)
}


def is_tool_parse_error(kind: ServerKind, message: str) -> bool:
    """True when the server's message says its own tool-call parser failed."""
    return any(words in message for words in kind.tool_parse_errors)


def get_server_kind(key: str) -> ServerKind:
    """The kind for a stored key; an unknown key (e.g. removed later) acts as OTHER."""
    return SERVER_KINDS.get(key, OTHER)
