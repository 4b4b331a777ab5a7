"""Lone surrogates: text a server can send but nothing can store or send back.

A JSON escape such as ``"\\ud800"`` decodes to a lone surrogate, which UTF-8
cannot encode: the next request, a SQLite write or a log line would fail, and
the failure would land far from its cause (after a tool already ran, blamed
on the server). So text is mended where it enters: each is replaced by U+FFFD.
"""

from __future__ import annotations

import re
from typing import Any

try:
    import orjson
except ImportError:  # the parser also runs without Home Assistant's packages
    orjson = None  # type: ignore[assignment]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def mend_surrogates(text: str) -> str:
    """The text with every lone surrogate replaced by U+FFFD (fast when none)."""
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


def mend_all(value: Any) -> Any:
    """``mend_surrogates`` on every string inside JSON-like data (keys too).

    Data with nothing to mend (nearly always) is returned as it is, found in
    one C call: orjson (when installed) refuses to write a lone surrogate, and
    ``repr`` writes one as a ``\\udXXX`` escape, so a ``repr`` without
    ``\\ud`` holds none. orjson is the faster of the two; what it does not
    write (an integer past 64 bits, a key that is not a string) asks ``repr``.
    """
    if orjson is not None:
        try:
            orjson.dumps(value)
        except TypeError:  # a lone surrogate, or data orjson does not write
            pass
        else:
            return value
    if "\\ud" not in repr(value):
        return value
    if isinstance(value, str):
        return mend_surrogates(value)
    if isinstance(value, list):
        return [mend_all(item) for item in value]
    if isinstance(value, dict):
        return {mend_all(key): mend_all(item) for key, item in value.items()}
    return value
