"""An AI task's attachments as OpenAI ``image_url`` content: checked, bounded, read.

HA resolves an attachment to a local file with a MIME type (a camera snapshot,
a media file). Images go to the model as base64 data URLs, which every
OpenAI-compatible server that takes images reads; the model must be one that
sees (a vision model; llama.cpp needs its ``--mmproj``). Other files are
refused before any request, saying which types are accepted. The files are
read in the executor, never on the event loop, and together may not exceed
``MAX_ATTACHMENT_BYTES``.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError

from ..const import DOMAIN

# The image types OpenAI accepts, which local servers decode too.
IMAGE_TYPES = {
    "image/jpeg": "JPEG",
    "image/png": "PNG",
    "image/webp": "WebP",
    "image/gif": "GIF",
}
# All of a task's attachments together, as files (base64 adds a third).
MAX_ATTACHMENT_BYTES = 20_000_000

type ImageParts = dict[Path, dict[str, Any]]


class _TooLarge(Exception):
    def __init__(self, size: int) -> None:
        self.size = size


async def async_image_parts(
    hass: HomeAssistant, attachments: Sequence[conversation.Attachment]
) -> ImageParts:
    """Each attachment's ``image_url`` content part, by its file's path.

    Raises ``ServiceValidationError`` for a file that is not an image or
    attachments that are too large, ``HomeAssistantError`` for a file that
    cannot be read.
    """
    typed = [(attachment, _image_type(attachment)) for attachment in attachments]
    if not typed:
        return {}
    try:
        contents = await hass.async_add_executor_job(
            _read_files, [attachment.path for attachment, _ in typed]
        )
    except _TooLarge as err:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="attachments_too_large",
            translation_placeholders={
                "size": f"{err.size / 1e6:.1f}",
                "limit": f"{MAX_ATTACHMENT_BYTES / 1e6:.0f}",
            },
        ) from err
    except OSError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="attachment_unreadable",
            translation_placeholders={"error": err.strerror or str(err)},
        ) from err
    return {
        attachment.path: image_part(mime_type, data)
        for (attachment, mime_type), data in zip(typed, contents, strict=True)
    }


def image_part(mime_type: str, data: bytes) -> dict[str, Any]:
    """An OpenAI ``image_url`` content part holding the image as a data URL."""
    encoded = base64.b64encode(data).decode("ascii")
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{mime_type};base64,{encoded}"},
    }


def _image_type(attachment: conversation.Attachment) -> str:
    """The attachment's image MIME type; a file of another type is refused."""
    mime_type = attachment.mime_type.partition(";")[0].strip().lower()
    if mime_type == "image/jpg":
        mime_type = "image/jpeg"
    if mime_type not in IMAGE_TYPES:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="attachment_not_an_image",
            translation_placeholders={
                "attachment": attachment.media_content_id,
                "mime_type": attachment.mime_type,
                "accepted": ", ".join(IMAGE_TYPES.values()),
            },
        )
    return mime_type


def _read_files(paths: list[Path]) -> list[bytes]:
    """Read the files (in the executor), refusing them if together too large."""
    total = sum(path.stat().st_size for path in paths)
    if total > MAX_ATTACHMENT_BYTES:
        raise _TooLarge(total)
    contents: list[bytes] = []
    room = MAX_ATTACHMENT_BYTES
    for path in paths:
        with path.open("rb") as file:
            # A file that grew since stat() still stops at the limit.
            contents.append(file.read(room + 1))
        room -= len(contents[-1])
        if room < 0:
            raise _TooLarge(MAX_ATTACHMENT_BYTES - room)
    return contents
