"""The promise every ``Dialect.parse`` keeps: it returns, soon, whatever the text.

The loop parses on Home Assistant's event loop, so a parse must neither raise
nor run long on hostile input. ``Dialect`` wraps each subclass's ``parse`` with
``guard_parse``, which

- reads no reply longer than ``MAX_REPLY_CHARS`` for calls: such a reply is
  refused with a reason and its content is its first ``MAX_REPLY_CHARS``
  characters (no real turn comes near: a minute of generation is ~60k tokens);
- opens the reply's shared state (``reading/reply.py``: one json5 budget
  among everything read in the reply);
- turns any exception (a parser bug, ``RecursionError``, ``MemoryError``) into a
  refused call with the reason, so the turn goes on.

Every scan below it is linear, so the bound is also a bound on time. A chain
keeps the same promise for its members (``unguarded``, ``parse_failed``): its
own parse is guarded once per reply, each member's failure is caught alone.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Protocol

from .model import ParseResult, RejectedCall
from .reading.reply import close_reply, open_reply
from .text.sanitize import clean

if TYPE_CHECKING:
    from .catalog import Catalog
    from .dialects.base import Dialect

__all__ = ["MAX_REPLY_CHARS", "guard_parse", "parse_failed", "refused", "unguarded"]

_LOGGER = logging.getLogger(__name__)

# Read at call time, so a test or benchmark may lift it. A spoken answer with a
# call is a few hundred characters; 64,000 bounds the worst hostile reply's
# parse on the event loop to tens of milliseconds (bench/toolcalls_bench.py).
MAX_REPLY_CHARS = 64_000


class Parse(Protocol):
    """A dialect's ``parse`` as the class holds it, called with the dialect first."""

    def __call__(_, self: Dialect, text: str, catalog: Catalog) -> ParseResult: ...


def refused(text: str, reason: str, dialect: str | None, *, shown: int) -> ParseResult:
    """No calls, one refusal; the content is the first ``shown`` characters, cleaned."""
    try:
        content, reasoning = clean(text[:shown])
    except Exception:  # the fallback must not fail too
        content, reasoning = text[:shown], ""
    return ParseResult(
        content=content,
        reasoning=reasoning,
        dialect=dialect,
        rejected=[RejectedCall(name="", raw=text, reason=reason)],
    )


def parse_failed(dialect: Dialect, text: str, err: Exception) -> ParseResult:
    """What a parse that raised ``err`` answers: logged, and a refused call."""
    _LOGGER.warning(
        "The %s parser failed on a %d-character reply: %s: %.200s",
        dialect.name,
        len(text),
        type(err).__name__,
        err,
    )
    _LOGGER.debug("Parser failure", exc_info=True)
    reason = f"the reply could not be parsed ({type(err).__name__})"
    return refused(text, reason, dialect.name, shown=len(text))


def unguarded(parse: Parse) -> Parse:
    """The ``parse`` that ``guard_parse`` wrapped (itself when not wrapped).

    For a caller that keeps the promise itself: a chain checks the length and
    opens the json5 budget once per reply, and catches a member's failure
    with ``parse_failed``.
    """
    return parse.__wrapped__ if getattr(parse, "guarded", False) else parse  # type: ignore[attr-defined]


def guard_parse(parse: Parse) -> Parse:
    """``parse`` that honours the length limit and never raises."""
    if getattr(parse, "guarded", False):
        return parse

    @functools.wraps(parse)
    def guarded(self: Dialect, text: str, catalog: Catalog) -> ParseResult:
        limit = MAX_REPLY_CHARS
        if len(text) > limit:
            reason = (
                f"the reply is {len(text):,} characters; replies over {limit:,}"
                " are not read for tool calls"
            )
            return refused(text, reason, self.name, shown=limit)
        # Inline, not a ``with``: a nested parse (a dialect calling another)
        # shares the reply the outer one opened (the token is None then).
        token = open_reply()
        try:
            return parse(self, text, catalog)
        except Exception as err:  # a parser bug: refused, and the turn goes on
            return parse_failed(self, text, err)
        finally:
            if token is not None:
                close_reply(token)

    guarded.guarded = True  # type: ignore[attr-defined]
    return guarded
