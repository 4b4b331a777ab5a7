"""Keep protocol out of what people see and hear.

Two jobs: pull reasoning out of a reply (``<think>``, a lone ``</think>``,
``[THINK]``, harmony's analysis channel, ...) and strip leaked scaffolding of
any format (ReAct scratchpad lines, stray call tags, special tokens) without
touching ordinary prose: "Action: none needed" stays, because a sentence that
happens to start with a label is not a scratchpad.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
import heapq
import re

from ..reading.finder import Finder
from ..reading.jsonrepair import LooseJSONError, loads_loose
from ..reading.literals import Literals, literals
from ..reading.memo import once_per_reply
from . import reasoning as delimiters
from .fences import find_fences
from .quirks import strip_quirks

__all__ = [
    "STRAY_TAGS",
    "clean",
    "final_answer_blob",
    "register_reasoning_delimiters",
    "remove_words",
    "split_reasoning",
    "strip_leakage",
    "strip_react",
    "tidy",
]

# The one list of reasoning blocks, shared with the streaming detector.
_REASONING = delimiters.DELIMITERS
_HEADER_CLOSERS = frozenset({"<|start|>", "<|channel|>"})


def register_reasoning_delimiters(
    opener: str, closers: tuple[str, ...] | str, *, lone_closer: bool = False
) -> None:
    """Teach the sanitizer and the streaming detector another reasoning block.

    ``lone_closer``: a closer without an opener marks everything before it as
    reasoning (only sensible for closers that never appear in prose).
    """
    delimiters.register(opener, closers, lone_closer=lone_closer)


# Every opener and closer of ``_REASONING``, rebuilt when a block is registered
# (the list only grows): most replies hold none, found in one scan.
_delimiter_set: list[tuple[int, Literals]] = []


def _delimiters() -> Literals:
    if not _delimiter_set or _delimiter_set[0][0] != len(_REASONING):
        words = (w for opener, closers, _ in _REASONING for w in (opener, *closers))
        _delimiter_set[:] = [(len(_REASONING), literals(words))]
    return _delimiter_set[0][1]


def split_reasoning(text: str) -> tuple[str, str]:
    """Return ``(visible, reasoning)``; an unclosed block runs to the end.

    Linear time: each opener's next position waits in a heap and is searched
    again only once the scan has passed it, and a block's several closers go
    through a ``Finder``, so a megabyte of blocks never searches to the end
    once per block.
    """
    if not text or not _delimiters().any_in(text):
        return text, ""
    entries = _REASONING
    # Only blocks whose opener is in the text open anywhere (one C-level
    # look each; most replies hold one kind of block).
    opened = [order for order, entry in enumerate(entries) if entry[0] in text]
    visible: list[str] = []
    reasoning: list[str] = []
    finder = Finder(text)
    pos = lone_end = _lone_closer_end(text, finder, opened, reasoning)
    # (next offset, registration order): ties go to the first registered.
    heap = [
        (idx, order)
        for order in opened
        if (idx := finder.find(entries[order][0], pos)) >= 0
    ]
    heapq.heapify(heap)
    while heap:
        best, order = heap[0]
        opener, closers, _ = entries[order]
        if best < pos:  # passed over (inside an earlier block): look again
            idx = text.find(opener, pos)
            if idx < 0:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (idx, order))
            continue
        visible.append(text[pos:best])
        start = best + len(opener)
        if len(closers) == 1:  # found or not, the scan moves past it: linear
            end = text.find(closers[0], start)
            closer_len = 0 if closers[0] in _HEADER_CLOSERS else len(closers[0])
        else:
            end, closer_len = _block_end(finder, closers, start)
        if end < 0:
            reasoning.append(text[start:])
            pos = len(text)
            break
        reasoning.append(text[start:end])
        pos = end + closer_len
        # This opener is behind the scan now: its next one, found right away.
        idx = text.find(opener, pos)
        if idx < 0:
            heapq.heappop(heap)
        else:
            heapq.heapreplace(heap, (idx, order))
    visible.append(text[pos:])
    shown = "".join(visible)
    if lone_end:
        shown = _without_second_closer(text, lone_end, shown)
    if not lone_end and reasoning:
        shown = _after_late_lone_closer(text, shown, reasoning)
    parts = [
        p for r in reasoning if (p := (_SPECIAL.sub("", r) if "<" in r else r).strip())
    ]
    return shown, "\n".join(parts)


def _block_end(finder: Finder, closers: tuple[str, ...], start: int) -> tuple[int, int]:
    """``(offset, length)`` of the first of several closers at/after ``start``."""
    end = -1
    closer_len = 0
    for closer in closers:
        idx = finder.find(closer, start)
        if idx >= 0 and (end < 0 or idx < end):
            # Harmony blocks may end where the next header starts; that
            # header belongs to the next block, so it is not consumed.
            end = idx
            closer_len = 0 if closer in _HEADER_CLOSERS else len(closer)
    return end, closer_len


def _lone_closer_end(
    text: str, finder: Finder, opened: list[int], reasoning: list[str]
) -> int:
    """Where visible text starts: after a closer seen before any opener.

    Templates that open the block in the prompt leave only its closer in the
    reply; everything before that closer is reasoning (added to ``reasoning``).
    ``opened``: the blocks whose opener is in ``text``.
    """
    limit = len(text)
    for order in opened:
        idx = finder.find(_REASONING[order][0])
        if idx < limit:
            limit = idx
    lone = -1
    lone_len = 0
    for opener, closer in _lone_pairs(len(_REASONING)):
        if closer not in text:
            continue
        idx = finder.find(closer, 0, limit)
        if idx >= 0 and text.find(opener, 0, idx) < 0 and (lone < 0 or idx < lone):
            lone, lone_len = idx, len(closer)
    if lone < 0:
        return 0
    reasoning.append(text[:lone])
    return lone + lone_len


def _without_second_closer(text: str, end: int, shown: str) -> str:
    """``shown`` without the lone closer (ending at ``end``) written again.

    MiniMax M2 sometimes closes its template-opened reasoning twice; its
    engine drops the second closer, and so does the streaming detector.
    """
    for _, closer in _lone_pairs(len(_REASONING)):
        if text.startswith(closer, end - len(closer)):
            return shown.replace(closer, "") if closer in shown else shown
    return shown


def _after_late_lone_closer(text: str, shown: str, reasoning: list[str]) -> str:
    """``shown`` after a lone closer that follows other blocks.

    Apriel thinks in ``<think>``/``<thinking>`` and then still writes
    ``[BEGIN FINAL RESPONSE]``, the closer of the block its prompt opened:
    what is shown before that closer was reasoning too (added to
    ``reasoning``). Only closers whose own opener is nowhere in ``text``.
    """
    cut = -1
    cut_len = 0
    for opener, closer in _lone_pairs(len(_REASONING)):
        if closer in shown and opener not in text:
            idx = shown.find(closer)
            # A word closer only when it opens a line: inside a sentence it is
            # the answer naming it (``Magistral ends with [/THINK] and…``). A
            # template token (``<|END_THINKING|>``) is never prose.
            line = shown[shown.rfind("\n", 0, idx) + 1 : idx]
            if not closer.startswith("<|") and line.strip():
                continue
            if cut < 0 or idx < cut:
                cut, cut_len = idx, len(closer)
    if cut < 0:
        return shown
    reasoning.append(shown[:cut])
    return shown[cut + cut_len :]


@lru_cache(maxsize=1)
def _lone_pairs(count: int) -> tuple[tuple[str, str], ...]:
    """``(opener, closer)`` of the first ``count`` blocks whose closer may
    stand alone (the list only grows: a registered block gives a new count)."""
    return tuple(
        (opener, closer)
        for opener, closers, lone_ok in _REASONING[:count]
        if lone_ok
        for closer in closers
    )


# A role after ``<|start|>`` may follow a space (LLM-jp 4.1's harmony); a
# word after that space is only a role if it is one.
_HEADERS = re.compile(
    r"<\|start_header_id\|>[^<]{0,40}<\|end_header_id\|>"
    r"|<\|im_start\|>[A-Za-z_]{0,20}"
    r"|<\|start\|>(?:[A-Za-z_]{1,20}| (?:assistant|user|system|developer)\b)?"
    r"|<\|channel\|>[^<\n]{0,200}"
    r"|<\|constrain\|>[A-Za-z_]{0,20}"
    r"|<start_of_turn>[A-Za-z_]{0,20}"
    r"|<\|turn>[A-Za-z_]{0,20}"
)
_SPECIAL = re.compile(
    r"<\|/?[A-Za-z0-9_:.\-]{1,40}\|>"
    r"|<｜[^｜<>\n]{1,40}｜>"
    r"|</?s>|<eos>|<bos>|<end_of_turn>|<turn\|>|<\|tool_call>|<tool_call\|>"
    r"|<SPECIAL_\d{1,6}>"  # unnamed vocabulary slots some GGUF templates emit
)
_CITATION = re.compile(r"</?co(?::[^>\n]{0,80})?>")
# Call tags that only count as leakage at the very start/end or on their own
# line; the streaming detector holds them by the same rule.
STRAY_TAGS: tuple[str, ...] = (
    "<tool_call>",
    "</tool_call>",
    "<function_call>",
    "</function_call>",
    "<tools>",
    "</tools>",
    "[TOOL_CALLS]",
    "[/TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "<TOOLCALL>",
    "</TOOLCALL>",
    "<tool_response>",
    "</tool_response>",
)
_STRAY = "|".join(re.escape(tag) for tag in STRAY_TAGS)
_STRAY_ANY = re.compile(_STRAY)
_STRAY_LINE = re.compile(rf"^[ \t]*(?:{_STRAY})[ \t]*$", re.M)
_STRAY_START = re.compile(rf"(?:\s*(?:{_STRAY}))+")
_STRAY_END = re.compile(rf"(?:(?:{_STRAY})\s*)+\Z")
_REACT_LABEL = re.compile(
    # Lookahead: a label's first letter, so most lines fail before the words.
    r"^(?=[ \t*#]*[TAOF])[ \t]*(?:\*\*|#+[ \t]*)?"
    r"(Thought|Action[ \t]+Input|Action|Observation|Final[ \t]+Answer)"
    r"(?:[ \t]+\d{1,3})?(?:\*\*)?[ \t]*:(?:\*\*)?",
    re.M | re.I,
)
_TOOL_HEADER = re.compile(r"^[ \t]*#[ \t]*(?:Tool|Arguments)[ \t]*:.*$", re.M)
# llama-cpp-python's chatml-function-calling opens a plain answer with this
# line (its template: "message:\n<message>"); the streaming detector drops it too.
MESSAGE_LABEL = re.compile(r"\A\s*message:[ \t]{0,16}\n")
# Same as r"\n[ \t]*\n(?:[ \t]*\n)+" but one class repeat, not a group repeat:
# 60x faster on a megabyte of newlines.
_BLANKS = re.compile(r"\n[ \t]*\n[ \t\n]*\n")


def _is_scratchpad(text: str) -> bool:
    """Whether the labels in ``text`` have the structure of a ReAct scratchpad."""
    kinds: set[str] = set()
    for count, match in enumerate(_REACT_LABEL.finditer(text)):
        kinds.add("".join(match.group(1).lower().split()))
        if kinds & {"finalanswer", "thought", "observation"}:
            return True
        if {"action", "actioninput"} <= kinds:
            return True
        if count > 64:
            break
    return False


_FINAL_LABEL = re.compile(
    r"^[ \t]*(?:\*\*|#+[ \t]*)?Final[ \t]+Answer(?:[ \t]+\d{1,3})?(?:\*\*)?[ \t]*:(?:\*\*)?",
    re.M | re.I,
)
_OTHER_LABEL = re.compile(
    r"^[ \t]*(?:\*\*|#+[ \t]*)?(?:Thought|Action[ \t]+Input|Action|Observation)"
    r"(?:[ \t]+\d{1,3})?(?:\*\*)?[ \t]*:",
    re.M | re.I,
)
_OBSERVATION = re.compile(
    r"^[ \t]*(?:\*\*|#+[ \t]*)?Observation(?:[ \t]+\d{1,3})?(?:\*\*)?[ \t]*:",
    re.M | re.I,
)
_LABEL_LINE = re.compile(
    r"^[ \t]*(?:\*\*|#+[ \t]*)?(?:Thought|Action[ \t]+Input|Action)(?:[ \t]+\d{1,3})?"
    r"(?:\*\*)?[ \t]*:.*(?:\n|\Z)",
    re.M | re.I,
)


def strip_react(text: str) -> str:
    """Reduce a ReAct scratchpad to its ``Final Answer`` (or its plain lines).

    Text is only treated as a scratchpad when it has the structure of one
    (a ``Thought:``/``Observation:``/``Final Answer:`` line, or ``Action:`` with
    ``Action Input:``); a lone "Action: none needed" sentence is prose.
    Linear time: a few C-level regex passes, no per-line Python loop.
    """
    if ":" not in text or not _is_scratchpad(text):
        return text
    final = _FINAL_LABEL.search(text)
    if final is not None:
        after = _OTHER_LABEL.search(text, final.end())
        return text[final.end() : after.start() if after else len(text)]
    observation = _OBSERVATION.search(text)
    if observation is not None:
        text = text[: observation.start()]
    return _LABEL_LINE.sub("", text)


def _strip_stray(text: str) -> str:
    """Call tags left at the very start/end or alone on a line (not mid-prose)."""
    if _STRAY_ANY.search(text) is None:
        return text  # no call tag anywhere: one scan, not three
    match = _STRAY_START.match(text)
    if match:
        text = text[match.end() :]
    match = _STRAY_END.search(text, max(0, len(text) - 4096))
    if match:
        text = text[: match.start()]
    return _STRAY_LINE.sub("", text)


def strip_leakage(text: str) -> str:
    """Remove protocol fragments of any format from user-visible text."""
    if not text:
        return text
    if "<" in text:
        text = _HEADERS.sub("", text)
        text = _SPECIAL.sub("", text)
        if "<co" in text or "</co" in text:
            text = _CITATION.sub("", text)
    if "<" in text or "[" in text:
        text = _strip_stray(text)
    if ":" in text:
        label = MESSAGE_LABEL.match(text)
        if label is not None:
            text = text[label.end() :]
        text, fenced = _hide_fences(text)
        text = strip_react(text)
        if "# " in text or "#T" in text or "#A" in text:
            headers = _TOOL_HEADER.findall(text)
            lowered = " ".join(headers).lower()
            if "tool" in lowered and "arguments" in lowered:
                text = _TOOL_HEADER.sub("", text)
        if fenced:
            text = _FENCE_SLOT.sub(lambda m: fenced[int(m.group(1))], text)
    return text


# A code fence stands in the text as "\ue000N\ue001" while scratchpad labels
# are stripped: a fence that shows "# Tool:" or "Action:" syntax is quoted, not
# leaked, so it stays whole (and its labels do not make the prose a scratchpad).
_FENCE_SLOT = re.compile("\ue000(\\d+)\ue001")
# ``clean`` hides closed fences the same way, with its own marks, before any
# dialect's cleanup: an answer that shows call syntax in a fence keeps it whole.
_CLOSED_SLOT = re.compile("\ue002(\\d+)\ue003")


def _hide_fences(
    text: str, *, closed_only: bool = False, marks: str = "\ue000\ue001"
) -> tuple[str, list[str]]:
    """``text`` with each code fence replaced by a slot, and the fences."""
    if ("```" not in text and "~~~" not in text) or marks[0] in text:
        return text, []
    fences = find_fences(text)
    if closed_only:
        fences = [f for f in fences if f.body_end < f.end]
    if not fences:
        return text, []
    parts: list[str] = []
    fenced: list[str] = []
    pos = 0
    for fence in fences:
        parts.append(text[pos : fence.start])
        parts.append(f"{marks[0]}{len(fenced)}{marks[1]}")
        fenced.append(text[fence.start : fence.end])
        pos = fence.end
    parts.append(text[pos:])
    return "".join(parts), fenced


def _restore(text: str, fenced: list[str]) -> str:
    """``text`` with ``clean``'s fence slots put back.

    No fences: nothing was hidden here. A dialect's cleanup inside ``clean``
    (``remove_words``) meets ``clean``'s own slots and leaves them to it.
    """
    if not fenced or "\ue002" not in text:
        return text
    return _CLOSED_SLOT.sub(lambda m: fenced[int(m.group(1))], text)


# A whole reply that is one structured-chat blob, optionally fenced.
_FINAL_BLOB = re.compile(r"\s*(?:```[A-Za-z]*\s*)?(\{.*\})\s*(?:```)?\s*", re.S)


def final_answer_blob(text: str) -> str | None:
    """The answer of a LangChain structured-chat ``Final Answer`` blob, else None.

    ``{"action": "Final Answer", "action_input": "..."}`` is how those agents
    answer the user; the JSON around the text is scaffolding, not content.
    """
    if "action_input" not in text:
        return None
    match = _FINAL_BLOB.fullmatch(text)
    if match is None:
        return None
    try:
        value = loads_loose(match.group(1))
    except LooseJSONError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("action_input"), str):
        return None
    action = value.get("action")
    if not isinstance(action, str) or "".join(action.lower().split()) != "finalanswer":
        return None
    return value["action_input"]


def remove_words(text: str, words: tuple[str, ...]) -> str:
    """``text`` without ``words`` (a format's markers), outside code fences."""
    if not any(map(text.__contains__, words)):  # one C-level loop
        return text
    hidden, fenced = _hide_fences(text, closed_only=True, marks="\ue002\ue003")
    for word in words:
        if word in hidden:
            hidden = hidden.replace(word, "")
    return tidy(_restore(hidden, fenced))


def tidy(text: str) -> str:
    """Trim, and fold runs of blank lines left behind by removed markup."""
    if text.count("\n") > 2:  # ``_BLANKS`` needs three
        text = _BLANKS.sub("\n\n", text)
    return text.strip()


def _clean(text: str) -> tuple[str, str]:
    visible, reasoning = split_reasoning(text)
    return tidy(strip_leakage(visible)), reasoning


# A chain may build the content of one text twice (a member's result, then
# the winner's): cleaned once per reply.
_clean_once = once_per_reply(_clean)


# A chain cleans one long reply once per member: its quirks are read once.
_quirks_large = lru_cache(maxsize=4)(strip_quirks)


# Characters one of ``clean``'s layers needs to change anything: ":" (speaker
# labels, invented turns, scratchpads), "[" "]" (BBCode, ``[THINK]``, stray
# tags), "<" (reasoning, tokens, tags), "`" "~" (fences) and "{" (a final-answer
# blob). Reasoning delimiters without any of them join as words.
_LAYER_CHARS = ":[]<`~{"


@lru_cache(maxsize=1)
def _layers(count: int) -> re.Pattern[str]:
    """What a text must hold for a layer other than ``tidy`` to apply, with
    the first ``count`` reasoning blocks (the list only grows: a registered
    block gives a new count, so a new pattern)."""
    words = {
        word
        for opener, closers, _ in _REASONING[:count]
        for word in (opener, *closers)
        if not any(char in word for char in _LAYER_CHARS)
    }
    pattern = "|".join([f"[{re.escape(_LAYER_CHARS)}]", *map(re.escape, words)])
    return re.compile(pattern)


def clean(
    text: str, dialect_sanitize: Callable[[str], str] | None = None
) -> tuple[str, str]:
    """Return ``(content, reasoning)`` for text whose calls were already cut out.

    The layers run in this order: model quirks, a LangChain final-answer blob
    unwrapped, then (with every closed code fence set aside, so quoted call
    syntax stays whole) the dialect's own sanitize, reasoning and any format's
    leakage. Done once per reply for each text (``_clean_once``).
    Most contents hold nothing any layer reads: only the dialect's cleanup and
    ``tidy`` run on them.
    """
    if not text:
        return "", ""  # a reply that is all calls (no cleanup makes text)
    layers = _layers(len(_REASONING))
    if layers.search(text) is None:
        plain = text if dialect_sanitize is None else dialect_sanitize(text)
        if plain is text or not plain or layers.search(plain) is None:
            return tidy(plain), ""
        return _clean_once(plain)
    return _clean_layers(text, dialect_sanitize)


def _clean_layers(
    text: str, dialect_sanitize: Callable[[str], str] | None
) -> tuple[str, str]:
    """``clean`` with every layer run."""
    text = strip_quirks(text) if len(text) <= 8192 else _quirks_large(text)
    answer = final_answer_blob(text)
    if answer is not None:
        text = answer
    text, fenced = _hide_fences(text, closed_only=True, marks="\ue002\ue003")
    if dialect_sanitize is not None:
        text = dialect_sanitize(text)
    content, reasoning = _clean_once(text)
    if fenced:
        content, reasoning = _restore(content, fenced), _restore(reasoning, fenced)
    return content, reasoning
