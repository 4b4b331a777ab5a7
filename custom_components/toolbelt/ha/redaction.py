"""What diagnostics may show: no secret field, no credentials hidden in a URL.

Diagnostics get pasted into public bug reports. HA's ``async_redact_data``
matches exact key names, which misses ``mcp_token``, ``search_api_key`` and
whatever a later backend calls its secret, and it never looks inside values:
``https://user:pass@host/mcp?token=...`` would pass whole. Here a key is
secret by what its name says, and every URL-looking string loses its
userinfo and its query.
"""

from __future__ import annotations

from collections.abc import Mapping
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .server_names import netloc

REDACTED = "**REDACTED**"

# A key is secret if any word of its name says so: api_key, mcp_token, ...
_SECRET_WORDS = frozenset(
    {"key", "apikey", "token", "secret", "password", "passwd", "authorization"}
)
_WORD = re.compile(r"[a-z0-9]+")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+", re.IGNORECASE)


def is_secret_key(key: str) -> bool:
    """Whether a settings key names a secret (``search_api_key``: yes)."""
    return any(word in _SECRET_WORDS for word in _WORD.findall(key.lower()))


def redact_url(url: str) -> str:
    """The URL without its credentials and query: ``http://**REDACTED**@host/p?**REDACTED**``."""
    try:
        parts = urlsplit(url)
        userinfo = f"{REDACTED}@" if parts.username or parts.password else ""
        location = netloc(parts, userinfo)
    except ValueError:  # a port that is not a number
        return REDACTED
    query = REDACTED if parts.query else ""
    fragment = REDACTED if parts.fragment else ""
    return urlunsplit((parts.scheme, location, parts.path, query, fragment))


def redact_text(text: str) -> str:
    """Every URL inside a text redacted, the rest left as it is."""
    return _URL.sub(lambda match: redact_url(match.group(0)), text)


def redact(data: Any) -> Any:
    """A copy of data with secret keys masked and URLs redacted, at any depth."""
    if isinstance(data, Mapping):
        return {
            key: REDACTED
            if isinstance(key, str) and is_secret_key(key) and data[key]
            else redact(value)
            for key, value in data.items()
        }
    if isinstance(data, list | tuple | set | frozenset):
        return [redact(item) for item in data]
    if isinstance(data, str):
        return redact_text(data)
    return data
