"""Finding call-shaped JSON, tag blocks and code fences in raw replies.

Shared by the JSON-carrying dialects so they agree on the safety rules: bare
JSON only at the start of the reply, a list whose later element was cut off
keeps its complete calls and rejects the rest, and ordinary JSON data (no call
shape) is left as text.
"""

from __future__ import annotations

from collections.abc import Iterator
import re
from typing import Any

from ..catalog import Catalog
from ..model import RejectedCall, ToolCall
from ..text.fences import Fence, find_fences
from .calls import Found, calls_from_value, reply_start
from .jsonrepair import (
    MAX_DEPTH,
    TOO_DEEP,
    LooseJSONError,
    TruncatedJSONError,
    bracket_end,
    find_json_end,
    loads_loose,
    skip_stray_closer,
    strict_json_at,
)
from .memo import memoized, once_per_reply
from .openers import JSON_CALL

__all__ = [
    "NAME_THEN_OBJECT",
    "TRUNCATED",
    "Fence",
    "find_fences",
    "json_calls_at",
    "json_error_at",
    "leading_json_calls",
    "prose_json_calls",
    "skip_ws",
    "tag_blocks",
]

# Where a call object (or a list of them) may start inside prose.
_CALLISH = re.compile(r"""\{\s*["']?(?:name|function|tool|tool_name|action)["']?\s*:""")


# More call blocks (or leading JSON values) than this in one reply is garbage;
# stop looking (linear time).
MAX_BLOCKS = 256

_WS = re.compile(r"[ \t\r\n]*")
_WS_CHARS = " \t\r\n"


def skip_ws(text: str, pos: int, limit: int | None = None) -> int:
    """First non-whitespace offset at or after ``pos`` (at most ``limit``)."""
    end = pos
    if pos < len(text) and text[pos] in _WS_CHARS:
        # Most runs are one newline: a regex call costs more than two looks.
        end = pos + 1
        if end < len(text) and text[end] in _WS_CHARS:
            # ``_WS`` matches everywhere (a starred class).
            end = _WS.match(text, end).end()  # type: ignore[union-attr]
    return end if limit is None or end < limit else limit


def _truncated(text: str, start: int, limit: int) -> RejectedCall:
    return RejectedCall(
        name="", raw=text[start:limit][:2000], reason="call is truncated"
    )


# What ``json_error_at`` says of a value generation stopped inside.
TRUNCATED, _INVALID = "truncated", "invalid"
_DEEP = f"nested deeper than {MAX_DEPTH} levels"
_REPAIR_LIMIT = 65_536


@once_per_reply
def _read(text: str, pos: int, limit: int) -> tuple[Any, int, str | None]:
    """``(value, end, error)`` for the JSON value at ``pos``.

    A chain runs several JSON dialects over the same reply: read once per
    reply (``once_per_reply``), the second and later reads of one value are
    free. Never longer: what a read answers depends on the reply's json5
    budget.
    """
    strict = strict_json_at(text, pos)
    if strict is not None and strict[1] <= limit:
        return (strict[0], strict[1], None)
    end = bracket_end(text, pos, limit)
    if end < 0 and limit - pos > _REPAIR_LIMIT:
        # A huge value that never closes is no call worth repairing.
        return (None, limit, TRUNCATED)
    if end == TOO_DEEP:
        # Refused by every rung: no repair reads a thousand levels to say so.
        return (None, -1, _DEEP)
    try:
        if end < 0:
            value = loads_loose(text[pos:limit].rstrip())
            end = limit
        else:
            value = loads_loose(text[pos:end])
    except TruncatedJSONError:
        return (None, end, TRUNCATED)
    except LooseJSONError as err:
        return (None, end, str(err) or _INVALID)
    return (value, end, None)


def json_error_at(text: str, pos: int, limit: int | None = None) -> str | None:
    """Why the JSON value at ``text[pos]`` cannot be read, or None if it can.

    Free after ``json_calls_at`` looked at the same value (the read is cached).
    """
    limit = len(text) if limit is None else min(limit, len(text))
    if pos >= limit or text[pos] not in "{[":
        return None
    return _read(text, pos, limit)[2]


def _array_salvage(
    text: str,
    start: int,
    limit: int,
    catalog: Catalog,
    id_style: str,
    require_arguments: bool,
) -> tuple[list[ToolCall | RejectedCall], int] | None:
    """Read ``[{...}, {...}`` element by element; keep complete calls."""
    calls: list[ToolCall | RejectedCall] = []
    pos = skip_ws(text, start + 1, limit)
    while pos < limit and text[pos] == "{":
        value, end, error = _read(text, pos, limit)
        if error == TRUNCATED or (
            error is None and end >= limit and text[end - 1] != "}"
        ):
            if not calls and not _CALLISH.match(text, pos):
                return None
            calls.append(_truncated(text, pos, limit))
            return calls, limit
        if error is not None:
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
        pos = skip_ws(text, end, limit)
        if pos < limit and text[pos] == ",":
            pos = skip_ws(text, pos + 1, limit)
    if pos < limit and text[pos] == "]":
        return (calls, pos + 1) if calls else None
    if calls and pos >= limit:
        return calls, limit
    return None


def json_calls_at(
    text: str,
    pos: int,
    catalog: Catalog,
    *,
    id_style: str = "openai",
    require_arguments: bool = False,
    limit: int | None = None,
) -> tuple[list[ToolCall | RejectedCall], int] | None:
    """Calls from the JSON object/array at ``text[pos]`` and the offset after it.

    None when there is no JSON there or it is not call-shaped. A truncated
    call-shaped object yields a ``RejectedCall``; a list keeps its complete
    calls and rejects the cut-off rest. One stray closer after the value is
    absorbed. ``limit`` bounds the search (e.g. a closing tag) without
    copying the text.
    """
    limit = len(text) if limit is None else min(limit, len(text))
    if pos >= limit or text[pos] not in "{[":
        return None
    value, end, error = _read(text, pos, limit)
    if error is not None:
        if text[pos] == "[":
            return _array_salvage(
                text, pos, limit, catalog, id_style, require_arguments
            )
        if error == TRUNCATED and _CALLISH.match(text, pos):
            return [_truncated(text, pos, limit)], limit
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
    return found, skip_stray_closer(text, end) if end < limit else end


@memoized
def leading_json_calls(
    text: str,
    catalog: Catalog,
    *,
    start: int | None = None,
    id_style: str = "openai",
    separators: str = ";,",
    require_arguments: bool = True,
    limit: int | None = None,
) -> list[Found]:
    """Bare JSON calls at the start of the reply (after reasoning/whitespace).

    Several values may follow each other, separated by whitespace or one of
    ``separators`` (Llama's ``;``). With prose first, only well-formed calls
    to catalog tools count (``prose_json_calls``). At most ``MAX_BLOCKS``
    values are read (a megabyte of ``[]`` stays linear and cheap); ``limit``
    ends the search (the next marker), so a run of markers is read once.
    """
    limit = len(text) if limit is None else min(limit, len(text))
    pos = reply_start(text) if start is None else skip_ws(text, start, limit)
    span_start = pos
    found: list[Found] = []
    for _ in range(MAX_BLOCKS):
        if pos >= limit or text[pos] not in "{[":
            break
        result = json_calls_at(
            text,
            pos,
            catalog,
            id_style=id_style,
            require_arguments=require_arguments,
            limit=limit,
        )
        if result is None:
            break
        calls, end = result
        found.extend(_spans(span_start, end, calls))
        nxt = skip_ws(text, end, limit)
        if nxt < limit and text[nxt] in separators:
            nxt = skip_ws(text, nxt + 1, limit)
        if nxt >= limit or text[nxt] not in "{[":
            break
        # The separator between two values belongs to the next call's span.
        span_start, pos = end, nxt
    if not found and start is None:
        return prose_json_calls(text, catalog, id_style=id_style)
    return found


_INLINE_OPEN = re.compile(r"```[A-Za-z]{0,12}[ \t]*\Z")


def _inline_fence(text: str, begin: int, end: int) -> tuple[int, int]:
    """The span widened over a fence written on the value's own line
    (```` ```json[...]``` ````), so no stray backticks stay in the content."""
    before = _INLINE_OPEN.search(text, max(0, begin - 16), begin)
    after = skip_ws(text, end, end + 16)
    if before is not None and text.startswith("```", after):
        return before.start(), after + 3
    return begin, end


def _after_tag(text: str, pos: int) -> bool:
    """Whether the last non-blank character before ``pos`` closes a tag."""
    floor = max(0, pos - 64)  # bounded: a megabyte of blanks stays linear
    while pos > floor and text[pos - 1] in " \t\r\n":
        pos -= 1
    return pos > 0 and text[pos - 1] == ">"


def prose_json_calls(
    text: str, catalog: Catalog, *, start: int = 0, id_style: str = "openai"
) -> list[Found]:
    """Call objects or arrays standing anywhere in prose.

    A user who asked for something wants it done, whatever text surrounds the
    call. What keeps prose safe is the shape, not the position: the value must
    name its arguments explicitly and every call in it must resolve to a
    catalog tool. Anything else (unknown tool, cut off, not a call) stays text.

    Two leftovers of calls are markup too: the ``;``/``,`` between two calls,
    and a call object the model abandoned mid-way (never closed) and wrote
    again inside (``{"name": "x", "parameters": {{"name": "x", ...}}``): the
    retry of the same tool spans from where the abandoned one started.
    """
    found: list[Found] = []
    pos = start
    last_end = -1  # end of the previous call found here
    abandoned = -1  # an unclosed call-shaped object the next call may retry
    abandoned_name = ""
    checks = _MAX_ABANDONED_CHECKS
    unclosed = _MAX_UNCLOSED
    for _ in range(MAX_BLOCKS):
        match = JSON_CALL.full.search(text, pos)
        if match is None:
            break
        begin = match.start()
        if _after_tag(text, begin):
            # Right after a tag (``<tool_call>``, ``<|python_tag|>``): that
            # tag's format owns the value, with its own rules for bad bodies.
            pos = match.end()
            continue
        result = json_calls_at(
            text, begin, catalog, id_style=id_style, require_arguments=True
        )
        if (
            result is not None
            and result[0]
            and all(isinstance(call, ToolCall) for call in result[0])
        ):
            calls, end = result
            span_begin, span_end = _inline_fence(text, begin, end)
            if abandoned >= 0 and abandoned_name == calls[0].name:
                span_begin = abandoned
            elif last_end >= 0 and _only_separator(text, last_end, span_begin):
                span_begin = last_end
            found.extend(_spans(span_begin, span_end, calls))
            pos = last_end = end
            abandoned = -1
            continue
        end = find_json_end(text, begin)  # free: the read above scanned it
        if end < 0 and len(text) - begin > _LONG_READ:
            # Never closed, or nested too deep, with much text after it: each
            # such read runs to the end, so a few are looked at, not thousands.
            unclosed -= 1
            if unclosed < 0:
                break
        # A list that is not all calls is data: skip it whole, not element-wise.
        if text[begin] == "[":
            pos = end if end > begin else match.end()
            continue
        if abandoned < 0 and checks > 0:
            checks -= 1
            named = _NAMED.match(text, begin)
            if named is not None and end < 0:
                # Never closed: the same call written again inside is its retry.
                abandoned = begin
                abandoned_name = catalog.resolve(named.group(1)) or ""
        pos = match.end()
    return found


# Unclosed call objects looked at per reply (each check may read to the end).
_MAX_ABANDONED_CHECKS = 4
# Unclosed values in prose read per reply, with more than ``_LONG_READ``
# characters after them, before the search gives up.
_MAX_UNCLOSED = 16
_LONG_READ = 4096
# A block body naming its tool (group 1) before a JSON object: Laguna and
# TeleChat4 (``NAME {``), GLM-5.3-Flash (``NAME>{``, ``Namespace/NAME>{``).
NAME_THEN_OBJECT = re.compile(
    r"(?:[A-Za-z_][\w.\-]*+/)?([A-Za-z_][\w.\-]*+)[ \t\r\n]*>?[ \t\r\n]*(?=\{)"
)
_NAMED = re.compile(r'\{[ \t\r\n]*"name"[ \t]*:[ \t]*"([^"\n]{1,128})"')
_SEPARATOR = re.compile(r"[ \t\r\n]*[;,][ \t\r\n]*")


def _holds(text: str, start: int, end: int, *words: str) -> bool:
    """Whether any of ``words`` stands in ``text[start:end]``."""
    return any(text.find(word, start, end) >= 0 for word in words)


def _only_separator(text: str, end: int, begin: int) -> bool:
    """Whether only a ``;`` or ``,`` (and blanks) stands between two calls."""
    return begin - end <= 64 and _SEPARATOR.fullmatch(text, end, begin) is not None


def _spans(start: int, end: int, calls: list[ToolCall | RejectedCall]) -> list[Found]:
    """One span per call; calls sharing one JSON value share its span."""
    if not calls:
        return [Found(start, end, None)]
    return [Found(start, end, call) for call in calls]


def tag_blocks(
    text: str, opener: str, closer: str
) -> Iterator[tuple[int, int, int, int]]:
    """Yield ``(start, body_start, body_end, end)`` for each ``opener...closer``.

    JSON-aware: a closer inside a JSON string in the body (or in the JSON
    object after a name that opens it) does not end the block. An unclosed block runs to the next opener or the end of the text.
    At most ``MAX_BLOCKS`` blocks are read.
    """
    size = len(text)
    pos = 0
    next_close = -2  # memo: first closer at/after some offset (-1: none left)
    for _ in range(MAX_BLOCKS):
        start = text.find(opener, pos)
        if start < 0:
            return
        body_start = start + len(opener)
        inner = skip_ws(text, body_start)
        search_from = body_start
        if inner < size and text[inner] in "{[":
            json_end = find_json_end(text, inner)
            if json_end > 0:
                search_from = json_end
        elif (named := NAME_THEN_OBJECT.match(text, inner)) is not None:
            json_end = find_json_end(text, named.end())  # ``NAME {..}``
            # Only an object closed before any closer or opener: an unbalanced
            # brace must not carry the block over the answer after it.
            if json_end > 0 and not _holds(text, named.end(), json_end, opener, closer):
                search_from = json_end
        if next_close == -2 or (0 <= next_close < search_from):
            next_close = text.find(closer, search_from)
        close = next_close
        nxt = text.find(opener, body_start) if search_from == body_start else -1
        if close < 0 or 0 <= nxt < close:
            # Never closed: the block runs to the next opener or the end.
            if search_from != body_start:
                nxt = text.find(opener, body_start)
            body_end = nxt if nxt >= 0 else size
            yield start, body_start, body_end, body_end
            if nxt < 0:
                return
            pos = nxt
            continue
        yield start, body_start, close, close + len(closer)
        pos = close + len(closer)
