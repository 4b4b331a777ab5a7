"""Every tool the system prompt or a tool description names is a tool the model has.

HA writes tool names into its prompts (``Use intent__HassTurnOn to lock``)
before a merged API renames the tools: HA 2026.10 prefixes every tool of a
merged API (``assist__intent__HassTurnOn``), HA 2026.11 only names two APIs
share, and lists each API's tools in its heading. Toolbelt's own prompt lines
(``Use `memory` ...``), its device rules and the dialects' catalogs name tools
too. Each combination of APIs, in native and text formats, on this HA.
"""

from __future__ import annotations

import json
import re

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm
import pytest

from custom_components.toolbelt.const import CONF_HANDOFF_TARGETS
from custom_components.toolbelt.tools.const import API_ID
from tests.ha.conftest import agent_id, async_add_toolbelt, bare
from tests.openai_server import OpenAIServer

COMBOS: dict[str, list[str]] = {
    "assist": [llm.LLM_API_ASSIST],
    "toolbelt": [API_ID],
    "both": [llm.LLM_API_ASSIST, API_ID],
}
# HA 2026.11's "Home Assistant" API (administrators only).
if home_assistant_api := getattr(llm, "LLM_API_HOME_ASSISTANT", None):
    COMBOS["all"] = [llm.LLM_API_ASSIST, API_ID, home_assistant_api]

# Toolbelt's own tools, whatever a merged API calls them.
OWN_TOOLS = {"memory", "history", "profile", "self", "search", "web_fetch", "model"}
OWN_TOOLS |= {"time", "handoff"}

_HEADING = re.compile(
    r'^Follow these instructions for tools from "[^"]+" \((.*)\):$', re.M
)
_QUOTED = re.compile(r"`([\w.-]+)`")
_CALLED = re.compile(r"\bthe (\w+) tool\b")
_WORD = re.compile(r"[\w-]+")


def named_tools(text: str, known: set[str]) -> set[str]:
    """What in ``text`` names a tool: quoted words, "the X tool", HA's listed
    tools, namespaced names, intent-style names, and known tools' plain names."""
    found = set(_QUOTED.findall(text)) | set(_CALLED.findall(text))
    for listed in _HEADING.findall(text):
        found |= {name.strip() for name in listed.split(",")}
    found.update(
        word
        for word in _WORD.findall(text)
        if "__" in word
        or re.fullmatch(r"(?:Hass|Get)[A-Z]\w*", word)
        or ("_" in word and bare(word) in known)
    )
    return found


def catalog_names(system: str) -> set[str]:
    """The tools a text format's catalog lists, one per line."""
    names = set(re.findall(r"^- ([^\s(]+)\(", system, re.M))
    for line in system.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            item = item.get("function", item)
            if isinstance(item.get("name"), str):
                names.add(item["name"])
    return names


@pytest.mark.parametrize("handoff", [False, True], ids=["alone", "handoff"])
@pytest.mark.parametrize("tool_format", ["auto", "hermes", "react"])
@pytest.mark.parametrize("combo", sorted(COMBOS))
async def test_every_tool_named_is_a_tool_sent(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    combo: str,
    tool_format: str,
    handoff: bool,
) -> None:
    entry = await async_add_toolbelt(
        hass,
        openai_server,
        tools={},
        llm_hass_api=COMBOS[combo],
        tool_format=tool_format,
        **{CONF_HANDOFF_TARGETS: ["conversation.home_assistant"]} if handoff else {},
    )
    admin = await hass.auth.async_create_user("Admin", group_ids=["system-admin"])
    openai_server.reply_text("Hello.")
    try:
        await conversation.async_converse(
            hass, "hi", None, Context(user_id=admin.id), agent_id=agent_id(hass)
        )
    finally:
        # The memory database's thread ends with the entry.
        assert await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()

    request = openai_server.requests[0]
    system = request.messages[0]["content"]
    if tool_format == "auto":
        sent = {tool["function"]["name"] for tool in request.tools}
        descriptions = [tool["function"]["description"] for tool in request.tools]
    else:
        assert request.tools is None
        sent = catalog_names(system)
        descriptions = []
    known = {bare(name) for name in sent} | OWN_TOOLS
    assert sent
    assert ("handoff" in sent) is handoff
    assert named_tools(system, known) <= sent
    for text in descriptions:
        assert named_tools(text, known) <= sent, text
    if llm.LLM_API_ASSIST in COMBOS[combo]:
        # The cover rule names the turn-on tool as it is sent; the lock rule
        # is that tool's own description (in the catalog of a text format).
        turn_on = next(name for name in sent if bare(name) == "HassTurnOn")
        if any(bare(name) == "HassSetPosition" for name in sent):
            assert f"Covers: {turn_on} opens" in system
        else:  # no cover or valve exposed: no cover rule
            assert "Covers:" not in system
        assert "locks a lock" in (
            next(
                tool["function"]["description"]
                for tool in request.tools
                if tool["function"]["name"] == turn_on
            )
            if request.tools
            else system
        )
    if API_ID in COMBOS[combo]:
        memory = next(name for name in sent if bare(name) == "memory")
        assert f"Use `{memory}` to recall" in system
        # Prose that only looks like a name stays prose.
        assert "one short fact per memory" in system + "".join(descriptions)
