"""Several turns of one conversation: each turn is its own, on every HA version.

HA 2026.11 keeps one LLM API instance (and its tools) for a whole conversation
and only updates its ``llm_context``; 2026.10 and 2026.2 build one per turn.
Whatever belongs to a turn (its trace, its numbered references, who calls,
what the conversation has read) must follow the turn on both.
"""

from __future__ import annotations

from aiohttp import web
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)

from custom_components.toolbelt.tools.api import DATA_TOOLS
from custom_components.toolbelt.tools.const import CONF_FETCH_ALLOW_LIST
from tests.ha.test_personal_tools import add_toolbelt, converse, tool_result, unload
from tests.openai_server import OpenAIServer


async def test_three_turns_of_one_conversation_are_three_turns(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    hass_admin_user,
    hass_client,
    local_server,
) -> None:
    """Three traces; references start at [1] in each turn; a page read in turn 2
    still refuses a profile change in turn 3, which reads no page before it."""
    app = web.Application()
    for path, title in (("/tea", "Tea guide"), ("/soup", "Soup guide")):
        html = f"<html><head><title>{title}</title></head><body><p>{title} text.</p></body></html>"
        app.router.add_get(
            path, lambda _r, h=html: web.Response(text=h, content_type="text/html")
        )
    site = await local_server(app)
    entry = await add_toolbelt(
        hass, openai_server, **{CONF_FETCH_ALLOW_LIST: ["127.0.0.1/32"]}
    )
    user = hass_admin_user.id

    openai_server.reply_tool_calls(
        [{"name": "memory", "arguments": {"action": "store", "content": "Likes tea."}}]
    )
    openai_server.reply_text("Noted.")
    first = await converse(hass, "Remember that I like tea.", user)
    assert tool_result(openai_server, 1).startswith("Stored memory 1")

    openai_server.reply_tool_calls(
        [{"name": "web_fetch", "arguments": {"url": f"{site.url}/tea"}}]
    )
    openai_server.reply_text("Tea guide says so [1].")
    second = await converse(hass, "Read the tea guide.", user, first.conversation_id)
    assert second.conversation_id == first.conversation_id
    assert "[1] Tea guide" in tool_result(openai_server, 3)

    openai_server.reply_tool_calls(
        [
            {
                "name": "profile",
                "arguments": {"action": "set", "key": "drink", "value": "tea"},
            }
        ]
    )
    openai_server.reply_tool_calls(
        [{"name": "web_fetch", "arguments": {"url": f"{site.url}/soup"}}]
    )
    openai_server.reply_text("Soup guide [1].")
    third = await converse(
        hass,
        "Save tea as my drink, then read the soup guide.",
        user,
        first.conversation_id,
    )
    assert third.conversation_id == first.conversation_id
    refusal = tool_result(openai_server, 5)
    assert refusal.startswith("ERROR: ")
    assert (
        "cannot be changed in a conversation that read web pages, search results,"
        " stored memories or past conversations"
    ) in refusal
    assert await hass.data[DATA_TOOLS].stores().profiles.get(user) == {}
    # A new turn numbers its sources from 1 again.
    assert "[1] Soup guide" in tool_result(openai_server, 6)

    diag = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    turns = diag["tools"]["recent_turns"]
    assert [[(c["tool"], c["ok"]) for c in t["calls"]] for t in turns] == [
        [("memory", True)],
        [("web_fetch", True)],
        [("profile", False), ("web_fetch", True)],
    ]
    assert [[r["number"] for r in t["references"]] for t in turns] == [[], [1], [1]]
    assert [r["title"] for r in turns[2]["references"]] == ["Soup guide"]
    await unload(hass, entry)
