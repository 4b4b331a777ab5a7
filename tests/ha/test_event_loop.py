"""Nothing blocks HA's event loop during a turn: no import, no file read.

HA's own detector (``homeassistant.block_async_io``) is on in production and
skips imports and file reads under tests; here it checks them too. Toolbelt's
modules are imported fresh by HA's loader (in its import executor), so a module
imported lazily on first use during a turn would be caught.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
import json
import logging
import sys

from homeassistant import block_async_io, config_entries
from homeassistant.core import HomeAssistant
from homeassistant.util import loop as loop_util
import pytest

from tests.ha.conftest import async_add_toolbelt, async_converse, speech
from tests.openai_server import OpenAIServer

PACKAGE = "custom_components.toolbelt"


@pytest.fixture
def fresh_toolbelt() -> Iterator[None]:
    """Forget Toolbelt's modules so HA imports them anew; restore them after."""
    saved = {
        name: module
        for name, module in sys.modules.items()
        if name == PACKAGE or name.startswith(f"{PACKAGE}.")
    }
    parent = sys.modules["custom_components"]
    # HA keeps the config flow class it registered: the fresh module's must not
    # outlive this test, or later tests mix two copies of every class.
    handler = config_entries.HANDLERS.get("toolbelt")
    for name in saved:
        del sys.modules[name]
    yield
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]
    sys.modules.update(saved)
    parent.toolbelt = saved[PACKAGE]
    if handler is not None:
        config_entries.HANDLERS["toolbelt"] = handler
    else:
        config_entries.HANDLERS.pop("toolbelt", None)


@contextmanager
def blocking_calls_reported(caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """HA's blocking-call detection as in production, imports and file reads too.

    Yields the list the detections land in once the block ends.
    """
    found: list[str] = []
    caplog.set_level(logging.DEBUG, logger="homeassistant.util.loop")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(block_async_io, "_IN_TESTS", False)
        patch.setattr(loop_util, "_PREVIOUSLY_REPORTED", set())
        block_async_io.enable()
        try:
            yield found
        finally:
            calls = block_async_io._BLOCKED_CALLS.calls
            for blocked in calls:
                setattr(blocked.object, blocked.function, blocked.original_func)
            calls.clear()
    found.extend(
        r.getMessage() for r in caplog.records if "blocking call" in r.getMessage()
    )


@pytest.mark.parametrize("tool_format", ["auto", "react"])
async def test_turns_do_not_block_the_event_loop(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    fresh_toolbelt: None,
    caplog: pytest.LogCaptureFixture,
    tool_format: str,
) -> None:
    """Setup and two turns (a text call, every dialect tried) report nothing."""
    await async_add_toolbelt(hass, openai_server, tool_format=tool_format)
    assert PACKAGE + ".toolcalls.registry" in sys.modules
    with blocking_calls_reported(caplog) as blocking:
        call = {"name": "HassTurnOn", "arguments": {"name": "Kitchen light"}}
        if tool_format == "react":
            openai_server.reply_text(
                "Action: HassTurnOn\nAction Input: " + json.dumps(call["arguments"])
            )
        else:
            openai_server.reply_text(f"<tool_call>{json.dumps(call)}</tool_call>")
        openai_server.reply_text("Final Answer: It is on.")
        result = await async_converse(hass, "turn on the kitchen light")
        openai_server.reply_text("Nothing else.")
        await async_converse(hass, "anything else?", result.conversation_id)

    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == "It is on."
    assert blocking == []


async def test_opening_the_agent_forms_does_not_block_the_event_loop(
    hass: HomeAssistant,
    ha_ready,
    openai_server: OpenAIServer,
    fresh_toolbelt: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The tool-call format list is ready when the form opens: no import then."""
    entry = await async_add_toolbelt(hass, openai_server)
    (subentry,) = entry.subentries.values()
    with blocking_calls_reported(caplog) as blocking:
        options = await entry.start_subentry_reconfigure_flow(
            hass, subentry.subentry_id
        )
        new_agent = await hass.config_entries.subentries.async_init(
            (entry.entry_id, "conversation"), context={"source": "user"}
        )

    assert options["step_id"] == "init"
    assert new_agent["step_id"] == "init"
    assert blocking == []
