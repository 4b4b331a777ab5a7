"""The dev instance's stub model server drives a real Toolbelt agent.

script/dev_stub_server.py is what a newcomer tries the UI with
(``TOOLBELT_STUB_SERVER=1 script/develop``): each of its calling models must
really switch a light through Toolbelt, in ``auto`` and in its own format, and
the agent check must tell the four apart.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
import sys
from types import SimpleNamespace

from homeassistant.core import HomeAssistant
import pytest
import pytest_asyncio

from custom_components.toolbelt.const import CONF_MODEL, CONF_TOOL_FORMAT
from tests.ha.conftest import async_add_toolbelt, async_converse, speech
from tests.local_server import StartServer

_spec = importlib.util.spec_from_file_location(
    "dev_stub_server",
    Path(__file__).parents[2] / "script" / "dev_stub_server.py",
)
assert _spec is not None
assert _spec.loader is not None
stub = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stub)


@pytest_asyncio.fixture
async def stub_url(local_server: StartServer) -> str:
    """The stub model server's base URL, as TOOLBELT_BASE_URL would be."""
    server = await local_server(stub.stub_app())
    return f"{server.url}/v1"


@pytest.mark.parametrize(
    ("model", "tool_format"),
    [
        ("stub-hermes", "auto"),
        ("stub-hermes", "hermes"),
        ("stub-react", "auto"),
        ("stub-react", "react"),
        ("stub-native", "auto"),
    ],
)
async def test_each_calling_model_switches_the_light(
    hass: HomeAssistant, ha_ready, stub_url: str, model: str, tool_format: str
) -> None:
    await async_add_toolbelt(
        hass,
        SimpleNamespace(base_url=stub_url),
        server_kind="other",
        model=model,
        tool_format=tool_format,
    )
    assert hass.states.get("light.kitchen_light").state == "off"
    result = await async_converse(hass, "turn on the kitchen light")
    assert hass.states.get("light.kitchen_light").state == "on"
    assert speech(result) == "Done."
    result = await async_converse(hass, "hello")
    assert speech(result) == stub.GREETING


@pytest.mark.parametrize(
    ("model", "verdict"),
    [
        ("stub-hermes", "Text tool calls"),
        ("stub-react", "Text tool calls"),
        ("stub-native", "Native tool calls"),
        ("stub-chat", "No tool call"),
    ],
)
async def test_the_check_tells_the_models_apart(
    hass: HomeAssistant, ha_ready, stub_url: str, model: str, verdict: str
) -> None:
    entry = await async_add_toolbelt(
        hass, SimpleNamespace(base_url=stub_url), server_kind="other"
    )
    (agent,) = entry.subentries.values()
    result = await entry.start_subentry_reconfigure_flow(hass, agent.subentry_id)
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {CONF_MODEL: model, CONF_TOOL_FORMAT: "auto"}
    )
    assert result["step_id"] == "check"
    assert result["description_placeholders"]["model"] == model
    assert result["description_placeholders"]["result"].startswith(verdict)
