"""Toolbelt's forms in the user's language: what HA serves the frontend for them."""

from __future__ import annotations

from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.helpers import translation
import pytest

from custom_components.toolbelt.const import DOMAIN


@pytest.mark.parametrize(
    ("language", "title", "other_server"),
    [
        ("en", "Model server", "Other OpenAI-compatible server"),
        ("de", "Modellserver", "Anderer OpenAI-kompatibler Server"),
        ("fr", "Serveur de modèles", "Autre serveur compatible OpenAI"),
        ("es", "Servidor de modelos", "Otro servidor compatible con OpenAI"),
        ("nl", "Modelserver", "Andere OpenAI-compatibele server"),
        ("it", "Server del modello", "Altro server compatibile con OpenAI"),
        ("pl", "Serwer modeli", "Inny serwer zgodny z OpenAI"),
    ],
)
async def test_the_first_form_is_in_the_users_language(
    hass: HomeAssistant, ha_ready, language: str, title: str, other_server: str
) -> None:
    """Adding Toolbelt in a German (French, ...) HA shows the form in German."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    step = f"component.{DOMAIN}.config.step.{result['step_id']}"
    config = await translation.async_get_translations(
        hass, language, "config", [DOMAIN]
    )
    assert config[f"{step}.title"] == title
    labels = await translation.async_get_translations(
        hass, language, "selector", [DOMAIN]
    )
    assert labels[f"component.{DOMAIN}.selector.server_kind.options.other"] == (
        other_server
    )
