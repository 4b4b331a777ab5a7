"""Server-kind table and error wording."""

from __future__ import annotations

from custom_components.toolbelt.backend.errors import (
    BackendBadRequestError,
    BackendServerError,
    BackendTimeoutError,
)
from custom_components.toolbelt.backend.servers import (
    OTHER,
    SERVER_KINDS,
    get_server_kind,
)


def test_kinds_have_their_usual_local_addresses() -> None:
    assert {
        k: (v.default_base_url, v.api_key_required) for k, v in SERVER_KINDS.items()
    } == {
        "openai": ("https://api.openai.com/v1", True),
        "ollama": ("http://localhost:11434/v1", False),
        "llamacpp": ("http://localhost:8080/v1", False),
        "vllm": ("http://localhost:8000/v1", False),
        "lmstudio": ("http://localhost:1234/v1", False),
        "other": ("http://localhost:8000/v1", False),
    }
    assert len({kind.name for kind in SERVER_KINDS.values()}) == len(SERVER_KINDS)


def test_unknown_kind_falls_back_to_other() -> None:
    assert get_server_kind("removed-kind") is OTHER


def test_error_text_names_the_server() -> None:
    assert str(BackendTimeoutError("Ollama")) == "Ollama did not answer in time"
    err = BackendServerError("vLLM", 503, detail="overloaded")
    assert err.reason == "had an internal error (HTTP 503)"
    assert str(err) == "vLLM had an internal error (HTTP 503): overloaded"


def test_long_server_message_is_shortened_for_speech_but_kept_whole() -> None:
    err = BackendBadRequestError("LM Studio", 400, "x" * 500)
    assert len(err.reason) < 200
    assert err.message == "x" * 500
