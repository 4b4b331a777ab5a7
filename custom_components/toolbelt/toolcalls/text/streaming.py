"""Decide, chunk by chunk, which streamed text is safe to show.

No fixed character buffer: prose is released at once, except a tail that could
still be the beginning of a call marker. From a complete marker on, the text is
held (the loop parses the full reply). Formats without a marker (bare JSON,
arrays, pythonic lists, ReAct labels) count at the very start of the reply; the
openings a parser also reads mid-text (``openers.py``: ``[HassTurnOn(``,
``{"name":``) hold from wherever they may begin, at most ``_INLINE_MAX``
characters while undecided, and the rest of the reply once complete.
Reasoning blocks (the one list in ``reasoning.py``) are swallowed and streaming
resumes after them; in a ReAct scratchpad, what follows ``Final Answer:`` is
released without the label. Start markers also count at the start of any later
line, and invisible characters (BOM, zero-width space, word joiner) count as
whitespace there: whatever the final parse may read as a call is never shown.
Whitespace before the first shown text is dropped, never spoken.

Each chunk costs its own length, never the reply's: whatever is held is bounded
(labels allow at most ``_GAP`` spaces of indentation or inside them), a ReAct
scratchpad keeps only the tail that may still begin a label, and whitespace
before the reply waits aside instead of being searched again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
import re

from ..reading.openers import InlineOpener
from . import reasoning as delimiters
from .sanitize import STRAY_TAGS

__all__ = [
    "DEFAULT_START_MARKERS",
    "REACT_LABELS",
    "StreamDetector",
]

# Labels that open a ReAct scratchpad when they start the reply.
REACT_LABELS: tuple[str, ...] = (
    "Thought:",
    "Action:",
    "Action Input:",
    "Observation:",
    "thought:",
    "action:",
    "THOUGHT:",
    "ACTION:",
    "**Thought",
    "**Action",
)
# ReAct/header labels also count at the start of any line (after indentation).
LINE_MARKERS: tuple[str, ...] = (*REACT_LABELS, "# Tool:", "Final Answer:")
# Call starts that need no marker but only count at the start of the reply.
DEFAULT_START_MARKERS: tuple[str, ...] = (
    "{",
    "[",
    "```",
    "# Tool:",
    "#Tool:",
    "Tool:",
    "Function:",
    ">>>",
    "functools",
    *REACT_LABELS,
)
_GAP = 16
# ReAct (``thought_first``): a reply's leading text is held up to this many
# characters, in case a scratchpad label follows and makes it the thought.
# Assist speaks nothing before 60 characters anyway (``STREAM_RESPONSE_CHARS``).
_LEAD_MAX = 200
# A label line that opens a plain answer (llama-cpp-python's chatml-function-
# calling: "message:\n<message>"): dropped, as ``sanitize.MESSAGE_LABEL`` is.
_START_LABEL = re.compile(rf"message:[ \t]{{0,{_GAP}}}\n")
_START_LABEL_PARTIAL = re.compile(
    rf"m(?:e(?:s(?:s(?:a(?:g(?:e(?::[ \t]{{0,{_GAP}}})?)?)?)?)?)?)?"
)
# Numbered scratchpad labels ("Action 1:", "Action Input 2:"), read as the
# ReAct parser reads them; at the start of the reply or of any line.
_NUMBERED_WORDS = r"(?:\*\*)?(?:Thought|Action[ \t]+Input|Action|Observation)"
_NUMBERED = re.compile(
    rf"(?i:{_NUMBERED_WORDS}[ \t]+\d{{1,3}}(?:\*\*)?[ \t]*:(?:\*\*)?)"
)
# A tail that may still become a numbered label ("Action 1", "Thought ").
_NUMBERED_PARTIAL = re.compile(
    rf"(?i:{_NUMBERED_WORDS}[ \t]+(?:In(?:p(?:u(?:t)?)?)?[ \t]*)?(?:\d{{1,3}}[ \t]*)?)"
)
# Characters a model may put before a call that str.strip() keeps.
_INVISIBLE = "\ufeff\u200b\u2060"
_LEADING = re.compile(rf"[\s{_INVISIBLE}]*")
_INDENT = rf"[ \t{_INVISIBLE}]"
_FINAL = re.compile(
    rf"(?:\*\*)?Final[ \t]{{1,{_GAP}}}Answer(?:[ \t]{{1,{_GAP}}}\d{{1,3}})?(?:\*\*)?"
    rf"[ \t]{{0,{_GAP}}}:(?:\*\*)?[ \t]*",
    re.I,
)
_OBSERVATION = re.compile(
    rf"^[ \t]{{0,{_GAP}}}Observation(?:[ \t]{{1,{_GAP}}}\d{{1,3}})?[ \t]{{0,{_GAP}}}:",
    re.M | re.I,
)
# Longer than any label above without its optional tail: after a miss, only
# this much of a scratchpad can still become part of one.
_REACT_TAIL = 2 * _GAP + 20
# An inline call opening still undecided after this many characters ("[" and
# a 300-character word) holds the rest of the reply, as a complete one does.
_INLINE_MAX = 256

# Chat-template special tokens (<|END_RESPONSE|>, <｜end▁of▁sentence｜>) that no
# dialect claims as a marker: never shown, whatever the format.
# ``<SPECIAL_12>``: an unnamed vocabulary slot some GGUF templates emit.
# Cohere citation tags ``<co>`` / ``</co: 0:[1]>`` go too (their text stays),
# as ``sanitize`` removes them from the final content.
_SPECIAL = re.compile(
    r"<\|[A-Za-z0-9_.:\- ]{1,40}\|>|<｜[^｜>\n]{1,40}｜>|<SPECIAL_\d{1,6}>"
    r"|</?co(?::[^>\n]{0,80})?>"
)
_SPECIAL_OPEN = re.compile(
    r"<[|｜]|<SPECIAL_|<S(?:P(?:E(?:C(?:I(?:A(?:L)?)?)?)?)?)?\Z|</?co(?=[>:])|</?(?:co?)?\Z"
)
_SPECIAL_PARTIAL = re.compile(
    r"<\|[A-Za-z0-9_.:\- ]{0,40}\|?|<｜[^｜>\n]{0,40}｜?"
    r"|<SPECIAL_\d{0,6}|<S(?:P(?:E(?:C(?:I(?:A(?:L)?)?)?)?)?)?"
    r"|</?(?:c(?:o(?::[^>\n]{0,80})?)?)?"
)

# Harmony (gpt-oss) message headers: the channel decides what follows, so wait
# for the whole header: ``final`` is the answer, ``analysis`` is reasoning, and a
# header naming a recipient (``to=functions.x``) is a call.
_HEADER_OPENERS = ("<|channel|>", "<|start|>")
_HEADER_END = "<|message|>"
_HEADER_MAX = 300
# Muse Glimmer's headers name a recipient: ``self`` is reasoning (until one of
# its end tokens or the next header), ``user`` the answer, any other a tool.
_RECIPIENT = delimiters.RECIPIENT
_MUSE_ENDS = delimiters.MUSE_ENDS
_TO_SELF, _TO_USER = delimiters.TO_SELF, delimiters.TO_USER
# Inside its reasoning, a bare header switches channel (no end token before it).
_SWITCH = re.compile(r"(?<![\w=])to=[^\s<>]{1,128}<\|message\|>")
_SWITCH_TAIL = 150
# Its prompt ends with ``<|start|>assistant``: the reply opens with a bare header.
_BARE_HEADER = re.compile(r"to=([^\s<>]{1,128})<\|message\|>")
_BARE_PARTIAL = re.compile(
    r"t(?:o(?:=[^\s<>]{0,128}(?:<(?:\|(?:m(?:e(?:s(?:s(?:a(?:g(?:e\|?)?)?)?)?)?)?)?)?)?)?)?"
)

_TEXT, _REASONING, _HOLD, _REACT = "text", "reasoning", "hold", "react"


def _prefixes(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w[:i] for w in words for i in range(1, len(w)))


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a detector searches for, compiled once per set of markers."""

    markers: tuple[str, ...]  # longest first
    starts: tuple[str, ...]  # longest first
    reasoning: dict[str, tuple[str, ...]]  # opener -> closers
    pattern: re.Pattern[str] | None  # any watched marker, opener or lone closer
    prefixes: frozenset[str]  # proper prefixes of the watched strings
    start_prefixes: frozenset[str]
    firsts: frozenset[str]  # first characters of the watched strings
    maxlen: int  # longest watched string
    line_re: re.Pattern[str] | None  # a line marker after indentation
    line_prefixes: frozenset[str]
    lone: tuple[str, ...]  # closers that end a template-opened block
    dropped: frozenset[str]  # format words that are never shown
    strays: frozenset[str]  # call tags with no call: shown only mid-prose
    stray_end: re.Pattern[str] | None  # stray tags (and space) ending the text
    stray_run: re.Pattern[str] | None  # stray tags and space
    stray_markers: tuple[str, ...]  # stray tags that are markers here
    openers: tuple[InlineOpener, ...]  # call openings that count mid-text
    opener_starts: re.Pattern[str] | None  # a character one of them begins with


@lru_cache(maxsize=32)
def _plan(
    markers: frozenset[str],
    starts: frozenset[str],
    reasoning: tuple[tuple[str, tuple[str, ...]], ...],
    lines: frozenset[str],
    lone: tuple[str, ...],
    dropped: frozenset[str] = frozenset(),
    openers: tuple[InlineOpener, ...] = (),
) -> _Plan:
    """Compiled patterns and prefix sets, shared by detectors with the same markers."""
    by_len = tuple(sorted(markers, key=len, reverse=True))
    start_list = tuple(sorted(starts, key=len, reverse=True))
    reasoning_map = dict(reasoning)
    lone = tuple(c for c in lone if c not in reasoning_map and c not in markers)
    strays = frozenset(STRAY_TAGS) - markers - set(reasoning_map) - set(lone) - dropped
    watched = (*by_len, *reasoning_map, *lone, *dropped, *strays)
    # Runs of them count every stray tag, markers too: the final content drops
    # ``</tool_call><tool_call>`` ending a reply whole.
    stray_tags = "|".join(re.escape(t) for t in STRAY_TAGS)
    pattern = (
        re.compile(
            "|".join(re.escape(m) for m in sorted(watched, key=len, reverse=True))
        )
        if watched
        else None
    )
    line_list = sorted(lines, key=len, reverse=True)
    line_re = (
        re.compile(
            rf"(?m)^{_INDENT}{{0,{_GAP}}}("
            + "|".join(re.escape(m) for m in line_list)
            + ("|" + _NUMBERED.pattern if lines & set(REACT_LABELS) else "")
            + ")"
        )
        if line_list
        else None
    )
    return _Plan(
        markers=by_len,
        starts=start_list,
        reasoning=reasoning_map,
        pattern=pattern,
        prefixes=_prefixes(watched),
        start_prefixes=_prefixes(start_list),
        firsts=frozenset(m[0] for m in watched),
        maxlen=max((len(m) for m in watched), default=1),
        line_re=line_re,
        line_prefixes=_prefixes(line_list),
        lone=lone,
        dropped=dropped,
        strays=strays,
        stray_end=re.compile(rf"(?:(?:{stray_tags})\s*)+\Z") if strays else None,
        stray_run=re.compile(rf"(?:\s|{stray_tags})*") if strays else None,
        stray_markers=tuple(t for t in STRAY_TAGS if t in markers),
        openers=openers,
        opener_starts=re.compile(
            "["
            + re.escape("".join(sorted({c for o in openers for c in o.first})))
            + "]"
        )
        if openers
        else None,
    )


class StreamDetector:
    """Incremental "show now / hold" decision for one streamed reply.

    ``markers`` hold from wherever they appear; ``start_markers`` only at the
    start of the reply (after whitespace and reasoning); ``names`` (catalog
    tool names) count as start markers too, for formats that open with a bare
    name. ``reasoning`` pairs are swallowed (default: the shared list).
    ``start_in_reasoning`` is for templates that open the reasoning block in
    the prompt: nothing shows until a closer ends it, or the reply ends
    without one (then the caller shows the parsed content). A closer met
    outside any block is dropped. ``thought_first`` (ReAct) holds the reply's
    first ``_LEAD_MAX`` characters until a scratchpad label drops them as the
    thought, or the end (or more text) shows them to be the answer.
    """

    def __init__(
        self,
        markers: Iterable[str],
        *,
        start_markers: Iterable[str] = DEFAULT_START_MARKERS,
        names: Iterable[str] = (),
        reasoning: Iterable[tuple[str, tuple[str, ...]]] | None = None,
        start_in_reasoning: bool = False,
        line_markers: Iterable[str] = LINE_MARKERS,
        thought_first: bool = False,
        dropped: Iterable[str] = (),
        inline_openers: Iterable[InlineOpener] = (),
    ) -> None:
        if reasoning is None:
            reasoning = delimiters.stream_pairs()
        starts = frozenset(m for m in (*start_markers, *names) if m)
        plan = _plan(
            frozenset(m for m in markers if m),
            starts,
            tuple((opener, tuple(closers)) for opener, closers in reasoning),
            frozenset(m for m in (*line_markers, *starts) if m),
            delimiters.lone_closers(),
            frozenset(m for m in dropped if m),
            tuple(dict.fromkeys(inline_openers)),
        )
        self._markers = plan.markers
        self._starts = plan.starts
        self._reasoning = plan.reasoning
        self._pattern = plan.pattern
        self._prefixes = plan.prefixes
        self._start_prefixes = plan.start_prefixes
        self._firsts = plan.firsts
        self._maxlen = plan.maxlen
        self._line_re = plan.line_re
        self._line_prefixes = plan.line_prefixes
        self._lone = plan.lone
        self._dropped = plan.dropped
        self._strays = plan.strays
        self._stray_end = plan.stray_end
        self._stray_run = plan.stray_run
        self._stray_markers = plan.stray_markers
        self._openers = plan.openers
        self._opener_starts = plan.opener_starts
        self._lstrip = False  # drop whitespace after a Final Answer label
        self._labelled = False  # a "message:" label line was dropped
        # ReAct: the reply's leading text waits here until a scratchpad label
        # (then it was the thought, never shown) or the end (then it is shown).
        self._hold_lead = thought_first
        self._held: list[str] = []
        self._held_chars = 0
        self._bol = True  # the unreleased text starts at the beginning of a line
        self._buf = ""
        self._lead: list[str] = []  # whitespace before the reply, not yet shown
        self._react_from = 0  # where the scratchpad search resumes in _buf
        self._closers: tuple[str, ...] = ()
        self._mode = _TEXT
        self._at_start = True
        self._after_end = False  # Muse's end token just passed: a header may follow
        self._switches = False  # in Muse's reasoning: a bare header ends it
        self._released: list[str] = []
        if start_in_reasoning:
            self._mode = _REASONING
            self._closers = self._lone

    @property
    def holding(self) -> bool:
        """True once a call may be in progress: the rest waits for the full parse."""
        return self._mode in (_HOLD, _REACT)

    @property
    def in_reasoning(self) -> bool:
        """True while inside a reasoning block (nothing is shown)."""
        return self._mode == _REASONING

    @property
    def released(self) -> str:
        """Everything returned so far by ``feed``/``finish``."""
        return "".join(self._released)

    def feed(self, chunk: str) -> str:
        """Add streamed text; return the part that is safe to show now."""
        if self._mode == _HOLD or not chunk:
            return ""
        self._buf += chunk
        out: list[str] = []
        while self._step(out):
            pass
        if out and self._lead:
            # Whitespace before the first shown text is never spoken.
            self._lead.clear()
        text = "".join(out)
        if text:
            last = text.rsplit("\n", 1)
            self._bol = (len(last) == 2 or self._bol) and not last[-1].strip(" \t")
            if self._at_start and text.strip():
                self._at_start = False
            if self._hold_lead:
                self._held.append(text)
                self._held_chars += len(text)
                if self._held_chars <= _LEAD_MAX:
                    return ""
                # Longer than a thought: an answer in plain text, shown from here on.
                text = "".join(self._held)
                self._held.clear()
                self._hold_lead = False
            self._released.append(text)
        return text

    def finish(self) -> str:
        """End of stream: release a held tail that never became a marker.

        Returns "" while ``holding``; the caller then shows the content of the
        full parse instead of the held text.
        """
        self._lead.clear()
        if self._mode != _TEXT:
            self._buf = ""
            return ""
        # A special token held while it might grow into a watched word.
        tail = _SPECIAL.sub("", self._buf) if "<" in self._buf else self._buf
        text, self._buf = "".join(self._held) + tail, ""
        self._held.clear()
        for word in self._dropped:  # a format word the stream ended on
            if text.endswith(word):
                text = text[: -len(word)]
        if self._stray_end is not None and (end := self._stray_end.search(text)):
            text = text[: end.start()]  # call tags with no call end the reply
        if self._at_start or self._hold_lead:
            text = text.strip()
        if text:
            self._released.append(text)
        return text

    def _step(self, out: list[str]) -> bool:
        """Advance the state machine once; True when another step may apply."""
        buf = self._buf
        if self._mode == _REASONING:
            best = -1
            length = 0
            for closer in self._closers:
                idx = buf.find(closer)
                if idx >= 0 and (best < 0 or idx < best):
                    best, length = idx, len(closer)
            switch = _SWITCH.search(buf) if self._switches else None
            if switch is not None and (best < 0 or switch.start() < best):
                # Muse's reasoning may end in a bare header: read it as one.
                self._buf = buf[switch.start() :]
                self._mode = _TEXT
                self._after_end = True
                self._switches = False
                return True
            if best < 0:
                keep = max((len(c) for c in self._closers), default=1) - 1
                keep = max(keep, _SWITCH_TAIL) if self._switches else keep
                self._buf = buf[-keep:] if keep else ""
                return False
            self._switches = False
            closer = buf[best : best + length]
            # A harmony header that ends reasoning is read again as a header.
            self._buf = (
                buf[best:] if closer in _HEADER_OPENERS else buf[best + length :]
            )
            self._mode = _TEXT
            return True
        if self._mode == _REACT:
            final = _FINAL.search(buf, self._react_from)
            observation = _OBSERVATION.search(buf, self._react_from)
            if observation and (final is None or observation.start() < final.start()):
                self._mode = _HOLD
                self._buf = ""
                return False
            if final is None:
                if len(buf) > _REACT_TAIL + 1:
                    # A scratchpad is never shown: keep the tail that may begin
                    # a label, plus one character so "^" still knows its line.
                    self._buf = buf[-_REACT_TAIL - 1 :]
                    self._react_from = 1
                return False
            self._buf = buf[final.end() :]
            self._mode = _TEXT
            self._at_start = False
            self._lstrip = True
            return True
        if self._mode != _TEXT:
            return False
        if self._lstrip:
            buf = self._buf = buf.lstrip()
            if not buf:
                return False
            self._lstrip = False
        if self._after_end and not self._at_start:
            decided = self._header_after_end(buf, out)
            if decided is not None:
                return decided
        if self._at_start:
            stripped = _LEADING.sub("", buf, count=1)
            if len(stripped) < len(buf):
                self._lead.append(buf[: len(buf) - len(stripped)])
                buf = self._buf = stripped
            if not buf:
                return False
            bare = _BARE_HEADER.match(buf)
            if bare is not None:
                return self._to_recipient(bare.group(1), buf[bare.end() :], out)
            if _BARE_PARTIAL.fullmatch(buf):
                return False  # may still become a bare header
            if not self._labelled:
                opening = _START_LABEL.match(buf)
                if opening is not None:
                    self._labelled = True
                    self._buf = buf[opening.end() :]
                    return True
                if _START_LABEL_PARTIAL.fullmatch(buf):
                    return False  # may still become the label
            for marker in self._starts:
                if buf.startswith(marker):
                    self._lead.clear()  # a call starts the reply: never shown
                    self._drop_lead(out)
                    self._react_from = 0
                    self._mode = _REACT if marker in REACT_LABELS else _HOLD
                    if self._mode == _HOLD:
                        self._buf = ""
                    return self._mode == _REACT
            if buf in self._start_prefixes:
                return False
        match = self._pattern.search(buf) if self._pattern else None
        line_re = self._line_re
        line = line_re.search(buf) if line_re else None
        if line_re and line is not None and line.start() == 0 and not self._bol:
            line = line_re.search(buf, 1)  # buf starts mid-line
        if self._inline(buf, (line, match), out):
            return False
        if line is not None and (match is None or line.start() <= match.start()):
            out.append(buf[: line.start()])
            self._drop_lead(out)
            label = line.group(1)
            if label not in LINE_MARKERS and not _NUMBERED.fullmatch(label):
                # A call start on a line of its own: the rest waits for the parse.
                self._mode = _HOLD
                self._buf = ""
                return False
            # A scratchpad line: hold from its start; Final Answer may release.
            if self._lead and line.start() == 0:
                # The label's indentation belongs to the scratchpad, not the lead.
                lead = "".join(self._lead)
                self._lead = [lead[: lead.rfind("\n") + 1]]
            self._buf = buf[line.start() :]
            self._react_from = 0
            self._mode = _REACT
            return True
        special = _SPECIAL_OPEN.search(buf)
        if special is not None and (match is None or special.start() < match.start()):
            start = special.start()
            special_token = _SPECIAL.match(buf, start)
            if special_token is not None and buf[start:] in self._prefixes:
                # It may still grow into a watched word (Kimi K3's
                # ``<|open|>`` into ``<|open|>response<|sep|>``): wait.
                out.append(buf[:start])
                self._buf = buf[start:]
                return False
            if special_token is not None:
                out.append(buf[:start])
                self._buf = buf[special_token.end() :]
                self._after_end = special_token.group(0) in _MUSE_ENDS
                return True
            if _SPECIAL_PARTIAL.fullmatch(buf, start):
                # It may still become a special token, and what comes before
                # it may be the start of a marker (MiniMax M3's ``]<]``).
                cut = self._watched_tail(buf, start)
                out.append(buf[:cut])
                self._buf = buf[cut:]
                return False
        if (
            match is not None
            and len(buf) - match.start() < self._maxlen
            and buf[match.start() :] in self._prefixes
        ):
            # Complete, but it may still grow into a longer watched string
            # ("<|channel>" into "<|channel>thought"): wait for the next chunk.
            out.append(buf[: match.start()])
            self._buf = buf[match.start() :]
            return False
        if match is not None and match.group(0) in _HEADER_OPENERS:
            return self._harmony_header(buf, match.start(), match.end(), out)
        if match is not None and match.group(0) in self._strays:
            return self._stray(buf, match.start(), match.end(), out)
        if match is not None:
            out.append(buf[: match.start()])
            token = match.group(0)
            if token in self._lone or token in self._dropped:
                # A closer without its block, or a word of a format never shown.
                self._buf = buf[match.end() :]
                return True
            if token in self._reasoning:
                self._closers = self._reasoning[token]
                self._buf = buf[match.end() :]
                self._mode = _REASONING
                if buf[: match.start()].strip():
                    self._at_start = False
                return True
            self._drop_lead(out)
            self._mode = _HOLD
            self._buf = ""
            return False
        cut = self._watched_tail(buf, len(buf))
        if self._line_re is not None:
            newline = buf.rfind("\n", 0, cut)
            if newline >= 0 or self._bol:
                line_start = newline + 1
                tail = buf[line_start:cut].lstrip(" \t" + _INVISIBLE)
                indent = cut - line_start - len(tail)
                if indent <= _GAP and (
                    tail in self._line_prefixes
                    or (not tail and line_start < cut)
                    or _NUMBERED_PARTIAL.fullmatch(tail)
                ):
                    cut = line_start  # the new line may begin a label
        if self._at_start and not buf[:cut].strip():
            # Only whitespace so far: keep it until the reply really starts.
            return False
        out.append(buf[:cut])
        self._buf = buf[cut:]
        return False

    def _inline(
        self, buf: str, events: tuple[re.Match[str] | None, ...], out: list[str]
    ) -> bool:
        """Hold from the first inline call opening, if it comes before ``events``.

        A complete opening holds the rest of the reply; one that may still
        become complete (it runs to the end of ``buf``) holds from where it
        starts. True when it decided what is shown.
        """
        found = self._opener_at(buf)
        if found is None:
            return False
        pos, complete = found
        special = _SPECIAL_OPEN.search(buf)
        if any(e is not None and e.start() <= pos for e in (*events, special)):
            return False  # a marker, label or token there decides first
        # What comes before it may be the start of a marker (``]<]minimax[``).
        cut = self._watched_tail(buf, pos)
        out.append(buf[:cut])
        if complete:
            self._drop_lead(out)
            self._mode = _HOLD
            self._buf = ""
        else:
            self._buf = buf[cut:]
        return True

    def _opener_at(self, buf: str) -> tuple[int, bool] | None:
        """``(where, complete)`` for the first inline call opening in ``buf``.

        Not complete: it may still become one and runs to the end of ``buf``;
        past ``_INLINE_MAX`` characters that counts as complete.
        """
        if self._opener_starts is None:
            return None
        for start in self._opener_starts.finditer(buf):
            pos = start.start()
            alive = False
            for opener in self._openers:
                if opener.full.match(buf, pos):
                    return pos, True
                alive = alive or opener.partial.fullmatch(buf, pos) is not None
            if alive:
                return pos, len(buf) - pos > _INLINE_MAX
        return None

    def _stray(self, buf: str, start: int, end: int, out: list[str]) -> bool:
        """A call tag with no call (``</tool_call>`` after an answer).

        Shown only where the final content keeps it (``sanitize``): mid-prose.
        At the start of the reply, alone on its line, or ending the reply (only
        whitespace after it, decided by ``finish``) it is never shown.
        """
        before = buf[:start]
        if before.strip():
            self._at_start = False  # the rest is not the reply's lead
        line_start = before.rfind("\n") + 1
        starts_line = (line_start > 0 or self._bol) and not before[line_start:].strip(
            " \t"
        )
        rest = buf[end:]
        text_at = len(rest) - len(rest.lstrip())
        if self._at_start:  # opening the reply
            self._buf = rest
            return True
        # Only space and more such tags after it (or the start of one): it may
        # end the reply. Space before a tag that is not shown waits too: the
        # final content ends where the text before the tag does.
        spaced = self._stray_run.match(rest) if self._stray_run else None
        run = spaced.end() if spaced else 0  # the pattern matches "" at least
        ends = run == len(rest) or rest[run:] in self._prefixes
        if any(marker in rest[:run] for marker in self._stray_markers) or (
            ends and run > _INLINE_MAX
        ):
            # A call marker follows, or a long run of spaces and tags (a model
            # looping on newlines): the rest waits for the final parse, as
            # after a call opening, instead of being searched again per chunk.
            out.append(before.rstrip())
            self._drop_lead(out)
            self._mode = _HOLD
            self._buf = ""
            return False
        if ends and not (starts_line and "\n" in rest[:text_at]):
            kept = before.rstrip()  # the end of the reply, or text still to come
            out.append(kept)
            self._buf = buf[len(kept) :]
            self._bol = self._bol and not kept
            return False
        if starts_line and "\n" in rest[:text_at]:
            kept = before[:line_start].rstrip()  # alone on its line
            out.append(kept)
            self._buf = before[len(kept) : line_start] + rest[rest.index("\n") :]
            return True
        out.append(buf[:end])  # mid-prose: text, as the final content keeps it
        self._buf = rest
        self._bol = False  # what is left starts mid-line
        return True

    def _watched_tail(self, buf: str, end: int) -> int:
        """Where the text that may still grow into a watched string starts:
        the first position before ``end`` whose rest of ``buf`` is the start
        of one (``end`` when none is)."""
        for index in range(max(0, len(buf) - self._maxlen + 1), end):
            if buf[index] in self._firsts and buf[index:] in self._prefixes:
                return index
        return end

    def _drop_lead(self, out: list[str]) -> None:
        """A scratchpad or call begins: the held leading text was its thought."""
        if self._hold_lead:
            out.clear()
            self._held.clear()
            self._hold_lead = False

    def _header_after_end(self, buf: str, out: list[str]) -> bool | None:
        """After one of Muse's end tokens a bare header may follow (a channel
        switch with no ``<|start|>``); None when none does."""
        rest = buf.lstrip()
        bare = _BARE_HEADER.match(rest)
        if bare is not None:
            self._after_end = False
            return self._to_recipient(bare.group(1), rest[bare.end() :], out)
        if not rest or _BARE_PARTIAL.fullmatch(rest):
            return False  # space, or a header still arriving
        self._after_end = False
        return None

    def _to_recipient(self, recipient: str, body: str, out: list[str]) -> bool:
        """A message to ``recipient``: reasoning (``self``), the answer
        (``user``) or a call (any other: the rest waits for the parse)."""
        header = f"to={recipient.lower()}"
        if header == _TO_SELF:
            self._mode = _REASONING
            self._switches = True
            self._closers = (*_MUSE_ENDS, *_HEADER_OPENERS)
            self._buf = body
            return True
        if header == _TO_USER:
            self._buf = body
            return True
        self._drop_lead(out)
        self._mode = _HOLD
        self._buf = ""
        return False

    def _harmony_header(self, buf: str, start: int, end: int, out: list[str]) -> bool:
        """Decide a harmony message by its header, once the header is complete."""
        out.append(buf[:start])
        close = buf.find(_HEADER_END, end)
        if close < 0:
            if len(buf) - start <= _HEADER_MAX:
                self._buf = buf[start:]  # wait for the rest of the header
                return False
            close = len(buf)
        header = buf[end:close]
        body = buf[close + len(_HEADER_END) :]
        recipients = _RECIPIENT.findall(header) if close < len(buf) else ()
        if recipients:
            return self._to_recipient(recipients[-1], body, out)
        if "to=" in header or close == len(buf):
            self._drop_lead(out)
            self._mode = _HOLD
            self._buf = ""
            return False
        if "analysis" in header or "commentary" in header:
            self._mode = _REASONING
            self._closers = ("<|end|>", *_HEADER_OPENERS)
            self._buf = body
            return True
        if "final" in header:
            self._buf = body
            return True
        self._mode = _HOLD
        self._buf = ""
        return False
