"""The agent check holds the agent's prompt against the context the server reports.

The real llama-server shows the warning in tests/ha/test_llamacpp_server.py;
here the test server answers as Ollama (``/api/ps``, ``/api/show``) and vLLM
(``/v1/models`` ``max_model_len``) do, and as broken servers might.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.toolbelt.backend import context_size
from custom_components.toolbelt.const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_CHECK_AGAIN,
    CONF_LARGE_HOME,
    CONF_LLM_HASS_API,
    CONF_MODEL,
    CONF_SERVER_KIND,
    CONF_TOOL_FORMAT,
    DOMAIN,
)
from tests.ha.conftest import agent_options
from tests.openai_server import OpenAIServer

KEY = "sk-1"
NATIVE = "Native tool calls: the server returned a structured call."
OLLAMA_HINT = (
    "give the model a larger context on the Ollama server"
    " (OLLAMA_CONTEXT_LENGTH=8192, or PARAMETER num_ctx 8192 in a Modelfile;"
    " Ollama's default is 4096 on GPUs under 24 GB)"
)


async def _verdict(
    hass: HomeAssistant, server: OpenAIServer, kind: str, **options: Any
) -> str:
    """The check's verdict for a ``kind`` agent on ``server``, as the form shows it."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Test server",
        unique_id=server.base_url,
        data={
            CONF_SERVER_KIND: kind,
            CONF_BASE_URL: server.base_url,
            CONF_API_KEY: KEY,
        },
        subentries_data=[
            ConfigSubentryData(
                data=agent_options(),
                subentry_type="conversation",
                title="Test agent",
                unique_id=None,
            )
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    server.reply_tool_calls([{"name": "HassTurnOn", "arguments": {"name": "kitchen"}}])
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            CONF_MODEL: "test-model",
            CONF_TOOL_FORMAT: "auto",
            CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
            CONF_CHECK_AGAIN: True,
            **options,
        },
    )
    assert result["step_id"] == "check", result
    return result["description_placeholders"]["result"]


def _warning(verdict: str) -> tuple[str, int, str]:
    """The warning's server and reported context, and what it says to change."""
    summary, warning = verdict.split("\n\n")
    assert summary == NATIVE
    head, _, rest = warning.partition(" gives this model ")
    assert head.startswith("Context too small: "), warning
    context = int(rest.split(" tokens")[0].replace(",", ""))
    return (
        head.removeprefix("Context too small: "),
        context,
        rest.split("To fix it, ")[1],
    )


@pytest.fixture
def server_with_key(openai_server: OpenAIServer) -> OpenAIServer:
    openai_server.require_api_key = KEY
    return openai_server


async def test_ollama_reports_the_loaded_models_context(
    hass: HomeAssistant, ha_ready, server_with_key: OpenAIServer
) -> None:
    server_with_key.native["/api/ps"] = {
        "models": [
            {"name": "other:latest", "model": "other:latest", "context_length": 65536},
            {
                "name": "test-model:latest",
                "model": "test-model:latest",
                "context_length": 1024,
            },
        ]
    }

    verdict = await _verdict(hass, server_with_key, "ollama")

    assert _warning(verdict) == (
        "Ollama",
        1024,
        f"{OLLAMA_HINT}, or turn on large-home mode in the agent's options.",
    )


async def test_ollama_reports_num_ctx_of_a_model_not_loaded(
    hass: HomeAssistant, ha_ready, server_with_key: OpenAIServer
) -> None:
    server_with_key.native["/api/ps"] = {"models": []}
    server_with_key.native["/api/show"] = {
        "parameters": 'num_ctx                        1000\nstop "<|im_end|>"',
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
    }

    verdict = await _verdict(hass, server_with_key, "ollama")

    assert _warning(verdict)[:2] == ("Ollama", 1000)
    (show,) = [r for r in server_with_key.all_requests if r.path == "/api/show"]
    assert show.body == {"model": "test-model"}
    assert show.headers["Authorization"] == f"Bearer {KEY}"


async def test_ollama_without_num_ctx_reports_nothing(
    hass: HomeAssistant, ha_ready, server_with_key: OpenAIServer
) -> None:
    """The model's trained context is not what Ollama runs it with: no guess."""
    server_with_key.native["/api/ps"] = {"models": []}
    server_with_key.native["/api/show"] = {
        "parameters": 'stop "<|im_end|>"',
        "model_info": {"qwen2.context_length": 512},
    }

    assert await _verdict(hass, server_with_key, "ollama") == NATIVE


async def test_vllm_reports_max_model_len(
    hass: HomeAssistant, ha_ready, server_with_key: OpenAIServer
) -> None:
    server_with_key.model_fields = {"max_model_len": 1024}

    verdict = await _verdict(hass, server_with_key, "vllm")

    assert _warning(verdict) == (
        "the vLLM server",
        1024,
        "start vLLM with a larger --max-model-len, or turn on large-home mode in"
        " the agent's options.",
    )


async def test_with_large_home_mode_on_it_says_to_expose_fewer_entities(
    hass: HomeAssistant, ha_ready, server_with_key: OpenAIServer
) -> None:
    server_with_key.model_fields = {"max_model_len": 1024}

    verdict = await _verdict(hass, server_with_key, "vllm", **{CONF_LARGE_HOME: "on"})

    assert _warning(verdict)[2] == (
        "start vLLM with a larger --max-model-len, or expose fewer entities to Assist."
    )


async def test_no_warning_when_the_prompt_fits(
    hass: HomeAssistant, ha_ready, server_with_key: OpenAIServer
) -> None:
    server_with_key.model_fields = {"max_model_len": 32768}

    assert await _verdict(hass, server_with_key, "vllm") == NATIVE


@pytest.mark.parametrize(
    "answer",
    [
        {"models": "none"},
        {"models": [{"name": "test-model:latest", "context_length": "1024"}]},
        {"models": [{"name": "test-model:latest", "context_length": True}]},
        {"models": [{"name": "test-model:latest", "context_length": -1}]},
        {"models": [{"name": "test-model:latest", "context_length": 1024.5}]},
        [1, 2, 3],
        "garbage",
        {"models": [[[[[[]]]]]]},
        b"[" * 200_000 + b"]" * 200_000,
        b"\xff\xfe not json",
        None,
    ],
)
async def test_odd_answers_report_nothing(
    hass: HomeAssistant, ha_ready, server_with_key: OpenAIServer, answer: Any
) -> None:
    server_with_key.native["/api/ps"] = answer

    assert await _verdict(hass, server_with_key, "ollama") == NATIVE


async def test_an_oversized_answer_is_not_read(
    hass: HomeAssistant,
    ha_ready,
    server_with_key: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(context_size, "MAX_BYTES", 1000)
    server_with_key.native["/api/ps"] = {
        "models": [{"name": "test-model:latest", "context_length": 1024}],
        "padding": "x" * 1000,
    }

    assert await _verdict(hass, server_with_key, "ollama") == NATIVE


async def test_a_server_that_does_not_answer_in_time_reports_nothing(
    hass: HomeAssistant,
    ha_ready,
    server_with_key: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(context_size, "TIMEOUT", 0.1)
    server_with_key.model_fields = {"max_model_len": 1024}
    server_with_key.models_delay = 1.0

    assert await _verdict(hass, server_with_key, "vllm") == NATIVE
