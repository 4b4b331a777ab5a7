"""The dialect interface: one wire format of tool calls, in one file.

A dialect knows how to ask a model for calls in its format (system prompt, stop
sequences), how to read them back (parse), how to hand results back in fallback
mode, and how to clean its markup out of a final answer.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, ClassVar

from ..guard import guard_parse
from ..reading.calls import reply_start
from ..text.sanitize import remove_words

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall
    from ..reading.openers import InlineOpener


# A list whose first item is a word (``[HassTurnOn(...)]``, ``[see below]``):
# read as JSON, that item is no call object, so the list is no call list.
_WORD_LIST = re.compile(r"\[\s*[A-Za-z_]")


def may_open_call_list(text: str) -> bool:
    """Whether the reply may start with a JSON list of calls (or an empty one).

    For a ``may_match``: a Python call list is no JSON call list, so JSON
    dialects need not read it.
    """
    start = reply_start(text)
    return text.startswith("[", start) and _WORD_LIST.match(text, start) is None


class Dialect:
    """Base class; subclasses set ``name`` and ``markers`` and implement ``parse``."""

    name: ClassVar[str] = ""
    # Literal substrings that can only start a call in this format. The streaming
    # detector holds text as soon as a suffix of the stream could begin one of them,
    # and the cross-format fallback uses them to spot a leaked format.
    markers: ClassVar[tuple[str, ...]] = ()
    # Call starts without a marker (``{``, ``[``, ``Thought:``, a bare name...)
    # that only count at the start of the reply; the streaming detector holds
    # on them there and nowhere else.
    start_markers: ClassVar[tuple[str, ...]] = ()
    # Marker-less call openings the parse reads anywhere in prose (a ``[f(``
    # list, a ``{"name":`` object; ``toolcalls/reading/openers.py``): the streaming
    # detector holds from wherever one may begin.
    inline_openers: ClassVar[tuple[InlineOpener, ...]] = ()
    # Cheap pre-filter for chains: parse() can only find something when one of
    # these substrings is in the text. Empty means "always try". A chain finds
    # every member's triggers in one scan of the reply and asks a member's own
    # ``may_match`` (the precise check) only when one of its triggers is in it.
    triggers: ClassVar[tuple[str, ...]] = ()
    # True when calls arrive as structured tool_calls rather than text.
    structured: ClassVar[bool] = False
    # True when the format's prompt asks for a thought before the call (ReAct):
    # prose before a scratchpad label is that thought, so the streaming
    # detector holds a reply's leading text until a label or the end decides.
    thought_first: ClassVar[bool] = False
    # Words of the format that are neither content nor calls (answer markers,
    # wrapper tags): the streaming detector drops them, ``sanitize`` removes them.
    dropped: ClassVar[tuple[str, ...]] = ()
    # For a dialect with its own ``sanitize``: strings without which it
    # returns a text unchanged, so a chain skips it on a text holding none.
    # Empty means "may change any text" (``Dialect.sanitize`` needs none:
    # ``dropped`` says what it removes).
    cleans: ClassVar[tuple[str, ...]] = ()
    # Dialects that read everything this one reads: when one of them read a
    # reply and found no call markup, this one finds none either, and a chain
    # skips it (``tests/toolcalls/test_dialect_contract.py`` checks the claim).
    subsumed_by: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap each ``parse`` so it never raises and never reads an over-long reply.

        See ``toolcalls.guard``; dialects and custom subclasses get it alike.
        """
        super().__init_subclass__(**kwargs)
        if "parse" in cls.__dict__:
            cls.parse = guard_parse(cls.__dict__["parse"])  # type: ignore[method-assign]

    def may_match(self, text: str) -> bool:
        """Fast check used by chains before the full ``parse``."""
        return not self.triggers or any(map(text.__contains__, self.triggers))

    def system_prompt(self, catalog: Catalog) -> str:
        """Instructions and the compact tool catalog for text dialects ("" if none)."""
        return ""

    def stop_sequences(self) -> list[str]:
        """Strings that end generation right after a call, before invented results."""
        return []

    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        """Turn one complete reply into calls plus user-visible text.

        Never raises in a subclass: see ``__init_subclass__``.
        """
        raise NotImplementedError

    def format_result(self, call: ToolCall, result: Any) -> str:
        """Render a tool result as text for a synthetic user message (fallback mode)."""
        body = (
            result
            if isinstance(result, str)
            else json.dumps(result, ensure_ascii=False)
        )
        return f"Result of {call.name}: {body}"

    def sanitize(self, text: str) -> str:
        """Remove this format's leftover scaffolding from a final answer."""
        return remove_words(text, self.dropped) if self.dropped else text
