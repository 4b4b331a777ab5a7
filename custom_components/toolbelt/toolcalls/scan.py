"""Finding call-shaped JSON, tag blocks and code fences in raw replies.

Shared by the JSON-carrying dialects so they agree on the safety rules: bare
JSON only at the start of the reply, a list whose later element was cut off
keeps its complete calls and rejects the rest, and ordinary JSON data (no call
shape) is left as text.
"""

from __future__ import annotations

from collections.abc import Iterator
import re

from .calls import Found, calls_from_value, reply_start
from .fences import Fence, find_fences
from .catalog import Catalog
from .jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    find_json_end,
    loads_loose,
    skip_stray_closer,
)
from .model import RejectedCall, ToolCall

__all__ = [
    "Fence",
    "find_fences",
    "json_calls_at",
    "leading_json_calls",
    "skip_ws",
    "tag_blocks",
]

_CALLISH = re.compile(r"""\{\s*["']?(?:name|function|tool|tool_name|action)["']?\s*:""")


def skip_ws(text: str, pos: int) -> int:
    """First non-whitespace offset at or after ``pos``."""
    n = len(text)
    while pos < n and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _truncated(text: str, start: int) -> RejectedCall:
    return RejectedCall(name="", raw=text[start:], reason="call is truncated")


def _array_salvage(
    text: str, start: int, catalog: Catalog, id_style: str, require_arguments: bool
) -> tuple[list[ToolCall | RejectedCall], int] | None:
    """Read ``[{...}, {...}`` element by element; keep complete calls."""
    calls: list[ToolCall | RejectedCall] = []
    pos = skip_ws(text, start + 1)
    while pos < len(text) and text[pos] == "{":
        end = find_json_end(text, pos)
        if end < 0:
            if not calls:
                return None
            calls.append(_truncated(text, pos))
            return calls, len(text)
        try:
            value = loads_loose(text[pos:end])
        except LooseJSONError:
            return None
        found = calls_from_value(
            value,
            catalog,
            raw=text[pos:end],
            id_style=id_style,
            require_arguments=require_arguments,
        )
        if found is None:
            return None
        calls.extend(found)
        pos = skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = skip_ws(text, pos + 1)
    if pos < len(text) and text[pos] == "]":
        return (calls, pos + 1) if calls else None
    if calls and pos >= len(text):
        return calls, len(text)
    return None


def json_calls_at(
    text: str,
    pos: int,
    catalog: Catalog,
    *,
    id_style: str = "openai",
    require_arguments: bool = False,
) -> tuple[list[ToolCall | RejectedCall], int] | None:
    """Calls from the JSON object/array at ``text[pos]`` and the offset after it.

    None when there is no JSON there or it is not call-shaped. A truncated
    call-shaped object yields a ``RejectedCall``; a list keeps its complete
    calls and rejects the cut-off rest. One stray closer after the value is
    absorbed.
    """
    if pos >= len(text) or text[pos] not in "{[":
        return None
    end = find_json_end(text, pos)
    try:
        if end < 0:
            value = loads_loose(text[pos:].rstrip())
            end = len(text)
        else:
            value = loads_loose(text[pos:end])
    except TruncatedJSONError:
        if text[pos] == "[":
            return _array_salvage(text, pos, catalog, id_style, require_arguments)
        if _CALLISH.match(text, pos):
            return [_truncated(text, pos)], len(text)
        return None
    except LooseJSONError:
        if text[pos] == "[":
            return _array_salvage(text, pos, catalog, id_style, require_arguments)
        return None
    found = calls_from_value(
        value,
        catalog,
        raw=text[pos:end],
        id_style=id_style,
        require_arguments=require_arguments,
    )
    if found is None:
        return None
    return found, skip_stray_closer(text, end)


def leading_json_calls(
    text: str,
    catalog: Catalog,
    *,
    start: int | None = None,
    id_style: str = "openai",
    separators: str = ";,",
    require_arguments: bool = True,
) -> list[Found]:
    """Bare JSON calls at the start of the reply (after reasoning/whitespace).

    Several values may follow each other, separated by whitespace or one of
    ``separators`` (Llama's ``;``). Prose before the JSON means no call: a
    model showing an example array is not calling anything.
    """
    pos = reply_start(text) if start is None else skip_ws(text, start)
    span_start = pos
    found: list[Found] = []
    while pos < len(text) and text[pos] in "{[":
        result = json_calls_at(
            text, pos, catalog, id_style=id_style, require_arguments=require_arguments
        )
        if result is None:
            break
        calls, end = result
        found.extend(_spans(span_start, end, calls))
        nxt = skip_ws(text, end)
        if nxt < len(text) and text[nxt] in separators:
            nxt = skip_ws(text, nxt + 1)
        if nxt >= len(text) or text[nxt] not in "{[":
            break
        # The separator between two values belongs to the next call's span.
        span_start, pos = end, nxt
    return found


def _spans(start: int, end: int, calls: list[ToolCall | RejectedCall]) -> list[Found]:
    """One span per call; calls sharing one JSON value share its span."""
    if not calls:
        return [Found(start, end, None)]
    return [Found(start, end, call) for call in calls]


def tag_blocks(
    text: str, opener: str, closer: str
) -> Iterator[tuple[int, int, int, int]]:
    """Yield ``(start, body_start, body_end, end)`` for each ``opener...closer``.

    JSON-aware: a closer inside a JSON string in the body does not end the
    block. An unclosed block runs to the end of the text.
    """
    pos = 0
    while True:
        start = text.find(opener, pos)
        if start < 0:
            return
        body_start = start + len(opener)
        inner = skip_ws(text, body_start)
        search_from = body_start
        if inner < len(text) and text[inner] in "{[":
            json_end = find_json_end(text, inner)
            if json_end > 0:
                search_from = json_end
        close = text.find(closer, search_from)
        # A new opener before the closer means this block was never closed.
        nxt = text.find(opener, body_start)
        if close < 0 or (0 <= nxt < close and search_from == body_start):
            body_end = nxt if nxt >= 0 else len(text)
            yield start, body_start, body_end, body_end
            if nxt < 0:
                return
            pos = nxt
            continue
        yield start, body_start, close, close + len(closer)
        pos = close + len(closer)
