"""Every translated string renders in HA's real frontend, not as "Translation error".

HA's frontend reads each string as an ICU message (intl-messageformat): a
``<tool_call>`` is an unclosed tag there, ``{"name", …}`` a malformed argument.
These tests read every string of strings.json and of each translation file as
the frontend does (tests/icu_message.py), and apply the rules hassfest applies
to HA core's own strings. The browser check of script/develop_check opens the
real forms as well.
"""

from __future__ import annotations

from collections.abc import Iterator
import importlib.util
import json
from pathlib import Path
import re
import string
from typing import Any

from homeassistant.helpers import config_validation as cv
import pytest

from tests.icu_message import IcuSyntaxError, parse

INTEGRATION = Path(__file__).parents[1] / "custom_components" / "toolbelt"
FILES = [
    INTEGRATION / "strings.json",
    *sorted((INTEGRATION / "translations").glob("*.json")),
]
ENGLISH = INTEGRATION / "translations" / "en.json"
# The languages the UI is translated into (README, Languages).
LANGUAGES = ["de", "es", "fr", "it", "nl", "pl"]

# The placeholders the code fills in, by string; every other string has none.
# (A placeholder the code does not pass stays "{name}" on screen, or fails.)
ARGUMENTS: dict[str, set[str]] = {
    "config.step.connect.title": {"server"},
    "config.step.agent.description": {"server"},
    "config.step.reconfigure.title": {"server"},
    "config.step.reauth_confirm.title": {"server"},
    "config.step.check.description": {"model", "result", "constraints"},
    "config_subentries.conversation.step.check.description": {
        "model",
        "result",
        "constraints",
    },
    "exceptions.server_unreachable.message": {"server"},
    "exceptions.attachment_not_an_image.message": {
        "accepted",
        "attachment",
        "mime_type",
    },
    "exceptions.attachments_too_large.message": {"limit", "size"},
    "exceptions.attachment_unreadable.message": {"error"},
    "exceptions.images_refused.message": {"model", "server"},
    "exceptions.no_logprobs.message": {"server"},
    "exceptions.logprobs_refused.message": {"message", "server"},
    "exceptions.evaluation_no_label.message": {"labels", "question", "reply"},
    "exceptions.evaluation_too_many_options.message": {"count", "question"},
    # Spoken sentences (spoken.py); {server} is a server_name_* sentence.
    "exceptions.context_overflow.message": {"server"},
    **{
        f"exceptions.server_{key}.message": {"server"}
        for key in (
            "failed",
            "not_reached",
            "timeout",
            "auth",
            "busy",
            "stream_error",
            "tool_parse",
            "bad_reply",
            "reply_too_long",
            "broke_off",
        )
    },
    "exceptions.server_internal_error.message": {"server", "status"},
    "exceptions.server_bad_request.message": {"message", "server"},
    "exceptions.server_bad_request_status.message": {"server", "status"},
    "issues.search_auth_failed.title": {"backend"},
    "issues.search_auth_failed.description": {"backend", "details"},
    "issues.memory_auth_failed.description": {"details"},
}

# hassfest's rule for HA core's strings: a placeholder is never quoted away.
PLACEHOLDER_IN_SINGLE_QUOTES = re.compile(r"'{\w+}'")


def _leaves(data: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, str]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, (*path, key))
    else:
        yield ".".join(path), data


def _problem(key: str, text: Any) -> str | None:
    """Why the frontend (or hassfest) would refuse this string, or None."""
    if not isinstance(text, str):
        return "not a string"
    try:
        message = parse(text)
    except IcuSyntaxError as err:
        return f"Translation error: {err}"
    if extra := set(message.arguments) - ARGUMENTS.get(key, set()):
        return f"arguments the code does not pass: {sorted(extra)}"
    # What hassfest checks of HA core's strings.
    try:
        cv.string_with_no_html(text)
    except Exception as err:  # voluptuous' or probatio's Invalid
        return str(err)
    if PLACEHOLDER_IN_SINGLE_QUOTES.search(text):
        return "a placeholder inside single quotes"
    if text != text.strip():
        return "leading or trailing spaces"
    return None


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_every_string_renders_in_the_frontend(path: Path) -> None:
    """Each string parses as an ICU message, with only the arguments the code passes."""
    strings = list(_leaves(json.loads(path.read_text(encoding="utf-8"))))
    assert len(strings) > 100  # the whole UI, not a part of it
    problems = {
        key: problem for key, text in strings if (problem := _problem(key, text))
    }
    assert problems == {}


@pytest.mark.parametrize(
    "text",
    [
        # The labels the frontend showed as "Translation error" (issue 25).
        "Hermes <tool_call> JSON (Hermes, Qwen 2.5, many fine-tunes)",
        "Qwen3-Coder XML <function=…><parameter=…> (Qwen3-Coder, Qwen 3.5)",
        'Llama 3 JSON {"name", "parameters"} (Llama 3.1, 3.2, 3.3)',
        "Nemotron <TOOLCALL> (NVIDIA Nemotron)",
        "Seed-OSS <seed:tool_call> (ByteDance Seed-OSS)",
        # And other ways to break a string.
        "Closed tags are HTML: <b>bold</b>",
        "A stray closing tag </b>",
        "An unclosed argument {server",
        "An empty argument {}",
        "A typed argument {count, number}",
    ],
)
def test_what_the_frontend_cannot_render_is_refused(text: str) -> None:
    with pytest.raises(IcuSyntaxError):
        parse(text)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Hermes '<'tool_call> JSON", "Hermes <tool_call> JSON"),
        ("'<'function=…>'<'parameter=…>", "<function=…><parameter=…>"),
        ("""JSON '{'"name", "parameters"'}'""", 'JSON {"name", "parameters"}'),
        ("Kimi <|tool_calls_section_begin|>", "Kimi <|tool_calls_section_begin|>"),
        ("The server's models, don't", "The server's models, don't"),
        ("It''s", "It's"),
        ("A lone } and 2 < 3", "A lone } and 2 < 3"),
        ("Connect to {server}", "Connect to {server}"),
    ],
)
def test_quoting_shows_markup_as_text(text: str, shown: str) -> None:
    """An apostrophe before < or { shows it as text, as HA core's strings do."""
    assert parse(text).rendered == shown
    cv.string_with_no_html(text)


def test_hassfest_rule_refuses_html() -> None:
    """The HA rule applied above is the real one (it would refuse the old labels)."""
    # voluptuous' Invalid on older HAs, probatio's on 2026.11.
    with pytest.raises(Exception, match="should not contain HTML"):
        cv.string_with_no_html("Hermes <tool_call> JSON")


def _strings(path: Path) -> dict[str, Any]:
    return dict(_leaves(json.loads(path.read_text(encoding="utf-8"))))


def test_the_translated_languages_are_shipped() -> None:
    """A language the README names has its file; no other file goes unchecked."""
    shipped = sorted(path.stem for path in (INTEGRATION / "translations").glob("*"))
    assert shipped == sorted(["en", *LANGUAGES])


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_translation_has_the_english_keys_and_placeholders(language: str) -> None:
    """Every English string is translated (no English fallback), none is left over,
    and each keeps the placeholders the code fills in (a lost one hides a value,
    a misspelt one shows "{name}" on screen)."""
    english = _strings(ENGLISH)
    translated = _strings(INTEGRATION / "translations" / f"{language}.json")
    assert sorted(set(english) - set(translated)) == []  # missing
    assert sorted(set(translated) - set(english)) == []  # extra
    placeholders = {
        key: (set(parse(english[key]).arguments), set(parse(text).arguments))
        for key, text in translated.items()
    }
    assert {key: pair for key, pair in placeholders.items() if pair[0] != pair[1]} == {}


def _placeholders(text: str) -> set[str]:
    """The fields HA's backend fills in (str.format), read as HA reads them."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


@pytest.mark.parametrize(
    "path",
    [path for path in FILES if path.stem not in ("strings", "en")],
    ids=lambda path: path.name,
)
def test_a_translation_keeps_the_english_placeholders(path: Path) -> None:
    """Each translated string has exactly its English string's placeholders.

    HA drops a translation whose placeholders differ (the user would get
    English), and the frontend shows a misspelt one as "{name}"."""
    english = dict(_leaves(json.loads(FILES[0].read_text(encoding="utf-8"))))
    translated = dict(_leaves(json.loads(path.read_text(encoding="utf-8"))))
    assert sorted(set(translated) - set(english)) == []  # no key English lacks
    differ = {
        key: (sorted(_placeholders(text)), sorted(_placeholders(english[key])))
        for key, text in translated.items()
        if _placeholders(text) != _placeholders(english[key])
    }
    assert differ == {}


def test_the_browser_check_fills_every_placeholder() -> None:
    """The browser check renders every string with stand-in values; a missing
    one shows only as a console error there, so it is checked here."""
    spec = importlib.util.spec_from_file_location(
        "dev_browser", INTEGRATION.parents[1] / "script" / "dev_browser.py"
    )
    assert spec is not None
    assert spec.loader is not None
    browser = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(browser)
    used = set().union(
        *(
            re.findall(r"\{(\w+)\}", text)
            for _, text in _leaves(json.loads(ENGLISH.read_text(encoding="utf-8")))
        )
    )
    assert used <= set(browser.PLACEHOLDERS)
