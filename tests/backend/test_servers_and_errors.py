"""Server-kind table and error wording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_components import toolbelt
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
from custom_components.toolbelt.ha.server_names import kind_label, spoken_name

TRANSLATIONS = Path(toolbelt.__file__).parent / "translations"


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
    assert len({kind_label(kind) for kind in SERVER_KINDS.values()}) == len(
        SERVER_KINDS
    )


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


@pytest.mark.parametrize(
    ("header", "expected"),
    [("2", 2.0), ("0.5", 0.5), ("-3", 0.0), (None, None), ("soon", None)],
)
def test_retry_after_seconds(header: str | None, expected: float | None) -> None:
    from types import SimpleNamespace

    from custom_components.toolbelt.backend.status import retry_after

    headers = {"retry-after": header} if header is not None else {}
    assert retry_after(SimpleNamespace(headers=headers)) == expected


def test_retry_after_http_date() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime
    from types import SimpleNamespace

    from custom_components.toolbelt.backend.status import retry_after

    when = datetime.now(UTC) + timedelta(seconds=30)
    wait = retry_after(SimpleNamespace(headers={"retry-after": format_datetime(when)}))
    assert wait is not None
    assert 25 < wait <= 30


@pytest.mark.parametrize(
    ("message", "overflow"),
    [
        ("the request exceeds the available context size, try increasing it", True),
        ("This model's maximum context length is 4096 tokens. However, you", True),
        ("context_length_exceeded", True),
        ("prompt is too long: 9000 tokens > 8192 maximum", True),
        ("Unsupported role: tool", False),
        ("model 'qwen3:8b' not found", False),
    ],
)
def test_context_overflow_is_told_from_other_refusals(
    message: str, overflow: bool
) -> None:
    from custom_components.toolbelt.backend.status import is_context_overflow

    assert is_context_overflow(message) is overflow


@pytest.mark.parametrize(
    "path", sorted(TRANSLATIONS.glob("*.json")), ids=lambda path: path.stem
)
def test_every_kind_is_named_in_every_translation(path: Path) -> None:
    """The picker's label and the kind in a sentence, in each shipped language."""
    texts = json.loads(path.read_text(encoding="utf-8"))
    labels = texts["selector"]["server_kind"]["options"]
    assert list(labels) == list(SERVER_KINDS)
    assert all(label.strip() for label in labels.values())
    spoken = {
        key: texts["exceptions"].get(f"server_name_{key}", {}).get("message", "")
        for key in SERVER_KINDS
    }
    assert [key for key, name in spoken.items() if not name.strip()] == []


def test_english_names_of_the_kinds_are_as_they_were() -> None:
    """Names read from the translations: the picker, the log and errors' text."""
    assert {
        key: (kind_label(kind), spoken_name(kind)) for key, kind in SERVER_KINDS.items()
    } == {
        "openai": ("OpenAI", "OpenAI"),
        "ollama": ("Ollama", "Ollama"),
        "llamacpp": ("llama.cpp server", "the llama.cpp server"),
        "vllm": ("vLLM", "the vLLM server"),
        "lmstudio": ("LM Studio", "LM Studio"),
        "other": ("Other OpenAI-compatible server", "the model server"),
    }
