"""Small helpers shared by the tagged-markup dialects.

Jobs the core does not cover: reasoning blocks as offsets (so a dialect can
prefer real calls over example calls quoted in its thinking), XML-style text
parameters typed from the schema, positional Python arguments mapped onto
parameter names, a JSON payload after a marker that was cut off, and keeping
every scan linear on adversarial input (``Finder``, ``MAX_CALLS``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import json
import re
from typing import Any

from ..catalog import Catalog, fold
from ..model import MAX_CALLS, TOO_MANY_CALLS, RejectedCall, ToolCall, too_many_calls
from .calls import Found
from .finder import Finder
from .jsonrepair import (
    LooseJSONError,
    find_json_end,
    loads_loose,
)
from .literals import Literals
from .scan import MAX_BLOCKS, json_calls_at, skip_ws
from .schema import coerce_text_value

__all__ = [
    "MAX_CALLS",
    "REASONING_TAGS",
    "TOO_MANY_BLOCKS",
    "Finder",
    "after_closer",
    "marked_json_calls",
    "positional_kwargs",
    "prefer_outside_reasoning",
    "reasoning_spans",
    "refuse_unread",
    "token_json_calls",
    "too_many",
    "typed_text_arguments",
    "without_mentions",
]

# (opener, closer) pairs; a closer seen before any opener closes a block the
# prompt opened, so everything before it is reasoning.
REASONING_TAGS: tuple[tuple[str, str], ...] = (
    ("<think>", "</think>"),
    ("<seed:think>", "</seed:think>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|think:start|>", "<|think:end|>"),
    ("<|channel>thought", "<channel|>"),
    ("<|inner_prefix|>", "<|inner_suffix|>"),
    ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),  # Kimi K3
)


_REASONING_WORDS = Literals(word for pair in REASONING_TAGS for word in pair)


def too_many(found: list[Found], text: str, pos: int) -> bool:
    """True (and the rest of the text refused) once ``found`` holds ``MAX_CALLS``."""
    if len(found) < MAX_CALLS:
        return False
    last = found[-1].call
    if isinstance(last, RejectedCall) and last.reason == TOO_MANY_CALLS:
        return True
    found.append(
        Found(
            pos,
            len(text),
            too_many_calls(text[pos : pos + 200]),
        )
    )
    return True


def reasoning_spans(
    text: str, tags: Sequence[tuple[str, str]] = REASONING_TAGS
) -> list[tuple[int, int]]:
    """Offsets ``(start, end)`` of reasoning blocks; an unclosed block runs to the end."""
    spans: list[tuple[int, int]] = []
    if tags is REASONING_TAGS:
        if not _REASONING_WORDS.any_in(text):
            return spans
    elif not any(opener in text or closer in text for opener, closer in tags):
        return spans
    pos = 0
    finder = Finder(text)
    # A lone closer before any opener (templates that open thinking in the prompt).
    lone_end = -1
    for opener, closer in tags:
        idx = finder.find(closer)
        if idx >= 0 and text.find(opener, 0, idx) < 0:
            end = idx + len(closer)
            if lone_end < 0 or end < lone_end:
                lone_end = end
    if lone_end >= 0:
        spans.append((0, lone_end))
        pos = lone_end
    while True:
        best = -1
        closer = ""
        for open_tag, close_tag in tags:
            idx = finder.find(open_tag, pos)
            if idx >= 0 and (best < 0 or idx < best):
                best, closer = idx, close_tag
        if best < 0:
            return spans
        end = finder.find(closer, best + 1)
        if end < 0:
            spans.append((best, len(text)))
            return spans
        spans.append((best, end + len(closer)))
        pos = end + len(closer)


def _inside(spans: Iterable[tuple[int, int]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def without_mentions(text: str, found: list[Found]) -> list[Found]:
    """``found`` without the refusals of markup that opens inside a closed
    reasoning block and runs past its end: a tag the reasoning only named
    (``<think>I could use <tool_call> but…</think>The answer``), which would
    otherwise swallow the answer as a call cut off."""
    if not any(isinstance(f.call, RejectedCall) for f in found):
        return found
    spans = reasoning_spans(text)
    size = len(text)
    return [
        f
        for f in found
        if not (
            isinstance(f.call, RejectedCall)
            and any(s <= f.start < e < f.end and e < size for s, e in spans)
        )
    ]


def prefer_outside_reasoning(text: str, found: list[Found]) -> list[Found]:
    """Calls written inside reasoning only count when none are written outside.

    Qwen3 and Kimi put real calls in their thinking; Seed-OSS, LFM2 and others
    quote example calls there while the real call follows the block. A tag
    the reasoning only mentioned is dropped (``without_mentions``).
    """
    found = without_mentions(text, found)
    if not any(isinstance(f.call, ToolCall) for f in found):
        return found  # nothing outside could win over it
    spans = reasoning_spans(text)
    if not spans:
        return found
    outside = [f for f in found if not _inside(spans, f.start, f.end)]
    if any(isinstance(f.call, ToolCall) for f in outside):
        return outside
    return found


def _prop_schema(props: dict[str, Any], key: str) -> dict[str, Any] | None:
    prop = props.get(key)
    if prop is None:
        folded = {fold(k): k for k in props}
        real = folded.get(fold(key))
        prop = props.get(real) if real is not None else None
    return prop if isinstance(prop, dict) else None


def _unescaped_json(text: str) -> Any:
    """Read ``[{\\"a\\": 1}]``: JSON whose quotes arrived backslash-escaped."""
    stripped = text.strip()
    if "\\" not in stripped or stripped[:1] not in "[{":
        return None
    try:
        return loads_loose(json.loads(f'"{stripped}"'))
    except (ValueError, LooseJSONError):
        return None


def parameter_pairs(
    body: str, opener: re.Pattern[str], closer: str = "</parameter>"
) -> list[tuple[str, str]] | None:
    """``(name, raw value)`` of each ``<parameter…>value</parameter>`` in a body.

    A value may itself contain ``closer``, so each value ends at the last
    closer before the next opener. None when a parameter is never closed.
    """
    opens = list(opener.finditer(body))
    pairs: list[tuple[str, str]] = []
    for index, param in enumerate(opens):
        limit = opens[index + 1].start() if index + 1 < len(opens) else len(body)
        close = body.rfind(closer, param.end(), limit)
        if close < 0:
            return None
        pairs.append((param.group(1), body[param.end() : close]))
    return pairs


def typed_text_arguments(
    catalog: Catalog, name: str, pairs: Iterable[tuple[str, str]]
) -> dict[str, Any]:
    """Arguments from ``(key, raw text)`` pairs, typed from the tool's schema.

    A string parameter keeps its text; numbers, booleans, arrays and objects
    are read from the text. Keys the schema does not know stay text.
    """
    resolved = catalog.resolve(name)
    schema = catalog.schema(resolved) if resolved else {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    props = props if isinstance(props, dict) else {}
    args: dict[str, Any] = {}
    for key, raw in pairs:
        key = key.strip()
        prop = _prop_schema(props, key)
        value = coerce_text_value(prop, raw)
        if isinstance(value, str) and prop is not None:
            kinds = prop.get("type")
            kinds = kinds if isinstance(kinds, list) else [kinds]
            if "string" not in kinds and ({"array", "object"} & set(kinds)):
                decoded = _unescaped_json(value)
                if decoded is not None:
                    value = decoded
        args[key] = value
    return args


def positional_kwargs(
    catalog: Catalog, name: str, kwargs: dict[str, Any], positional: list[Any]
) -> dict[str, Any] | None:
    """Fold positional Python arguments into keyword ones by schema order.

    Required parameters come first, then the rest in declared order. None when
    there are more positional values than parameters to hold them.
    """
    if not positional:
        return kwargs
    resolved = catalog.resolve(name)
    schema = catalog.schema(resolved) if resolved else {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return None
    required = [k for k in schema.get("required") or () if k in props]
    order = [*required, *(k for k in props if k not in required)]
    free = [k for k in order if k not in kwargs]
    if len(positional) > len(free):
        return None
    merged = dict(zip(free, positional, strict=False))
    merged.update(kwargs)
    return merged


def marked_json_calls(
    text: str, pos: int, catalog: Catalog
) -> tuple[list[ToolCall | RejectedCall], int] | None:
    """JSON calls right after a call marker, where a cut-off payload still means a call.

    Like ``scan.json_calls_at``, but a payload that is never closed (generation
    stopped inside it) gives one ``RejectedCall`` instead of nothing, so it is
    reported and its text does not reach the content.
    """
    result = json_calls_at(text, pos, catalog)
    if result is not None:
        return result
    if pos < len(text) and text[pos] in "{[" and find_json_end(text, pos) < 0:
        raw = text[pos:]
        return [RejectedCall(name="", raw=raw, reason="call is truncated")], len(text)
    return None


def after_closer(text: str, end: int, closer: str) -> int:
    """Extend a span over an optional closing tag right after the JSON."""
    if not closer:
        return end
    nxt = skip_ws(text, end)
    if text.startswith(closer, nxt):
        return nxt + len(closer)
    return end


def token_json_calls(
    text: str, catalog: Catalog, opener: str, closer: str
) -> list[Found]:
    """Each ``opener`` followed by a JSON call object or array (and ``closer``).

    A cut-off payload is refused (``marked_json_calls``); an opener at the very
    end is markup with no call. At most ``MAX_BLOCKS`` openers are read (64 kB
    of openers stays cheap): the rest is refused (``refuse_unread``).
    """
    found: list[Found] = []
    pos = text.find(opener)
    for _ in range(MAX_BLOCKS):
        if pos < 0 or too_many(found, text, pos):
            return found
        body = skip_ws(text, pos + len(opener))
        result = marked_json_calls(text, body, catalog)
        nxt = pos + len(opener)
        if result is not None:
            calls, end = result
            end = after_closer(text, end, closer)
            found.extend(Found(pos, end, c) for c in calls or (None,))
            nxt = end
        elif body >= len(text):
            found.append(Found(pos, len(text), None))
        pos = text.find(opener, nxt)
    refuse_unread(found, text, pos, pos + len(opener) if pos >= 0 else -1)
    return found


# Why the text after ``MAX_BLOCKS`` call openings is refused unread.
TOO_MANY_BLOCKS = f"more than {MAX_BLOCKS} call blocks in one reply"


def refuse_unread(found: list[Found], text: str, pos: int, body: int = -1) -> None:
    """Refuse the text from ``pos`` on, left unread once a reader has looked at
    ``MAX_BLOCKS`` call openings, when the next one (its body at ``body``;
    -1: right at ``pos``) opens a JSON object or list of objects: never
    spoken, like the calls past ``MAX_CALLS``. An opening with nothing of a
    call after it (``[unused11][unused12]``) leaves the rest as text.
    ``pos`` -1: nothing left."""
    if pos < 0:
        return
    body = skip_ws(text, pos if body < 0 else body)
    if text.startswith("[", body):
        body = skip_ws(text, body + 1)
    if text.startswith("{", body):
        found.append(
            Found(
                pos, len(text), RejectedCall("", text[pos : pos + 200], TOO_MANY_BLOCKS)
            )
        )
