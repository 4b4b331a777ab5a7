"""A chain of dialects that acts as one dialect (``auto`` and model presets)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, override

from .dialects.base import Dialect
from .guard import Parse, parse_failed, unguarded
from .model import ParseResult
from .reading.escapes import unescape_markers
from .reading.literals import Literals, literals
from .reading.reply import close_reply, current_reply, open_reply
from .text.sanitize import clean, remove_words

if TYPE_CHECKING:
    from .catalog import Catalog
    from .model import ToolCall

__all__ = ["ChainDialect"]


@dataclass(frozen=True, slots=True)
class _Member:
    """A text member and what the chain knows of it before reading a reply."""

    dialect: Dialect
    # Its parse without the guard: the chain keeps the guard's promise once
    # per reply (length, json5 budget) and catches each member's failure.
    parse: Parse
    # Its trigger bits (over every pass up to its own); 0 (no triggers)
    # means "always try".
    bits: int
    # Whether it has its own ``may_match``, asked once its triggers are in.
    custom: bool


class ChainDialect(Dialect):
    """Try member dialects in order on the raw reply; the first with calls wins.

    When no member finds a call but one found call-shaped markup it refused
    (unknown tool, truncated), that result is returned so the markup does not
    reach the content. Otherwise the content is the reply with reasoning and
    every member's scaffolding removed. Prompt, stops and result formatting
    come from the first text (non-structured) member.
    """

    def __init__(
        self,
        dialects: Sequence[Dialect],
        name: str = "chain",
        later: Collection[str] = (),
    ) -> None:
        """``later``: names of members tried only when the members before
        them have not settled the reply (``auto``'s marker-less forms): when
        the chain's last members are all among them, their triggers (the
        commonest words and signs) are looked for only when a reply gets that
        far, i.e. when no earlier member read calls that leave no other
        format's markup behind.
        """
        if not dialects:
            raise ValueError("a dialect chain needs at least one dialect")
        self.dialects: tuple[Dialect, ...] = tuple(dialects)
        self.name = name  # type: ignore[misc]
        self.markers = tuple(  # type: ignore[misc]
            dict.fromkeys(m for d in self.dialects for m in d.markers)
        )
        self.start_markers = tuple(  # type: ignore[misc]
            dict.fromkeys(m for d in self.dialects for m in d.start_markers)
        )
        self.dropped = tuple(  # type: ignore[misc]
            dict.fromkeys(m for d in self.dialects for m in d.dropped)
        )
        self.structured = all(d.structured for d in self.dialects)  # type: ignore[misc]
        self._text = next(
            (d for d in self.dialects if not d.structured), self.dialects[0]
        )
        self._markup = literals(self.markers)
        self._dropped = literals(self.dropped)
        self._passes = _passes(
            [d for d in self.dialects if not d.structured], frozenset(later)
        )
        self._sanitizers, self._cleans = _sanitizers(self.dialects)

    def __repr__(self) -> str:
        return f"ChainDialect({self.name!r}, {[d.name for d in self.dialects]})"

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return self._text.system_prompt(catalog)

    @override
    def stop_sequences(self) -> list[str]:
        return self._text.stop_sequences()

    @override
    def format_result(self, call: ToolCall, result: Any) -> str:
        return self._text.format_result(call, result)

    @override
    def may_match(self, text: str) -> bool:
        return any(d.may_match(text) for d in self.dialects)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        text = unescape_markers(text)
        result = self._probe(text, catalog)
        if result is not None:
            if result.content and self._dropped.any_in(result.content):
                # Every member's format words, whichever member read the reply.
                result.content = remove_words(result.content, self.dropped)
            return result
        content, reasoning = clean(text, self.sanitize)
        # Positional: a dataclass called with keywords costs twice as much.
        return ParseResult([], content, reasoning)

    def _probe(self, text: str, catalog: Catalog) -> ParseResult | None:
        """The best member result with call markup, or None.

        Members only say whether they found calls (``reply.probing``) and
        share their scans of the reply (``reply.memo``); the winner's content
        is built in full.
        """
        reply = current_reply()  # the guard's, around this parse
        if reply is None:  # called unguarded: keep the guard's promise here
            token = open_reply()
            try:
                return self._probe(text, catalog)
            finally:
                close_reply(token)
        was_probing, memo = reply.probing, reply.memo
        reply.probing = True
        if memo is None:  # a chain inside a chain shares the outer memo
            reply.memo = {}
        try:
            return self._best(text, catalog)
        finally:
            reply.probing, reply.memo = was_probing, memo

    def _best(self, text: str, catalog: Catalog) -> ParseResult | None:
        refused: ParseResult | None = None
        refusers: list[_Member] = []
        best: ParseResult | None = None
        empty: set[str] = set()  # members that read the reply and found nothing
        present = 0
        for step in self._passes:
            present |= step.triggers.mask(text) << step.shift
            for member in step.candidates(present):
                dialect = member.dialect
                if dialect.subsumed_by and not empty.isdisjoint(dialect.subsumed_by):
                    continue
                if member.custom and not dialect.may_match(text):
                    continue
                try:
                    result = member.parse(dialect, text, catalog)
                except Exception as err:  # the guard's promise, kept here
                    result = parse_failed(dialect, text, err)
                if result.calls:
                    # Markup of another format left in the content means a
                    # second format is mixed in (or a call object was read out
                    # of another format's markup): let the others try; keep
                    # the fullest, and of two as full, the one that leaves no
                    # markup behind.
                    content = result.content
                    if not (content and self._markup.any_in(content)) and (
                        best is None or len(result.calls) >= len(best.calls)
                    ):
                        return result
                    if best is None or len(result.calls) > len(best.calls):
                        best = result
                    continue
                # Refused calls, or call markup with no call (``functools[]``).
                if result.rejected or result.end is not None:
                    if refused is None:
                        refused = result
                    refusers.append(member)
                else:
                    empty.add(dialect.name)
        if best is not None:
            return best
        reply = current_reply()
        if refused is not None and reply is not None and reply.examples:
            # A member read a fence as an example of call syntax: what the
            # members before it refused there was that example, unread.
            return self._refused_again(text, catalog, refusers)
        return refused

    @staticmethod
    def _refused_again(
        text: str, catalog: Catalog, refusers: list[_Member]
    ) -> ParseResult | None:
        """The first refusal left once the example fences are known."""
        for member in refusers:
            try:
                result = member.parse(member.dialect, text, catalog)
            except Exception as err:  # the guard's promise, kept here
                result = parse_failed(member.dialect, text, err)
            if result.rejected or result.end is not None:
                return result
        return None

    @override
    def sanitize(self, text: str) -> str:
        cleans = self._cleans
        if cleans is None:  # a member may change any text
            for _, step in self._sanitizers:
                text = step(text)
            return text
        present = cleans.mask(text)
        if not present:
            return text  # nothing any member cleans (most answers)
        for bits, step in self._sanitizers:
            # A step without its strings in the text leaves it as it is.
            if bits & present:
                cleaned = step(text)
                if cleaned is not text:  # what is left for the next steps
                    text = cleaned
                    present = cleans.mask(text)
        return text


class _Pass:
    """Members whose triggers are looked for together, and those triggers."""

    __slots__ = ("_by_mask", "members", "shift", "triggers")

    def __init__(
        self, members: tuple[_Member, ...], triggers: Literals, shift: int
    ) -> None:
        self.members = members
        # The triggers no earlier pass looks for; their bits start at ``shift``.
        self.triggers = triggers
        self.shift = shift
        self._by_mask: dict[int, tuple[_Member, ...]] = {}

    def candidates(self, present: int) -> tuple[_Member, ...]:
        """The members to try, in order, for a reply holding these triggers."""
        members = self._by_mask.get(present)
        if members is None:
            members = tuple(m for m in self.members if not m.bits or m.bits & present)
            if len(self._by_mask) < 1024:
                self._by_mask[present] = members
        return members


def _passes(dialects: list[Dialect], later: frozenset[str]) -> tuple[_Pass, ...]:
    """The text members in one pass, or two: the trailing run of ``later``
    members in the second (with the triggers the first does not look for)."""
    split = len(dialects)
    while split > 0 and dialects[split - 1].name in later:
        split -= 1
    groups = [group for group in (dialects[:split], dialects[split:]) if group]
    passes: list[_Pass] = []
    known: dict[str, int] = {}  # every trigger so far, and its bit
    for group in groups:
        shift = sum(len(step.triggers.words) for step in passes)
        triggers = literals(t for d in group for t in d.triggers if t not in known)
        known.update((word, triggers.bits([word]) << shift) for word in triggers.words)
        members = tuple(
            _Member(
                dialect=d,
                parse=unguarded(type(d).parse),
                bits=sum(known[t] for t in dict.fromkeys(d.triggers)),
                custom=type(d).may_match is not Dialect.may_match,
            )
            for d in group
        )
        passes.append(_Pass(members, triggers, shift))
    return tuple(passes)


def _sanitizers(
    dialects: Sequence[Dialect],
) -> tuple[tuple[tuple[int, Callable[[str], str]], ...], Literals | None]:
    """Every member's cleanup, in member order, each with the mask of the
    strings it cleans, and those strings (None when a member does not say
    what it cleans: then every step runs on every text).

    The members that only drop words (``Dialect.sanitize`` as it is) run as
    one pass per stretch of them, not one call each: the chain cleans every
    reply without a call. A step whose strings are not in a text leaves it
    as it is (``test_sanitize_keeps_a_text_without_what_it_cleans``), so it
    is skipped.
    """
    steps: list[tuple[tuple[str, ...], Callable[[str], str]]] = []
    words: dict[str, None] = {}
    for dialect in dialects:
        if type(dialect).sanitize is Dialect.sanitize:
            words.update(dict.fromkeys(dialect.dropped))
            continue
        if words:
            steps.append((tuple(words), partial(remove_words, words=tuple(words))))
            words = {}
        steps.append((dialect.cleans, dialect.sanitize))
    if words:
        steps.append((tuple(words), partial(remove_words, words=tuple(words))))
    if not all(cleaned for cleaned, _ in steps):
        return tuple((0, step) for _, step in steps), None
    cleans = literals(word for cleaned, _ in steps for word in cleaned)
    return tuple((cleans.bits(cleaned), step) for cleaned, step in steps), cleans
