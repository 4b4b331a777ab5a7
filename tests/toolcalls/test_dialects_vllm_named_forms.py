"""Step-Audio 2, Step-3, Solar Open 2 and CWM: forms vLLM reads that Toolbelt read too late.

Step-Audio 2 (``vllm/tool_parsers/step_audio_2_tool_parser.py``) and CWM
(``test_cwm_tool_parser.py``) are Hermes tags whose body names the tool before
its JSON; Step-3 (``test_step3_tool_parser.py``) is DeepSeek's token family
around a steptml invoke; Solar Open 2 (``test_solar_open2_tool_parser.py``) has
its own dialect on GLM's key/value reader. Tool names renamed to the corpus
catalog, wire format kept.
"""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls import resolve_dialect
from custom_components.toolbelt.toolcalls.dialects.base import Dialect
from custom_components.toolbelt.toolcalls.registry import preset_name_for_model
from tests.toolcalls.dialect_helpers import calls, catalog, expect, parse, stream, ws

ON = expect(("HassTurnOn", {"name": "kitchen light"}))
STEP_AUDIO = '<tool_call>function\nHassTurnOn\n{"name": "kitchen light"}</tool_call>'
STEP3 = (
    "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
    '<steptml:invoke name="HassTurnOn"><steptml:parameter name="name">kitchen light'
    "</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>"
)
SOLAR = (
    "<|tool_call:start|>HassTurnOn\n<|tool_arg:start|>name<|tool_arg:value|>"
    "kitchen light<|tool_arg:end|>\n<|tool_call:end|>"
)
CWM = '<tool: function>\nHassTurnOn {"name": "kitchen light"}\n</tool>'

# (form, the dialect that reads it, the model preset that names it)
FORMS = [
    (STEP_AUDIO, "hermes", "step_audio"),
    (STEP3, "deepseek", "step3"),
    (SOLAR, "solar_open", "solar_open"),
    (CWM, "hermes", "cwm"),
]
IDS = ["step_audio_2", "step3", "solar_open2", "cwm"]


def _readers(dialect: str, preset: str) -> list[Dialect]:
    return [resolve_dialect(name) for name in ("auto", dialect, preset)]


@pytest.mark.parametrize(("raw", "dialect", "preset"), FORMS, ids=IDS)
def test_the_call_is_read_after_a_sentence(raw: str, dialect: str, preset: str) -> None:
    for reader in _readers(dialect, preset):
        result = reader.parse("Sure." + raw, catalog())
        assert calls(result) == ON, reader.name
        assert result.rejected == []
        assert result.content == "Sure."


@pytest.mark.parametrize(("raw", "dialect", "preset"), FORMS, ids=IDS)
def test_a_tool_outside_the_catalog_is_refused(
    raw: str, dialect: str, preset: str
) -> None:
    for reader in _readers(dialect, preset):
        result = reader.parse(raw.replace("HassTurnOn", "delete_all"), catalog())
        assert result.calls == []
        assert [r.reason for r in result.rejected] == ["unknown tool: delete_all"]
        assert result.content == ""


@pytest.mark.parametrize(("raw", "dialect", "preset"), FORMS, ids=IDS)
def test_a_call_cut_off_is_refused_as_truncated(
    raw: str, dialect: str, preset: str
) -> None:
    cut = "Sure." + raw[: raw.index("kitchen") + 5]
    for reader in _readers(dialect, preset):
        result = reader.parse(cut, catalog())
        assert result.calls == []
        assert [r.reason for r in result.rejected] == ["call is truncated"]
        assert result.content == "Sure."


@pytest.mark.parametrize(("raw", "dialect", "preset"), FORMS, ids=IDS)
@pytest.mark.parametrize("size", [1, 3, 7])
def test_the_stream_holds_the_markup(
    raw: str, dialect: str, preset: str, size: int
) -> None:
    released, _ = stream(dialect, "Sure. " + raw, size=size)
    assert ws(released) == "Sure."


@pytest.mark.parametrize(
    ("model", "preset"),
    [
        ("stepfun-ai/Step-Audio-2-mini", "step_audio"),
        ("stepfun-ai/step3", "step3"),
        ("upstage/Solar-Open2-100B", "solar_open"),
        ("facebook/cwm", "cwm"),
    ],
)
def test_model_names_pick_their_preset(model: str, preset: str) -> None:
    assert preset_name_for_model(model) == preset
    assert preset_name_for_model("stepfun-ai/Step-3.5-Flash") != "step3"


def test_step3_name_line_before_the_invoke_and_typed_values() -> None:
    """vLLM TestStep3ParameterWhitespace: a string keeps its leading blanks."""
    raw = STEP3.replace("<｜tool_sep｜>", "<｜tool_sep｜>HassLightSet\n").replace(
        "HassTurnOn", "HassLightSet"
    )
    raw = raw.replace(
        "</steptml:parameter></steptml:invoke>",
        '</steptml:parameter><steptml:parameter name="brightness"> 4 '
        "</steptml:parameter></steptml:invoke>",
    ).replace(">kitchen light<", ">    if x:<")
    assert calls(parse("deepseek", raw)) == expect(
        ("HassLightSet", {"name": "    if x:", "brightness": 4})
    )


def test_step3_parameter_never_closed_is_refused() -> None:
    raw = STEP3.replace("</steptml:parameter>", "")
    result = parse("deepseek", raw)
    assert result.calls == []
    assert [r.reason for r in result.rejected] == ["a parameter is never closed"]
    assert result.content == ""


def test_cwm_plain_text_rest_is_the_command_and_json_body_is_hermes() -> None:
    """vLLM test_extract_tool_calls_multiple_tools: text after the name is a command."""
    result = parse("hermes", "<tool: function>\nweb_search echo hi\n</tool>")
    assert calls(result) == expect(("web_search", {"command": "echo hi"}))
    result = parse(
        "hermes",
        '<tool: function>\n{"name": "HassTurnOn", "arguments": '
        '{"name": "kitchen light"}}\n</tool>',
    )
    assert calls(result) == ON


def test_cwm_tag_the_reasoning_mentions_is_not_a_call() -> None:
    result = parse("hermes", "<think>I could use <tool: function> here</think>No.")
    assert (result.calls, result.rejected, result.content) == ([], [], "No.")


def test_solar_reasoning_is_not_spoken_and_value_blanks_are_kept() -> None:
    raw = (
        "<|think:start|>I should use a tool<|think:end|>Sure."
        "<|tool_call:start|>HassTurnOn\n<|tool_arg:start|>name<|tool_arg:value|>"
        " kitchen light<|tool_arg:end|>\n<|tool_call:end|>"
    )
    result = parse("solar_open", raw)
    assert calls(result) == expect(("HassTurnOn", {"name": " kitchen light"}))
    assert result.content == "Sure."
    released, _ = stream("solar_open", raw, size=4)
    assert ws(released) == "Sure."


@pytest.mark.parametrize(
    "text",
    [
        "CWM writes its commands as <tool: bash> blocks, then waits.",
        "Wrap it in <tool: function> and a name.",
    ],
)
def test_a_cwm_label_inside_a_sentence_is_prose(text: str) -> None:
    """A label not followed by its body's line is the answer naming it (found
    by a review: it ran to the end of the reply and was refused as cut off)."""
    for reader in _readers("hermes", "cwm"):
        result = reader.parse(text, catalog())
        assert result.calls == []
        assert result.rejected == []
        assert result.content == text
