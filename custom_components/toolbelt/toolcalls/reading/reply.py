"""What the readers of one reply share, held in one context variable.

A parse opens a ``Reply`` (the guard does, around every ``Dialect.parse``; a
nested parse shares the one already open) and closes it when it returns. It
holds:

- ``json5_left``: the json5 budget every ``loads_loose`` of the reply spends
  from (``jsonrepair``), so hundreds of small values that each need json5
  cannot add up to seconds;
- ``memo``: while a chain tries its members, their shared scans
  (``memo.memoized``); None otherwise;
- ``probing``: while a chain tries its members, a member's result without any
  call markup is dropped unread, so ``build_result`` skips its content;
- ``kept``: what a reply reads or cleans more than once, whoever asks
  (``memo.once_per_reply``: a JSON value, a cleaned content);
- ``examples``: the closed code fences (start, end) a reader found to show
  call syntax with placeholder names (``calls.build_result``): another
  format's reader that cannot read what such a fence holds refuses none of it.

Nothing of these is kept past the reply, so a benchmark that feeds one corpus
many times over measures what new replies cost (a process-wide cache of
cleaned texts made ``bench.cli_bench`` 3.5% cheaper than new replies are), and
no reply is given a read made under another's json5 budget.

One variable, set once per reply: each ``ContextVar.set`` copies the context,
and a reply used to set three.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any

__all__ = [
    "JSON5_LIMIT",
    "Reply",
    "close_reply",
    "current_reply",
    "open_reply",
    "probing",
]

# json5 is pure Python, ~45 µs per character on a list of numbers: one value,
# and one reply in all, may spend this much of it (~45 ms).
JSON5_LIMIT = 1_000


class Reply:
    """One reply's shared state (see the module docstring)."""

    __slots__ = ("examples", "json5_left", "kept", "memo", "probing")

    def __init__(self, json5_left: int) -> None:
        self.json5_left = json5_left
        self.memo: dict[Any, Any] | None = None
        self.probing = False
        self.kept: dict[Any, Any] = {}
        self.examples: set[tuple[int, int]] = set()


_REPLY: ContextVar[Reply | None] = ContextVar("toolcalls_reply", default=None)

# The open reply, or None outside any parse (a reader called on its own).
current_reply = _REPLY.get


def open_reply(json5_chars: int = JSON5_LIMIT) -> Token[Reply | None] | None:
    """Open a reply until ``close_reply``; inside an open one, nothing changes
    (the token is None then)."""
    return _REPLY.set(Reply(json5_chars)) if _REPLY.get() is None else None


def close_reply(token: Token[Reply | None] | None) -> None:
    """Close what ``open_reply`` opened (a no-op for a nested open)."""
    if token is not None:
        _REPLY.reset(token)


def probing() -> bool:
    """Whether a chain is trying its members on the open reply."""
    reply = _REPLY.get()
    return reply is not None and reply.probing
