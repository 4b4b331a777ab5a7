"""Gemma: ``tool_code`` fences, Gemma 4 ``<|tool_call>call:`` and FunctionGemma.

* Gemma 2/3 (prompted): ```` ```tool_code\\nfn(k='v')\\n``` ````, also
  ``print(default_api.fn(...))``. Other fences (``python``...) are example code
  and never dispatched.
* Gemma 4: ``<|tool_call>call:fn{k:<|"|>v<|"|>,n:50}<tool_call|>``; strings are
  delimited by ``<|"|>``, numbers and booleans are bare, objects and arrays
  nest. Seen variants: ``<turn|>`` as closer, ``<|tool_call>:call:``, a bare
  ``call:fn{...}`` after ``<channel|>`` or at a line start, ``<call>fn{...}``.
* FunctionGemma: ``<start_function_call>call:fn{k:<escape>v<escape>}<end_function_call>``.

Reasoning is ``<|channel>thought…<channel|>`` (split out by the core).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, override

from ..model import RejectedCall, ToolCall
from ..prompting.render import compact_catalog, result_text
from ..reading.calls import Found, build_result, make_call
from ..reading.jsonrepair import TruncatedJSONError
from ..reading.markup import (
    Finder,
    prefer_outside_reasoning,
    too_many,
)
from ..reading.numbers import read_number
from ..reading.pycall import PyCallError
from ..reading.scan import (
    find_fences,
    json_calls_at,
    skip_ws,
)
from .base import Dialect
from .pythonic import python_calls

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["GemmaDialect", "parse_gemma_object"]

_G4_QUOTE = '<|"|>'
_FG_QUOTE = "<escape>"
_NAME = r"([A-Za-z_][\w.\-]*)"
# Marked calls: the opener makes the call unambiguous.
_G4_CALL = re.compile(r"<\|tool_call>\s*:?\s*call\s*:\s*" + _NAME + r"\s*(?=\{)")
_FG_CALL = re.compile(r"<start_function_call>\s*call\s*:\s*" + _NAME + r"\s*(?=\{)")
# Unmarked variants: only for catalog names.
# Scanned for the literal "call" first (fast); where it may start is checked after.
_BARE_CALL = re.compile(
    r"(?:<call>)?call\s*:\s*" + _NAME + r"\s*(?=\{)|<call>" + _NAME + r"\s*(?=\{)"
)
# Where a bare value ends: a separator, or a string quote (an error there).
_STOPS = {q: re.compile(r"[,}\]]|" + re.escape(q)) for q in (_G4_QUOTE, _FG_QUOTE)}
_CLOSERS = ("<tool_call|>", "<turn|>", "<end_function_call>")
# The next ``call:`` entry: Gemma 4 writes several back to back, and inside
# one block also separated by a comma (mlx-lm reads every entry of a block).
_NEXT_CALL = re.compile(r"\s*call\s*:\s*" + _NAME + r"\s*(?=\{)")
_NEXT_ENTRY = re.compile(r"\s*(?:,\s*)?call\s*:\s*" + _NAME + r"\s*(?=\{)")
# What a bare key cannot hold: it would be a value or a separator.
_BAD_KEY = re.compile(r"[{}\[\],]")
_ESCAPED_QUOTE = {q: re.compile(rf"[{q}\\]") for q in "\"'"}


def _flat_patterns(quote: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The whole of a flat ``{k:v,...}`` object (no blanks, nothing nested,
    only ``quote`` strings and bare words), and one of its entries."""
    marker, rest = re.escape(quote), re.escape(quote[1:])  # both start with "<"
    text = rf"{marker}([^<]*(?:<(?!{rest})[^<]*)*){marker}"  # up to the first quote
    entry = rf"([A-Za-z_]\w*):(?:{text}|([\w.+-]+))"
    whole = re.compile(rf"\{{(?:{entry}(?:,{entry})*)?\}}")
    return whole, re.compile(entry)


# What Gemma 4 writes nearly always, read in two C-level passes (``_flat``).
_FLAT = {q: _flat_patterns(q) for q in (_G4_QUOTE, _FG_QUOTE)}
_TOOL_FENCES = ("tool_code", "tool_call", "tool_use")
_LEFTOVERS = re.compile(
    r"<\|tool_call>|<tool_call\|>|<start_function_call>|<end_function_call>"
    r"|<start_function_response>|<end_function_response>"
    r"|<\|tool_response>|<tool_response\|>|<turn\|>"
)
_CHANNEL_TOKENS = re.compile(r"<\|channel>(?:thought)?|<channel\|>")


class _GemmaArgs:
    """Reader for Gemma's brace syntax: ``{k:v,...}`` with a custom string quote."""

    __slots__ = ("pos", "quote", "stops", "text")

    def __init__(self, text: str, quote: str) -> None:
        self.text = text
        self.quote = quote
        self.pos = 0
        self.stops = _STOPS[quote]

    def need(self) -> str:
        """The next non-blank character, the position moved onto it."""
        text, pos = self.text, self.pos
        if pos < len(text) and text[pos] in " \t\r\n":
            pos = self.pos = skip_ws(text, pos)
        if pos >= len(text):
            raise TruncatedJSONError("arguments end early")
        return text[pos]

    def string(self) -> str:
        start = self.pos + len(self.quote)
        end = self.text.find(self.quote, start)
        if end < 0:
            raise TruncatedJSONError("string is never closed")
        self.pos = end + len(self.quote)
        return self.text[start:end]

    def quoted(self, quote: str) -> str:
        """A ``"…"`` (JSON, escapes read) or ``'…'`` string written in place of
        Gemma's own quote."""
        stop = _ESCAPED_QUOTE[quote]
        pos = self.pos + 1
        while True:
            found = stop.search(self.text, pos)
            if found is None:
                raise TruncatedJSONError("string is never closed")
            if self.text[found.start()] == "\\":
                pos = found.start() + 2
                continue
            break
        inner = self.text[self.pos + 1 : found.start()]
        self.pos = found.end()
        if quote == '"' and "\\" in inner:
            try:
                return str(json.loads(f'"{inner}"'))
            except ValueError:
                return inner
        return inner.replace("\\'", "'") if quote == "'" else inner

    def obj(self) -> dict[str, Any]:
        self.pos += 1  # "{"
        result: dict[str, Any] = {}
        while True:
            ch = self.need()
            if ch == "}":
                self.pos += 1
                return result
            if ch == ",":
                self.pos += 1
                continue
            if self.text.startswith(self.quote, self.pos):
                key = self.string()
            elif ch in "\"'":
                key = self.quoted(ch)
            else:
                colon = self.text.find(":", self.pos)
                if colon < 0:
                    raise TruncatedJSONError("key without value")
                key = self.text[self.pos : colon].strip()
                if not key or _BAD_KEY.search(key):
                    raise ValueError(f"bad key {key!r}")
                self.pos = colon
            if self.need() != ":":
                raise ValueError("expected ':'")
            self.pos += 1
            result[key] = self.value()

    def array(self) -> list[Any]:
        self.pos += 1  # "["
        result: list[Any] = []
        while True:
            ch = self.need()
            if ch == "]":
                self.pos += 1
                return result
            if ch == ",":
                self.pos += 1
                continue
            result.append(self.value())

    def value(self) -> Any:
        ch = self.need()
        if self.text.startswith(self.quote, self.pos):
            return self.string()
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.array()
        if ch in "\"'":
            return self.quoted(ch)
        start = self.pos
        stop = self.stops.search(self.text, start)
        if stop is None:
            raise TruncatedJSONError("value runs into the end")
        if stop.group(0) not in ",}]":
            raise ValueError("quote inside a bare value")
        self.pos = stop.start()
        word = self.text[start : self.pos].strip()
        return _scalar(word)


def _scalar(word: str) -> Any:
    if word in ("true", "True"):
        return True
    if word in ("false", "False"):
        return False
    if word in ("null", "None", "none"):
        return None
    number = read_number(word)  # NumberTooLongError is a ValueError: refused
    return word if number is None else number


def parse_gemma_object(text: str, start: int, quote: str) -> tuple[dict[str, Any], int]:
    """Read ``{...}`` at ``text[start]``; return the dict and the offset after it.

    Raises ``TruncatedJSONError`` when cut off, ``ValueError`` when malformed.
    """
    flat = _flat(text, start, quote)
    if flat is not None:
        return flat
    reader = _GemmaArgs(text, quote)
    reader.pos = start
    value = reader.obj()
    return value, reader.pos


def _flat(text: str, start: int, quote: str) -> tuple[dict[str, Any], int] | None:
    """``parse_gemma_object`` for a flat object, as ``_GemmaArgs`` reads it (each
    string ends at the first quote, each bare word is a ``_scalar``); None for
    any other shape."""
    whole, entry = _FLAT[quote]
    match = whole.match(text, start)
    if match is None:
        return None
    end = match.end()
    return {
        key: _scalar(bare) if bare else string
        for key, string, bare in entry.findall(text, start, end)
    }, end


def _strip_stray_channels(text: str) -> str:
    """Drop channel tokens that do not form a ``<|channel>thought…<channel|>`` pair.

    Paired blocks are left for the core, which reports them as reasoning.
    """
    pieces: list[str] = []
    pos = 0
    open_at = -1
    for match in _CHANNEL_TOKENS.finditer(text):
        token = match.group(0)
        if token == "<|channel>thought" and open_at < 0:
            open_at = match.start()
            continue
        if token == "<channel|>" and open_at >= 0:
            open_at = -1
            continue
        if open_at < 0:
            pieces.append(text[pos : match.start()])
            pos = match.end()
    pieces.append(text[pos:])
    return "".join(pieces)


def _bare_call_start(text: str, pos: int) -> bool:
    """A bare ``call:`` counts after ``<channel|>``, ``<call>`` or at a line start."""
    if text.startswith("<call>", pos) or text.endswith("<channel|>", 0, pos):
        return True
    while pos > 0 and text[pos - 1] in " \t":
        pos -= 1
    return pos == 0 or text[pos - 1] == "\n"


def _closer_end(text: str, pos: int) -> int:
    nxt = skip_ws(text, pos)
    for closer in _CLOSERS:
        if text.startswith(closer, nxt):
            return nxt + len(closer)
    return pos


class GemmaDialect(Dialect):
    """Gemma 3 ``tool_code``, Gemma 4 and FunctionGemma calls."""

    name = "gemma"
    # Channel tokens around no thought (llama.cpp's Gemma 4 edge cases).
    dropped = ("<|channel>", "<channel|>")
    # ``<call>``: a Gemma 4 call tag cut short (vLLM's multimodal test).
    markers = (
        "<|tool_call>",
        "<start_function_call>",
        "```tool_code",
        "```tool_call",
        "<call>",
    )
    # A bare ``call:NAME{…}`` opens a line (``_bare_call_start``): the stream
    # holds a line that starts so.
    start_markers = ("call:",)
    triggers = ("<|tool_call>", "<start_function_call>", "```tool_", "call:", "<call>")
    cleans = ("<",)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = self._braced(text, catalog, _G4_CALL, _G4_QUOTE)
        found += self._braced(text, catalog, _FG_CALL, _FG_QUOTE)
        if not found:
            found = self._braced(text, catalog, _BARE_CALL, _G4_QUOTE, known_only=True)
        found += self._fences(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _braced(
        self,
        text: str,
        catalog: Catalog,
        pattern: re.Pattern[str],
        quote: str,
        *,
        known_only: bool = False,
    ) -> list[Found]:
        found: list[Found] = []
        if "call" not in text:
            return found
        finder = Finder(text)
        for match in pattern.finditer(text):
            if too_many(found, text, match.start()):
                break
            # The pattern's one name group, or the one of its two that matched.
            name = match.group(1) or match.group(pattern.groups)
            if known_only and (
                catalog.resolve(name) is None
                or not _bare_call_start(text, match.start())
            ):
                continue
            # One block may hold several ``call:`` entries back to back.
            entry: re.Match[str] | None = match
            while entry is not None:
                if too_many(found, text, entry.start()):
                    return found
                if entry is not match:
                    name = entry.group(1)
                span, read = self._entry(text, catalog, entry, name, quote, finder)
                found.append(span)
                if not read:
                    break
                # Still inside the block when no closer ended the entry.
                in_block = text.startswith("}", span.end - 1)
                entry = (_NEXT_ENTRY if in_block else _NEXT_CALL).match(text, span.end)
            if found and found[-1].end >= len(text):
                break
        return found

    @staticmethod
    def _entry(
        text: str,
        catalog: Catalog,
        match: re.Match[str],
        name: str,
        quote: str,
        finder: Finder,
    ) -> tuple[Found, bool]:
        """One ``call:NAME{…}`` entry (with the block's closer, if it follows)
        and whether its arguments could be read."""
        raw_start = match.start()
        try:
            args, end = parse_gemma_object(text, match.end(), quote)
        except TruncatedJSONError:
            raw = text[raw_start:]
            refused = RejectedCall(name, raw, "call is truncated")
            return Found(raw_start, len(text), refused), False
        except (ValueError, RecursionError) as err:
            end = finder.find("}", match.end())
            end = len(text) if end < 0 else end + 1
            reason = f"cannot read arguments: {err}"
            refused = RejectedCall(name, text[raw_start:end], reason)
            return Found(raw_start, _closer_end(text, end), refused), False
        end = _closer_end(text, end)
        call = make_call(catalog, name, args, raw=text[raw_start:end], coerce=True)
        return Found(raw_start, end, call), True

    def _fences(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        if "```" not in text:
            return found
        for fence in find_fences(text):
            if fence.lang.lower() not in _TOOL_FENCES:
                continue
            body = text[fence.body_start : fence.body_end].strip()
            raw = text[fence.start : fence.end]
            closed = fence.body_end < fence.end
            calls: list[ToolCall | RejectedCall] | None = None
            if body[:1] in "{[":
                result = json_calls_at(body, 0, catalog)
                calls = result[0] if result else None
            elif body:
                try:
                    calls = python_calls(catalog, body, raw=raw)
                except PyCallError:
                    calls = None
            if calls is None and body and not closed:
                calls = [RejectedCall("", raw, "tool_code block is truncated")]
            if calls:
                found.extend([Found(fence.start, fence.end, c) for c in calls])
        return found

    @override
    def sanitize(self, text: str) -> str:
        if "<" in text:
            if "|" in text or "_function_" in text:  # in every leftover token
                text = _LEFTOVERS.sub("", text)
            if "channel" in text:
                text = _strip_stray_channels(text)
        return text

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can use these Python functions:\n"
            f"{compact_catalog(catalog)}\n\n"
            "To call functions, write only the call(s) in a tool_code block:\n"
            "```tool_code\nfunction_name(param='value')\n```\n"
            "Use keyword arguments with literal values. If no function is needed, "
            "answer normally."
        )

    @override
    def format_result(self, call: ToolCall, result: Any) -> str:
        return f"```tool_output\n{result_text(result)}\n```"
