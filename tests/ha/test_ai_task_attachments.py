"""AI Task attachments in real HA: files from HA's media source go to the model.

``ai_task.generate_data`` with ``attachments`` as an automation sends them: HA
resolves each to a local file, Toolbelt sends images as ``image_url`` data
URLs and refuses anything else before a request.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from homeassistant.components import ai_task
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.setup import async_setup_component
import pytest

from tests.ha.test_ai_task import PERSON, add_task
from tests.openai_server import OpenAIServer

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
SNAPSHOT = {
    "media_content_id": "media-source://media_source/local/porch.png",
    "media_content_type": "image/png",
}

# What real servers answer to an image for a model that cannot see.
LLAMACPP_NO_MMPROJ = (
    500,
    "image input is not supported - hint: if this is unexpected, you may need to"
    " provide the mmproj",
)
VLLM_TEXT_MODEL = (400, "test-model is not a multimodal model None")
OPENAI_TEXT_MODEL = (
    400,
    "Invalid content type. image_url is only supported by certain models.",
)
OLLAMA_TEXT_MODEL = (500, "this model is missing data required for image input")


async def look(
    hass: HomeAssistant, task: str, *attachments: dict[str, str], **data: Any
) -> Any:
    """``ai_task.generate_data`` about the porch with these attachments."""
    result = await ai_task.async_generate_data(
        hass,
        task_name="porch",
        entity_id=task,
        instructions="What is on the porch?",
        attachments=list(attachments),
        **data,
    )
    return result.data


def local(name: str) -> dict[str, str]:
    """An attachment from HA's local media folder."""
    return {"media_content_id": f"media-source://media_source/local/{name}"}


@pytest.fixture
async def media(ha_ready: HomeAssistant, tmp_path: Path) -> Path:
    """HA's local media folder with a camera-like snapshot and a note."""
    folder = tmp_path / "media"
    folder.mkdir()
    (folder / "porch.png").write_bytes(PNG)
    (folder / "note.txt").write_text("The porch light is on.")
    ha_ready.config.media_dirs = {"local": str(folder)}
    assert await async_setup_component(ha_ready, "media_source", {})
    return folder


async def test_an_image_goes_with_the_instructions(
    hass: HomeAssistant, media: Path, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    openai_server.reply_text("A parcel on the doormat.")

    assert await look(hass, task, SNAPSHOT) == "A parcel on the doormat."
    (request,) = openai_server.requests
    assert request.messages[-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is on the porch?"},
            {"type": "image_url", "image_url": {"url": PNG_URL}},
        ],
    }


async def test_a_structured_answer_from_an_image_keeps_it_on_the_retry(
    hass: HomeAssistant, media: Path, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    openai_server.reply_text("Ada, I think.")
    openai_server.reply_text('{"name": "Ada", "age": 36}')

    data = await look(hass, task, SNAPSHOT, structure=PERSON)

    assert data == {"name": "Ada", "age": 36}
    for request in openai_server.requests:
        (user,) = [m for m in request.messages if isinstance(m["content"], list)]
        assert user["content"][1] == {
            "type": "image_url",
            "image_url": {"url": PNG_URL},
        }


async def test_a_file_that_is_no_image_is_refused_before_any_request(
    hass: HomeAssistant, media: Path, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)

    with pytest.raises(ServiceValidationError) as caught:
        await look(hass, task, local("note.txt"))

    assert str(caught.value) == (
        "media-source://media_source/local/note.txt is a text/plain file;"
        " attachments must be images (JPEG, PNG, WebP, GIF)"
    )
    assert openai_server.requests == []


async def test_attachments_over_the_limit_are_refused_unread(
    hass: HomeAssistant, media: Path, openai_server: OpenAIServer
) -> None:
    with (media / "huge.jpg").open("wb") as file:
        file.truncate(21_000_000)  # sparse: its size is all we look at
    _entry, task = await add_task(hass, openai_server)

    with pytest.raises(ServiceValidationError) as caught:
        await look(hass, task, SNAPSHOT, local("huge.jpg"))

    assert str(caught.value) == (
        "The attachments come to 21.0 MB; at most 20 MB can be sent to the model"
    )
    assert openai_server.requests == []


@pytest.mark.parametrize(
    ("kind", "refusal"),
    [
        ("llamacpp", LLAMACPP_NO_MMPROJ),
        ("vllm", VLLM_TEXT_MODEL),
        ("openai", OPENAI_TEXT_MODEL),
        ("ollama", OLLAMA_TEXT_MODEL),
    ],
)
async def test_a_model_that_cannot_see_is_named(
    hass: HomeAssistant,
    media: Path,
    openai_server: OpenAIServer,
    kind: str,
    refusal: tuple[int, str],
) -> None:
    _entry, task = await add_task(hass, openai_server, server_kind=kind)
    openai_server.refuse_images(*refusal)

    with pytest.raises(HomeAssistantError) as caught:
        await look(hass, task, SNAPSHOT)

    spoken = {
        "llamacpp": "the llama.cpp server",
        "vllm": "the vLLM server",
        "openai": "OpenAI",
        "ollama": "Ollama",
    }[kind]
    assert str(caught.value) == (
        f"The model test-model does not accept images ({spoken} refused them)."
        " Pick a model that sees images; llama.cpp also needs its --mmproj file"
    )


async def test_another_failure_with_an_image_is_not_blamed_on_it(
    hass: HomeAssistant, media: Path, openai_server: OpenAIServer
) -> None:
    _entry, task = await add_task(hass, openai_server)
    openai_server.reply_error(400, message="model 'test-model' not found")

    with pytest.raises(HomeAssistantError) as caught:
        await look(hass, task, SNAPSHOT)

    assert str(caught.value) == (
        "Sorry, the llama.cpp server rejected the request: model 'test-model'"
        " not found."
    )


async def test_a_model_that_cannot_see_is_named_in_the_homes_language(
    hass: HomeAssistant, media: Path, openai_server: OpenAIServer
) -> None:
    hass.config.language = "de"
    _entry, task = await add_task(hass, openai_server, server_kind="llamacpp")
    openai_server.refuse_images(*LLAMACPP_NO_MMPROJ)

    with pytest.raises(HomeAssistantError) as caught:
        await look(hass, task, SNAPSHOT)

    assert str(caught.value) == (
        "Das Modell test-model nimmt keine Bilder an (der llama.cpp-Server hat sie"
        " abgelehnt). Wähle ein Modell, das Bilder sieht; llama.cpp braucht außerdem"
        " seine --mmproj-Datei"
    )
    assert caught.value.translation_key == "images_refused"
