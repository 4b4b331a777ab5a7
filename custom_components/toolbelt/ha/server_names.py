"""How a model server is named to people, and where its credentials may appear.

Three audiences, three names. Speech names the server kind ("Sorry, the
llama.cpp server did not answer in time.", in the user's language: spoken.py):
an address read aloud helps no one. The kind's names are translations
(strings.json); what is only ever English (the log, an error's text, the
device's manufacturer) reads them from translations/en.json.
Titles name the kind and the host ("llama.cpp on 192.168.1.20"). Logs add the
address. None of them, nor a form, ever shows a ``user:password@`` from the base
URL: the credentials leave the URL before it goes anywhere else.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
import json
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from ..backend.servers import ServerKind
from .settings import server_settings

# Read at import, which HA runs in its executor.
_ENGLISH: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "translations" / "en.json").read_text(encoding="utf-8")
)

HIDDEN_PASSWORD = "********"
"""What a form shows instead of the password in a base URL."""


def netloc(parts: SplitResult, userinfo: str = "") -> str:
    """host[:port] (IPv6 bracketed) after ``userinfo``; never the URL's own credentials."""
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{userinfo}{host}{port}"


def _parts(url: str) -> SplitResult | None:
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return None
    return parts if parts.hostname else None


def address(url: str) -> str:
    """host[:port] of a base URL, without credentials: for titles and logs."""
    parts = _parts(url)
    return netloc(parts) if parts else "the configured address"


def without_credentials(url: str) -> str:
    """The base URL with any ``user:password@`` removed."""
    parts = _parts(url)
    if parts is None or not (parts.username or parts.password):
        return url
    return urlunsplit(parts._replace(netloc=netloc(parts)))


def basic_auth_header(url: str) -> str | None:
    """The ``Authorization`` value for credentials in a base URL, if it has any.

    A reverse proxy in front of a model server may want HTTP basic auth; the
    credentials travel in this header instead of in a URL that logs may print.
    """
    parts = _parts(url)
    if parts is None or parts.username is None:
        return None
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def url_for_form(url: str) -> str:
    """The base URL as a form may show it: the password replaced by asterisks."""
    parts = _parts(url)
    if parts is None or not parts.password:
        return url
    user = parts.username or ""
    return urlunsplit(
        parts._replace(netloc=netloc(parts, f"{user}:{HIDDEN_PASSWORD}@"))
    )


def url_from_form(submitted: str, stored: str) -> str:
    """Put the stored password back where the form showed asterisks.

    Only for the same server: a stored password never goes to another host.
    """
    parts, old = _parts(submitted), _parts(stored)
    if parts is None or old is None or parts.password != HIDDEN_PASSWORD:
        return submitted
    if (parts.scheme, parts.hostname, parts.port) != (
        old.scheme,
        old.hostname,
        old.port,
    ):
        return urlunsplit(
            parts._replace(netloc=netloc(parts, f"{parts.username or ''}@"))
        )
    userinfo = f"{parts.username or ''}:{old.password or ''}@"
    return urlunsplit(parts._replace(netloc=netloc(parts, userinfo)))


def kind_label(kind: ServerKind) -> str:
    """The kind as the picker lists it, in English ("llama.cpp server")."""
    return str(_ENGLISH["selector"]["server_kind"]["options"][kind.key])


def spoken_name(kind: ServerKind) -> str:
    """The kind in an English sentence ("the llama.cpp server", "Ollama").

    Speech says it in the conversation's language (``Phrases.server_name``).
    """
    return str(_ENGLISH["exceptions"][f"server_name_{kind.key}"]["message"])


def default_title(data: Mapping[str, Any]) -> str:
    """A readable entry title: "llama.cpp on 192.168.1.20", or just "OpenAI"."""
    server = server_settings(data)
    kind, url = server.kind, server.base_url
    if kind.hosted and address(url) == address(kind.default_base_url):
        return kind.short
    return f"{kind.short} on {address(url)}"
