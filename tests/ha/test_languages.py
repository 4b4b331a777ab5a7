"""Toolbelt's own sentences are spoken in the conversation's language.

A German conversation runs end to end against the scripted server: what Assist
would say (streamed to TTS and final) is German. HA's translation cache serves
the sentences, so a key a language lacks (or whose placeholders differ) is
English, and then the whole sentence is English.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent, translation
import pytest

from custom_components.toolbelt.backend.errors import (
    BackendAuthError,
    BackendBadRequestError,
    BackendBusyError,
    BackendConnectionError,
    BackendContextOverflowError,
    BackendError,
    BackendResponseError,
    BackendServerError,
    BackendTimeoutError,
    BackendToolParseError,
)
from custom_components.toolbelt.backend.openai_compat import _broke_off
from custom_components.toolbelt.backend.servers import SERVER_KINDS
from custom_components.toolbelt.const import DOMAIN
from custom_components.toolbelt.ha import compat
from custom_components.toolbelt.ha.server_names import spoken_name
from custom_components.toolbelt.ha.spoken import LANGUAGES, async_phrases
from custom_components.toolbelt.loop.phrasebook import PHRASE_KEYS
from tests.ha.conftest import (
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    speech,
    streamed_text,
)
from tests.openai_server import OpenAIServer

TRANSLATED = ["de", "es", "fr", "it", "nl", "pl"]

# Every sentence a failing server can cause, one error of each shape.
ERRORS: list[BackendError] = [
    BackendError("x"),
    BackendConnectionError("x"),
    BackendTimeoutError("x"),
    BackendAuthError("x"),
    BackendServerError("x", 500),
    BackendServerError("x", None),
    BackendToolParseError("x", 500, detail="parse error"),
    BackendBadRequestError("x", 400, "model 'x' not found"),
    BackendBadRequestError("x", 400, ""),
    BackendBusyError("x", retry_after=None),
    BackendContextOverflowError("x"),
    BackendResponseError("x"),
    _broke_off("x", ValueError("cut")),
]


async def test_a_german_conversation_hears_a_server_timeout_in_german(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, request_timeout=0.5)
    openai_server.reply_delay(5)

    result, deltas = await async_converse_streamed(hass, "Mach das Licht an", "de")

    assert result.response.response_type is intent.IntentResponseType.ERROR
    assert speech(result) == (
        "Entschuldigung, der llama.cpp-Server hat nicht rechtzeitig geantwortet."
    )
    # Nothing else went to TTS before the final sentence (no English).
    assert streamed_text(deltas) == ""


@pytest.mark.parametrize(
    ("server_kind", "server"),
    [
        ("openai", "OpenAI"),
        ("ollama", "Ollama"),
        ("vllm", "der vLLM-Server"),
        ("lmstudio", "LM Studio"),
        ("other", "der Modellserver"),
    ],
)
async def test_a_server_timeout_in_german_names_the_kind_the_german_way(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    server_kind: str,
    server: str,
) -> None:
    """Each kind's name in a German sentence is German (llama.cpp: above)."""
    await async_add_toolbelt(
        hass, openai_server, server_kind=server_kind, request_timeout=0.5
    )
    openai_server.reply_delay(5)

    result = await async_converse(hass, "Mach das Licht an", language="de")

    assert speech(result) == (
        f"Entschuldigung, {server} hat nicht rechtzeitig geantwortet."
    )
    german = await async_phrases(hass, "de")
    assert german.server_name(server_kind) == server


async def test_a_german_conversation_hears_no_answer_in_german(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    """The loop's own sentence: streamed to TTS and final, in German."""
    openai_server.reply_text("<think>Der Nutzer grüßt.</think>")

    result, deltas = await async_converse_streamed(hass, "Hallo", "de")

    said = "Entschuldigung, das Modell hat keine Antwort gegeben."
    assert speech(result) == said
    assert streamed_text(deltas) == said


async def test_a_german_conversation_hears_the_tool_call_limit_in_german(
    hass: HomeAssistant, ha_ready, openai_server: OpenAIServer
) -> None:
    await async_add_toolbelt(hass, openai_server, max_tool_calls=1)
    for _ in range(3):
        openai_server.reply_tool_calls(
            [{"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}]
        )

    result, deltas = await async_converse_streamed(hass, "Küchenlicht an", "de")

    said = (
        "Entschuldigung, das konnte ich innerhalb der Grenze für Werkzeugaufrufe"
        " nicht abschließen."
    )
    assert speech(result) == said
    assert streamed_text(deltas).endswith(said)


@pytest.mark.skipif(not compat.BUSY_ERRORS, reason="this HA has no busy conversations")
async def test_a_german_message_while_the_turn_runs_hears_german(
    hass: HomeAssistant, toolbelt, openai_server: OpenAIServer
) -> None:
    openai_server.reply_delay(0.5, "Hier bin ich.")
    first = hass.async_create_task(
        async_converse(hass, "Bist du da?", "conv-busy", language="de")
    )
    await openai_server.requests_seen(1)

    second = await async_converse(hass, "Hallo?", "conv-busy", language="de")

    assert speech(second) == (
        "Ich beantworte noch deine letzte Nachricht. Frag mich gleich noch einmal."
    )
    assert speech(await first) == "Hier bin ich."


@pytest.mark.parametrize(
    ("language", "server_kind", "said"),
    [
        (
            "de",
            "ollama",
            "Entschuldigung, Ollama hatte einen internen Fehler (HTTP 500).",
        ),
        (
            "de-CH",
            "llamacpp",
            "Entschuldigung, der llama.cpp-Server hatte einen internen Fehler"
            " (HTTP 500).",
        ),
        (
            "fr",
            "vllm",
            "Désolé, le serveur vLLM a rencontré une erreur interne (HTTP 500).",
        ),
        (
            "pl",
            "openai",
            "Przepraszam, serwer OpenAI zgłosił błąd wewnętrzny (HTTP 500).",
        ),
        # A language Toolbelt does not ship, and English itself.
        (
            "sv",
            "llamacpp",
            "Sorry, the llama.cpp server had an internal error (HTTP 500).",
        ),
        (
            "en-GB",
            "llamacpp",
            "Sorry, the llama.cpp server had an internal error (HTTP 500).",
        ),
    ],
)
async def test_the_closest_shipped_language_is_spoken(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    language: str,
    server_kind: str,
    said: str,
) -> None:
    await async_add_toolbelt(hass, openai_server, server_kind=server_kind)
    openai_server.reply_error(500, message="CUDA out of memory")

    result = await async_converse(hass, "hallo", language=language)

    assert speech(result) == said


@pytest.fixture
def forget_our_translations(translations_once: Any) -> Iterator[None]:
    """Load our translation files afresh, and forget them after the test
    (the test plugin shares HA's translation cache across a session)."""

    def forget() -> None:
        shared = translations_once.kwargs["return_value"]
        for loaded in shared.loaded.values():
            loaded.discard(DOMAIN)
        for categories in shared.cache.values():
            for category in categories.values():
                category.pop(DOMAIN, None)

    forget()
    yield
    forget()


@pytest.mark.usefixtures("forget_our_translations")
@pytest.mark.parametrize(
    "broken",
    [None, "Entschuldigung, {serverr} hatte einen internen Fehler."],
    ids=["missing", "wrong_placeholder"],
)
async def test_a_sentence_german_lacks_is_english_whole(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    broken: str | None,
) -> None:
    """HA serves English for a missing (or broken) German sentence; the server's
    name in it is English too, and the other sentences stay German."""
    load = translation._load_translations_files_by_language

    def without_the_sentence(files: Any) -> dict[str, Any]:
        loaded = load(files)
        ours = loaded.get("de", {}).get(DOMAIN, {}).get("exceptions", {})
        if broken is None:
            ours.pop("server_internal_error", None)
        else:
            ours["server_internal_error"] = {"message": broken}
        return loaded

    monkeypatch.setattr(
        translation, "_load_translations_files_by_language", without_the_sentence
    )
    await async_add_toolbelt(hass, openai_server)
    openai_server.reply_error(500, message="CUDA out of memory")
    openai_server.reply_error(401, message="Invalid API key")

    first = await async_converse(hass, "hallo", language="de")
    second = await async_converse(hass, "hallo", language="de")

    assert speech(first) == (
        "Sorry, the llama.cpp server had an internal error (HTTP 500)."
    )
    assert speech(second) == (
        "Entschuldigung, der llama.cpp-Server hat den API-Schlüssel abgelehnt."
    )


def test_the_shipped_languages_are_found() -> None:
    assert list(LANGUAGES) == sorted(["en", *TRANSLATED])


@pytest.mark.parametrize("language", TRANSLATED)
async def test_every_spoken_sentence_is_translated(
    hass: HomeAssistant, language: str
) -> None:
    """Each sentence the code can say, for every server kind, is the language's
    own (no English fallback) with every placeholder filled in."""
    english = await async_phrases(hass, "en")
    phrases = await async_phrases(hass, language)

    said = {
        *(phrases.server_error(err, kind) for err in ERRORS for kind in SERVER_KINDS),
        phrases.say("busy"),
        *(getattr(phrases.phrasebook(), key) for key in PHRASE_KEYS),
    }
    in_english = {
        *(english.server_error(err, kind) for err in ERRORS for kind in SERVER_KINDS),
        english.say("busy"),
        *(getattr(english.phrasebook(), key) for key in PHRASE_KEYS),
    }

    assert len(said) == len(in_english) == len(ERRORS) * len(SERVER_KINDS) + 3
    assert said.isdisjoint(in_english)
    assert not [text for text in said if "{" in text or "}" in text]
    # The server's name is the language's own as well.
    assert not [text for text in said if "the llama.cpp server" in text]


async def test_english_names_the_servers_as_their_errors_do(
    hass: HomeAssistant,
) -> None:
    """English speech names each server kind as its errors and the log do."""
    english = await async_phrases(hass, "en")

    assert {key: english.say(f"server_name_{key}") for key in SERVER_KINDS} == {
        key: spoken_name(kind) for key, kind in SERVER_KINDS.items()
    }
