"""Toolbelt in real HA against a real llama-server (Debian's, started by the test).

The models are made at test time (tests/llama/model.py): their weights are set
by hand, so the server writes exactly the reply a test chooses, through its own
chat template, sampler, grammars and tool-call parser.
"""

from __future__ import annotations

from datetime import timedelta
import json
import logging
import re

from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from custom_components.toolbelt.const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_CHECK_AGAIN,
    CONF_CONSTRAINTS,
    CONF_LLM_HASS_API,
    CONF_MAX_TOKENS,
    CONF_MODEL,
    CONF_REQUEST_TIMEOUT,
    CONF_SERVER_KIND,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    CONF_TOOL_FORMAT,
    DOMAIN,
)
from custom_components.toolbelt.ha.warmup import WARM_UP_DELAY
from tests.ha.conftest import (
    async_add_toolbelt,
    async_converse,
    async_converse_streamed,
    speech,
    streamed_text,
)
from tests.llama.model import Recipe
from tests.llama.server import LlamaServers, assist_tool
from tests.llama.timings import TimingProxy

pytestmark = pytest.mark.usefixtures("socket_enabled")
# The shared cores may be busy: a slow answer must not fail a test.
SLOW_OK = 30.0

TURN_ON = {"name": assist_tool("HassTurnOn"), "arguments": {"name": "Kitchen light"}}
CALL = ("<tool_call>", f"\n{json.dumps(TURN_ON)}\n", "</tool_call>")
DONE = "The kitchen light is on."
# Writes the call, then the answer after the tool's result.
ACTS = Recipe(reply=CALL, after_tool=(DONE,))
# Chats; writes the call only when a constraint rules the chat out: after the
# chat (llama.cpp's "required"), or instead of it (a grammar, a JSON schema).
CHATTY = Recipe(
    reply=("Sure, I can do that.",),
    after_tool=(DONE,),
    fallbacks=(CALL, (json.dumps(TURN_ON),)),
)
# Markup llama.cpp's own parser rejects (500): single quotes, spaces before {.
SINGLE_QUOTED = Recipe(
    reply=(
        "<tool_call>",
        "\n" + str(TURN_ON) + "\n",  # {'name': 'HassTurnOn', ...}
        "</tool_call>",
    ),
    after_tool=(DONE,),
)
SPACED = Recipe(
    reply=(
        "Turning it on. ",
        "<tool_call>",
        f"\n  {json.dumps(TURN_ON)}\n",
        "</tool_call>",
    ),
    after_tool=(DONE,),
)


async def _add(hass: HomeAssistant, server, **agent):
    """Toolbelt on the real server, its agent patient with busy shared cores."""
    return await async_add_toolbelt(hass, server, request_timeout=SLOW_OK, **agent)


def _light(hass: HomeAssistant) -> str:
    return hass.states.get("light.kitchen_light").state


async def _check(hass: HomeAssistant, entry, **options) -> dict:
    """Reconfigure the agent with ``options``: the check's form."""
    (subentry,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, subentry.subentry_id)
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"],
        {
            CONF_MODEL: "test-model",
            CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
            CONF_REQUEST_TIMEOUT: SLOW_OK,
            CONF_CHECK_AGAIN: True,
            **options,
        },
    )
    assert result["step_id"] == "check", result
    return result


async def _save(hass: HomeAssistant, entry, result: dict, **choices) -> dict:
    """Accept the check's form; the agent's stored options."""
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], choices
    )
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done()
    (subentry,) = entry.subentries.values()
    return dict(subentry.data)


# -- turns -------------------------------------------------------------------


async def test_a_native_turn_streams_the_answer_and_switches_the_light(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    await _add(hass, llama.serve(ACTS))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert _light(hass) == "on"
    assert speech(result) == DONE
    assert streamed_text(deltas) == DONE
    (call,) = [d for d in deltas if d.get("tool_calls")]
    assert call["tool_calls"][0].tool_args == {"name": "Kitchen light"}


async def test_required_on_the_first_request_makes_a_chatty_model_act(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    """llama-server honours tool_choice "required": the chat comes first, then
    the call; the second request is free, so the answer lands."""
    server = llama.serve(CHATTY)
    entry = await _add(hass, server)
    result = await async_converse(hass, "turn on the kitchen light")
    # Chat without a call: the honesty guard says what happened.
    assert speech(result) == "Sorry, I did not do that: nothing was changed."
    assert _light(hass) == "off"

    await hass.config_entries.async_remove(entry.entry_id)
    await _add(hass, server, tool_choice="required_first", constraints=["tool_choice"])
    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert _light(hass) == "on"
    assert speech(result) == DONE
    assert streamed_text(deltas) == "Sure, I can do that." + DONE


@pytest.mark.parametrize("constraint", ["grammar", "json_schema"])
async def test_a_text_format_constraint_makes_a_chatty_model_act(
    hass: HomeAssistant, ha_ready, llama: LlamaServers, constraint: str
) -> None:
    """A grammar (hermes frame) or a JSON schema from the catalog rules the
    chat out on the first request; the answer after the tool is free."""
    await _add(
        hass,
        llama.serve(CHATTY),
        tool_format="hermes",
        tool_choice="required_first",
        constraints=[constraint],
    )

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert _light(hass) == "on"
    assert speech(result) == DONE
    assert streamed_text(deltas) == DONE


@pytest.mark.parametrize("recipe", [SINGLE_QUOTED, SPACED], ids=["quotes", "spaces"])
async def test_a_call_llama_cpp_cannot_parse_is_read_by_toolbelt(
    hass: HomeAssistant, ha_ready, llama: LlamaServers, recipe: Recipe
) -> None:
    """llama-server's parser fails (streamed: a role chunk, then an error event);
    Toolbelt asks again with tool_choice "none" and reads the call itself."""
    await _add(hass, llama.serve(recipe))

    result, deltas = await async_converse_streamed(hass, "turn on the kitchen light")

    assert speech(result) == DONE
    assert _light(hass) == "on"
    said = "Turning it on. " if recipe is SPACED else ""
    assert streamed_text(deltas) == said + DONE  # never said twice


async def test_an_overlong_prompt_is_spoken_as_the_context_error(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    await _add(hass, llama.serve(ACTS, context=256))

    result = await async_converse(hass, "turn on the kitchen light")

    assert speech(result) == (
        "Sorry, this is too long for the model's context on the llama.cpp"
        " server; raise the context size, or turn on the agent's large-home mode."
    )
    assert _light(hass) == "off"


# -- the warm-up ---------------------------------------------------------------


async def _first_request_share(hass: HomeAssistant, llama: LlamaServers, warm: bool):
    """The share of a new conversation's first prompt read from the cache, on a
    fresh server, with the agent's warm-up on or off."""
    server = llama.serve(ACTS, context=8192)
    server.stop()  # a cold start: no earlier test's prompt in the cache
    server = llama.serve(ACTS, context=8192)
    proxy = await TimingProxy(f"http://127.0.0.1:{server.port}").start()
    try:
        entry = await _add(hass, proxy, warm_up=warm)
        async_fire_time_changed(
            hass, dt_util.utcnow() + timedelta(seconds=WARM_UP_DELAY + 1)
        )
        await hass.async_block_till_done(wait_background_tasks=True)
        sent = len(proxy.bodies)
        assert speech(await async_converse(hass, "turn on the kitchen light")) == DONE
        await hass.config_entries.async_remove(entry.entry_id)
    finally:
        await proxy.close()
    return sent, proxy.share(sent)


async def test_the_first_request_of_a_conversation_is_read_from_the_warm_cache(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    """Without the warm-up llama-server reads a new conversation's whole first
    prompt; after it, at least 90% of that prompt comes from its cache."""
    cold_sent, cold = await _first_request_share(hass, llama, warm=False)
    warm_sent, warm = await _first_request_share(hass, llama, warm=True)

    assert (cold_sent, warm_sent) == (0, 1)
    assert cold == 0.0
    assert warm >= 0.9


# -- the agent check ---------------------------------------------------------


async def test_the_check_in_each_mode(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    entry = await _add(hass, llama.serve(CHATTY))

    native = await _check(hass, entry, **{CONF_TOOL_FORMAT: "auto"})
    text = await _check(hass, entry, **{CONF_TOOL_FORMAT: "hermes"})

    assert native["description_placeholders"]["result"].startswith("No tool call")
    assert native["description_placeholders"]["constraints"] == "tool_choice: honoured"
    assert text["description_placeholders"]["constraints"] == (
        "grammar: honoured; json_schema: honoured"
    )
    data = await _save(hass, entry, text, **{CONF_TOOL_CHOICE: "required_first"})
    assert data[CONF_CONSTRAINTS] == ["grammar", "json_schema"]

    await hass.config_entries.async_remove(entry.entry_id)
    entry = await _add(hass, llama.serve(ACTS))
    native = await _check(hass, entry, **{CONF_TOOL_FORMAT: "auto"})
    assert native["description_placeholders"]["result"] == (
        "Native tool calls: the server returned a structured call."
    )
    text = await _check(hass, entry, **{CONF_TOOL_FORMAT: "hermes"})
    assert text["description_placeholders"]["result"] == (
        "Text tool calls: the model wrote a hermes call and Toolbelt read it."
    )


async def test_the_check_says_when_the_prompt_does_not_fit_the_context(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    """llama-server started with -c 1024 reports it in /v1/models meta.n_ctx.

    At 4096 the same agent fits: test_the_check_in_each_mode sees no warning.
    """
    entry = await _add(hass, llama.serve(ACTS, context=1024))

    check = await _check(hass, entry, **{CONF_TOOL_FORMAT: "auto"})

    summary, warning = check["description_placeholders"]["result"].split("\n\n")
    assert summary == "Native tool calls: the server returned a structured call."
    assert re.fullmatch(
        r"Context too small: the llama\.cpp server gives this model 1,024 tokens,"
        r" but the agent's prompt takes about [\d,]+, and a typical turn \(300\)"
        r" and its answer \(up to 1,024\) bring a request to about [\d,]+: turns"
        r" will fail or lose the start of the prompt\. To fix it, start"
        r" llama-server with a larger context \(-c 8192; with --parallel N each"
        r" slot gets 1/N of it\), or turn on large-home mode in the agent's"
        r" options\.",
        warning,
    ), warning


async def test_the_check_stores_only_what_llama_cpp_accepts_with_tools(
    hass: HomeAssistant, ha_ready, llama: LlamaServers, caplog: pytest.LogCaptureFixture
) -> None:
    """Natively the grammar goes with the tools, which llama-server refuses
    ("Cannot use custom grammar constraints with tools."): never stored."""
    server = llama.serve(Recipe(reply=("Hello there, friend!",)))
    entry = await _add(hass, server)

    result = await _check(
        hass,
        entry,
        **{CONF_TOOL_FORMAT: "auto", CONF_TEMPERATURE: 0.0, CONF_MAX_TOKENS: 32},
    )

    summary = result["description_placeholders"]["constraints"]
    assert summary.split("; ")[:2] == [
        "tool_choice: cut off at 32 tokens",
        "grammar: refused",
    ]
    data = await _save(hass, entry, result)
    assert "grammar" not in data[CONF_CONSTRAINTS]
    caplog.set_level(logging.WARNING)
    await async_converse(hass, "hello")
    assert "refused" not in caplog.text


async def test_a_call_cut_off_at_the_token_limit_is_reported_as_cut_off(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    """The call's arguments need more tokens than the agent allows: llama-server
    ends with finish_reason "length" and a half-written structured call."""
    opening = f'\n{{"name": "{assist_tool("HassTurnOn")}", "arguments": {{"name": "'
    words = tuple(f"room{index} " for index in range(60))
    recipe = Recipe(reply=("<tool_call>", opening, *words, '"}}\n', "</tool_call>"))
    entry = await _add(hass, llama.serve(recipe))

    result = await _check(
        hass,
        entry,
        **{CONF_TOOL_FORMAT: "auto", CONF_TEMPERATURE: 0.0, CONF_MAX_TOKENS: 40},
    )

    assert result["description_placeholders"]["result"] == (
        "Cut off: the reply reached the agent's token limit (Maximum tokens in an"
        " answer: 40) before a complete tool call. Raise it and run the check"
        " again."
    )
    assert result["description_placeholders"]["constraints"].startswith(
        "tool_choice: cut off at 40 tokens"
    )


async def test_the_check_gives_the_same_verdict_twice(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    """A model that calls or chats nearly as often at llama-server's default
    temperature (0.8): at the agent's own (0 here) every check agrees."""
    recipe = Recipe(reply=CALL, after_tool=(DONE,), or_reply=("Hello there!",))
    entry = await _add(hass, llama.serve(recipe))
    options = {CONF_TOOL_FORMAT: "auto", CONF_TEMPERATURE: 0.0, CONF_MAX_TOKENS: 64}

    verdicts = set()
    for _ in range(4):
        result = await _check(hass, entry, **options)
        data = await _save(hass, entry, result, **{CONF_TOOL_CHOICE: "auto"})
        placeholders = result["description_placeholders"]
        verdicts.add(
            (
                placeholders["result"],
                placeholders["constraints"],
                *data[CONF_CONSTRAINTS],
            )
        )

    assert verdicts == {
        (
            "Native tool calls: the server returned a structured call.",
            "tool_choice: honoured",
            "tool_choice",
        )
    }


async def test_the_check_gives_a_model_that_talks_first_room_for_its_call(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    """150 tokens of chat before the call: more than the 128 the check once
    allowed, well within the agent's limit."""
    chat = tuple(f"well{index} " for index in range(150))
    entry = await _add(hass, llama.serve(Recipe(reply=(*chat, *CALL))))

    result = await _check(
        hass,
        entry,
        **{CONF_TOOL_FORMAT: "auto", CONF_TEMPERATURE: 0.0, CONF_MAX_TOKENS: 256},
    )

    assert result["description_placeholders"]["result"] == (
        "Native tool calls: the server returned a structured call."
    )
    assert result["description_placeholders"]["constraints"] == "tool_choice: honoured"


# -- connecting ----------------------------------------------------------------


async def test_adding_the_server_lists_its_model_and_checks_the_key(
    hass: HomeAssistant, ha_ready, llama: LlamaServers
) -> None:
    """llama-server lists the model file's path as its id; a wrong key is
    invalid_auth on the form, and a key that stops working asks for a new one."""
    server = llama.serve(ACTS, api_key="sk-right")
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_SERVER_KIND: "llamacpp"}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: server.base_url, CONF_API_KEY: "sk-wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_BASE_URL: server.base_url, CONF_API_KEY: "sk-right"}
    )
    assert result["step_id"] == "agent"
    (model,) = [k for k in result["data_schema"].schema if k == CONF_MODEL]
    assert model.description["suggested_value"] == str(server.model)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: str(server.model)}
    )
    assert result["step_id"] == "check"
    assert result["description_placeholders"]["result"] == (
        "Native tool calls: the server returned a structured call."
    )
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    await hass.async_block_till_done()
    entry = result["result"]
    agent = next(iter(entry.subentries.values()))
    assert agent.data[CONF_MODEL] == str(server.model)
    assert speech(await async_converse(hass, "turn on the kitchen light")) == DONE
    assert _light(hass) == "on"

    hass.config_entries.async_update_entry(
        entry, data={**entry.data, CONF_API_KEY: "x"}
    )
    await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    (flow,) = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert flow["context"]["source"] == "reauth"
    result = await hass.config_entries.flow.async_configure(
        flow["flow_id"], {CONF_API_KEY: "sk-right"}
    )
    assert result["reason"] == "reauth_successful"
    await hass.async_block_till_done()
    assert entry.state is config_entries.ConfigEntryState.LOADED
