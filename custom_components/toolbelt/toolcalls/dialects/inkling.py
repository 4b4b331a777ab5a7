"""Thinking Machines Inkling: blocks of one model message, each opened by a token.

A reply is a run of blocks, ``<|message_model|>`` then a kind token, the body,
and ``<|end_message|>`` (or ``<|content_model_end_sampling|>``):
``<|content_thinking|>`` is reasoning, ``<|content_text|>`` the answer, and
``NAME<|content_invoke_tool_json|>{"name": "NAME", "args": {..}}`` a call.
The text between ``<|message_model|>`` and the kind token is a header naming
the tool; when present it must match the payload's ``name`` (as SGLang checks),
else the call is refused. The template's generation prompt may open the
message, so a reply may start with a kind token or with the bare header.
``<|content_invoke_tool_text|>`` (a call whose input is raw text, for
free-form tools) has no JSON arguments: it is refused, asking for JSON.

Reasoning blocks are registered with the sanitizer (they open only with
Inkling's own tokens, so their closers end nothing else), which cuts them
whole and reports them as reasoning, and with the streaming detector, which
swallows them; this reader only skips them when it looks for calls.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..model import RejectedCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.jsonrepair import LooseJSONError, loads_loose
from ..reading.markup import too_many
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall

__all__ = ["InklingDialect"]

_MESSAGE = "<|message_model|>"
_THINKING = "<|content_thinking|>"
_TEXT = "<|content_text|>"
_JSON = "<|content_invoke_tool_json|>"
_RAW = "<|content_invoke_tool_text|>"
_END = "<|end_message|>"
_END_SAMPLING = "<|content_model_end_sampling|>"
_ENDS = (_END, _END_SAMPLING)

# ``<|message_model|>`` is a marker (what follows may be a tool's name), so the
# block kinds it opens that are no call are watched whole: the streaming
# detector swallows a thinking block and drops a text block's opening.
register_reasoning_delimiters(_THINKING, _ENDS)
register_reasoning_delimiters(_MESSAGE + _THINKING, _ENDS)

# A block kind this reader acts on.
_KIND = re.compile(r"<\|content_(?:thinking|invoke_tool_json|invoke_tool_text)\|>")
# Where a block's body ends: its end token, or the next message.
_STOP = re.compile(r"<\|(?:end_message|content_model_end_sampling|message_model)\|>")
# A header the prompt opened: a tool's name alone, with no opener before it.
_BARE_NAME = re.compile(r"[A-Za-z_][\w.:\-]{0,127}")
_SHAPE = 'write the call as {"name": "TOOL", "args": {...}}'


def _header(text: str, lo: int, kind: int, *, fresh: bool) -> tuple[int, str | None]:
    """``(start of the block, header or None)`` for the kind token at ``kind``.

    The header is the text after the last token before the kind (``lo``: the
    end of the previous block; ``fresh``: nothing but blocks before it). After
    ``<|message_model|>`` it is whatever stands there; without it, only a
    tool's name alone counts, at the start of the reply or after a block's
    end (the prompt opened the message), and other text before it is prose.
    """
    last = text.rfind("|>", lo, kind)
    seg = last + 2 if last >= 0 else lo
    header = text[seg:kind].strip()
    opener = seg - len(_MESSAGE)
    if opener >= lo and text.startswith(_MESSAGE, opener):
        return opener, header or None
    after_end = fresh if last < 0 else text.endswith(_ENDS, 0, seg)
    if header and after_end and _BARE_NAME.fullmatch(header):
        return seg + text[seg:kind].index(header), header
    return kind, None


def _payload(
    catalog: Catalog, header: str | None, body: str, raw: str, *, closed: bool
) -> ToolCall | RejectedCall:
    """One JSON call block read, or refused with a reason the model can act on."""
    shown = header or ""
    try:
        value = loads_loose(body) if body else None
    except LooseJSONError as err:  # ``TruncatedJSONError`` included
        if not closed:
            return RejectedCall(shown, raw, "call is truncated")
        return RejectedCall(shown, raw, f"the call is not valid JSON ({err}); {_SHAPE}")
    if not closed and not isinstance(value, dict):
        return RejectedCall(shown, raw, "call is truncated")
    if not isinstance(value, dict):
        return RejectedCall(shown, raw, f"the call is not a JSON object; {_SHAPE}")
    name, args = value.get("name"), value.get("args")
    if not isinstance(name, str) or not name.strip():
        return RejectedCall(shown, raw, f'the call has no "name"; {_SHAPE}')
    if not isinstance(args, dict):
        return RejectedCall(name, raw, f'"args" must be a JSON object; {_SHAPE}')
    if header is not None and header != name:
        return RejectedCall(
            name,
            raw,
            f"the header names {header!r} but the call names {name!r}:"
            " write the same tool name in both",
        )
    return make_call(catalog, name, args, raw=raw)


def _call(
    catalog: Catalog,
    token: str,
    header: str | None,
    body: str,
    raw: str,
    *,
    closed: bool,
) -> ToolCall | RejectedCall | None:
    """The call a block makes; None for prose that only names the token."""
    if header is None and (
        (token == _RAW and not closed)
        or (token == _JSON and body and body[0] not in "{[")
    ):
        return None
    if token == _RAW:  # raw text in, no JSON arguments: ask for JSON
        return RejectedCall(
            header or "",
            raw,
            f"write tool calls as JSON: {_MESSAGE}TOOL{_JSON}"
            '{"name": "TOOL", "args": {...}}' + _END,
        )
    return _payload(catalog, header, body, raw, closed=closed)


def _blocks(text: str, catalog: Catalog) -> list[Found]:
    """Every call block, in order; thinking blocks are skipped whole."""
    found: list[Found] = []
    pos = 0
    fresh = True  # ``pos`` is the start of the reply or the end of a block
    stop = _STOP.search(text)
    while (kind := _KIND.search(text, pos)) is not None:
        if stop is not None and stop.start() < kind.end():
            stop = _STOP.search(text, kind.end())  # else: still the next one
        body_end = stop.start() if stop else len(text)
        closed = stop is not None and stop.group(0) == _END
        # A next message is not consumed; an end token is.
        end = body_end if stop is None or stop.group(0) == _MESSAGE else stop.end()
        token = kind.group(0)
        if token == _THINKING:
            pos, fresh = end, True  # reasoning: its call tokens are no calls
            continue
        start, header = _header(text, pos, kind.start(), fresh=fresh)
        if too_many(found, text, start):
            break
        body = text[kind.end() : body_end].strip()
        call = _call(catalog, token, header, body, text[start:end], closed=closed)
        if call is None:
            pos, fresh = kind.end(), False  # prose naming the token: no call
            continue
        found.append(Found(start, end, call))
        pos, fresh = max(end, kind.end()), True
    return found


class InklingDialect(Dialect):
    """Inkling ``<|content_invoke_tool_json|>`` blocks, with a header check."""

    name = "inkling"
    markers = (_JSON, _RAW, _MESSAGE)
    triggers = ("<|content_invoke_tool_",)
    # The opening of a text block: the answer follows, never a call.
    dropped = (_MESSAGE + _TEXT,)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = _blocks(text, catalog)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these tools, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call a tool, write a message block with the tool's name, then"
            " the call as JSON:\n"
            f'{_MESSAGE}tool_name{_JSON}{{"name": "tool_name", "args": '
            f'{{"arg": "value"}}}}{_END}\n'
            "One block per call. If no tool is needed, answer normally."
        )
