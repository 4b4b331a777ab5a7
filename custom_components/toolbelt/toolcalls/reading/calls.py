"""Shared building blocks for dialects: call objects, ids, and the final result.

Every dialect finds call spans in its own wire format and then hands them to
these helpers, so the safety rules (allowlist, decode-once, truncation,
verbatim ids) and the content cleanup are the same for all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
import itertools
import operator
import re
import secrets
from typing import Any

from ..catalog import Catalog, fold
from ..model import (
    MAX_CALLS,
    ParseResult,
    RejectedCall,
    ToolCall,
    too_many_calls,
)
from ..text.fences import find_fences
from ..text.sanitize import clean
from .jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    decode_arguments,
    loads_loose,
)
from .reply import current_reply, probing

__all__ = [
    "UNKNOWN_TOOL",
    "Found",
    "build_result",
    "call_from_object",
    "calls_from_value",
    "make_call",
    "new_call_id",
    "reply_start",
]

_ARG_KEYS = ("arguments", "parameters", "args", "params", "input", "action_input")
_NAME_KEYS = ("tool", "tool_name", "recipient_name", "function_name", "action")
_ID_KEYS = ("id", "tool_call_id", "call_id")
_NOT_ACTIONS = frozenset({"finalanswer", "none", "answer", "respond", "noaction"})
_META_KEYS = frozenset({"id", "tool_call_id", "call_id", "type", "index"})
# The reason a call to a tool outside the catalog is refused with.
UNKNOWN_TOOL = "unknown tool"
# Names that stand for "a tool" in an example of call syntax: function_name,
# tool_name, func1, my_function, <function-name>, NAME, foo...
_PLACEHOLDER = re.compile(
    r"[<{\[(]?\s*(?:(?:my|your|some|example|the|a)[ _-]?)?"
    r"(?:func(?:tion)?|tool|method|fn|name|foo|bar|baz|example)"
    r"(?:[ _-]?(?:name|call|\d{1,2}))?[ _-]?\d{0,2}\s*[>})\]]?",
    re.I,
)


# Ids are unique, not secret: a random prefix per process and a counter, so a
# call costs no system call for randomness.
_ID_PREFIX = f"call_{secrets.token_hex(6)}"
_ID_COUNT = itertools.count()
_ID_MASK = (1 << 48) - 1


def new_call_id(style: str = "openai") -> str:
    """A fresh call id: ``call_<24 hex>``, or 9 alphanumerics for Mistral."""
    if style == "mistral":
        return secrets.token_hex(5)[:9]
    # The counter's low 48 bits as 12 hex digits (cheaper than a format spec).
    return _ID_PREFIX + (next(_ID_COUNT) & _ID_MASK).to_bytes(6).hex()


@dataclass(slots=True)
class Found:
    """One span of call markup in the raw reply and what it meant.

    ``call`` is None for markup that carries no call (e.g. an empty
    ``functools[]``): it is still cut from the content.
    """

    start: int
    end: int
    call: ToolCall | RejectedCall | None = None


def make_call(
    catalog: Catalog,
    name: Any,
    arguments: Any,
    *,
    raw: str = "",
    call_id: Any = None,
    id_style: str = "openai",
    coerce: bool = False,
) -> ToolCall | RejectedCall:
    """Resolve, decode and normalise one call; reject what must not dispatch.

    ``arguments`` may be a dict, a JSON string (decoded exactly once) or None.
    ``coerce`` types values from the schema (only for text-only formats).
    """
    resolved = catalog.resolve(name)
    if resolved is None:
        shown = name if isinstance(name, str) else repr(name)
        return RejectedCall(name=shown, raw=raw, reason=f"{UNKNOWN_TOOL}: {shown}")
    if type(arguments) is not dict:
        try:
            arguments = decode_arguments(arguments)
        except TruncatedJSONError:
            return RejectedCall(
                name=resolved, raw=raw, reason="arguments are truncated"
            )
        except LooseJSONError as err:
            return RejectedCall(
                name=resolved, raw=raw, reason=f"arguments are not valid JSON: {err}"
            )
    args = catalog.normalize_arguments(resolved, arguments, coerce=coerce)
    if name != resolved:  # ``resolve`` only answers a string
        # An alias may imply arguments (an action, for an action-based tool).
        args = {**args, **catalog.implied_arguments(name, resolved)}
    if call_id is None:  # the common case: the model gave no id
        call_id = new_call_id(id_style)
    else:
        if isinstance(call_id, int) and not isinstance(call_id, bool):
            call_id = str(call_id)
        if not isinstance(call_id, str) or not call_id.strip():
            call_id = new_call_id(id_style)
    # Positional: a class called with keywords costs twice as much.
    return ToolCall(call_id, resolved, args)


def _first(obj: dict[str, Any], keys: Iterable[str]) -> tuple[str | None, Any]:
    for key in keys:
        if key in obj:
            return key, obj[key]
    return None, None


# Keys of the shapes other than {"name": .., "arguments": ..}.
_SHAPE_KEYS = frozenset(
    {"functionCall", "function_call", "tool_call", "function", *_NAME_KEYS}
)
_PLAIN: Any = object()
_ABSENT: Any = object()


def _shaped_call(
    obj: dict[str, Any],
    catalog: Catalog,
    call_id: Any,
    raw: str,
    id_style: str,
    require_arguments: bool,
) -> ToolCall | RejectedCall | None:
    """A wrapped, ``function``-keyed or tool-named call; ``_PLAIN`` if none of those."""
    for wrapper in ("functionCall", "function_call", "tool_call"):
        inner = obj.get(wrapper)
        if isinstance(inner, dict):
            found = call_from_object(inner, catalog, raw=raw, id_style=id_style)
            if isinstance(found, ToolCall) and call_id is not None:
                found = ToolCall(
                    id=str(call_id), name=found.name, arguments=found.arguments
                )
            return found
    func = obj.get("function")
    if isinstance(func, dict) and isinstance(func.get("name"), str):
        _, args = _first(func, _ARG_KEYS)
        return make_call(
            catalog, func["name"], args, raw=raw, call_id=call_id, id_style=id_style
        )
    arg_key, args = _first(obj, _ARG_KEYS)
    if isinstance(func, str):
        if arg_key is None and require_arguments:
            return None
        return make_call(
            catalog, func, args, raw=raw, call_id=call_id, id_style=id_style
        )
    name_key, name = _first(obj, _NAME_KEYS)
    if isinstance(name, str) and name_key is not None:
        if name_key == "action" and (arg_key is None or fold(name) in _NOT_ACTIONS):
            return None  # JSON-blob ReAct's final answer is not a call
        if (
            name_key == "action"
            and isinstance(args, str)
            and loads_or_none(args) is None
        ):
            resolved = catalog.resolve(name)
            param = catalog.first_required_string(resolved) if resolved else None
            args = {param: args} if param else {}
        if arg_key is None:
            if require_arguments and name_key != "tool":
                return None
            args = {
                k: v for k, v in obj.items() if k != name_key and k not in _META_KEYS
            }
        return make_call(
            catalog, name, args, raw=raw, call_id=call_id, id_style=id_style
        )
    return _PLAIN


def call_from_object(
    obj: Any,
    catalog: Catalog,
    *,
    raw: str = "",
    id_style: str = "openai",
    require_arguments: bool = False,
) -> ToolCall | RejectedCall | None:
    """Read one JSON object in any common call shape; None if not call-shaped.

    Shapes: ``{name, arguments|parameters|args}``, OpenAI ``{function: {name,
    arguments}}``, ``{function: NAME, parameters}``, ``{tool|tool_name: NAME,
    ...}`` (flat arguments when no argument key), Gemini ``{functionCall:
    {name, args}}`` and JSON-blob ReAct ``{action, action_input}``.
    ``require_arguments`` (for untagged JSON) demands an explicit argument key.
    """
    if not isinstance(obj, dict):
        return None
    if len(obj) == 2 and type(name := obj.get("name")) is str:
        # The shape most models write: {"name": .., "arguments"|"parameters": ..}.
        args = obj.get("arguments", _ABSENT)
        if args is _ABSENT:
            args = obj.get("parameters", _ABSENT)
        if args is not _ABSENT:
            return make_call(catalog, name, args, raw=raw, id_style=id_style)
    keys = obj.keys()
    call_id = None if keys.isdisjoint(_ID_KEYS) else _first(obj, _ID_KEYS)[1]
    arg_key: str | None
    if "arguments" in obj:  # the first of ``_ARG_KEYS``, the one most models write
        arg_key, args = "arguments", obj["arguments"]
    else:
        arg_key, args = _first(obj, _ARG_KEYS)
    if not keys.isdisjoint(_SHAPE_KEYS):
        # Not the common {"name": .., "arguments": ..}: one of the other shapes?
        shaped = _shaped_call(obj, catalog, call_id, raw, id_style, require_arguments)
        if shaped is not _PLAIN:
            return shaped
    name = obj.get("name")
    if not isinstance(name, str):
        return None
    if arg_key is None:
        if require_arguments:
            return None
        extra = {k: v for k, v in obj.items() if k != "name" and k not in _META_KEYS}
        args = extra
    return make_call(catalog, name, args, raw=raw, call_id=call_id, id_style=id_style)


def loads_or_none(text: str) -> Any:
    """Loose JSON or None (for "is this a JSON object?" questions)."""
    try:
        value = loads_loose(text)
    except LooseJSONError:
        return None
    return value if isinstance(value, dict) else None


def calls_from_value(
    value: Any,
    catalog: Catalog,
    *,
    raw: str = "",
    id_style: str = "openai",
    require_arguments: bool = False,
) -> list[ToolCall | RejectedCall] | None:
    """Calls from an object, a list of objects, or ``{"tool_calls": [...]}``.

    None when the value is not call-shaped (any element that is not a call
    makes the whole list not a call list, so ordinary JSON data stays text).
    An empty list gives ``[]``.
    """
    if isinstance(value, dict):
        listed = value.get("tool_calls")
        if not isinstance(listed, list):
            one = call_from_object(
                value,
                catalog,
                raw=raw,
                id_style=id_style,
                require_arguments=require_arguments,
            )
            return None if one is None else [one]
        value = listed
    if isinstance(value, list):
        result: list[ToolCall | RejectedCall] = []
        for item in value:
            one = call_from_object(
                item,
                catalog,
                raw=raw,
                id_style=id_style,
                require_arguments=require_arguments,
            )
            if one is None:
                return None
            result.append(one)
        return result
    return None


# Possessive: the run of leading pieces is taken whole, in one C-level match.
_LEADING = re.compile(
    r"(?:\s+|<think>.*?</think>|<\|im_start\|>assistant|<\|start_header_id\|>assistant"
    r"<\|end_header_id\|>|<\|python_tag\|>|<\|START_RESPONSE\|>|\[THINK\].*?\[/THINK\])*+",
    re.S,
)


def reply_start(text: str) -> int:
    """Offset where the reply proper begins: after leading whitespace,
    reasoning blocks and role tokens (a lone ``</think>`` ends reasoning too).
    Bare JSON/array calls only count when they start here.
    """
    pos = 0
    lone = text.find("</think>")
    if lone >= 0 and text.find("<think>", 0, lone) < 0:
        pos = lone + len("</think>")
    first = text[pos : pos + 1]
    if first != "<" and first != "[" and not first.isspace():
        return pos  # no leading piece starts here (``\s`` is ``isspace``)
    return _LEADING.match(text, pos).end()  # type: ignore[union-attr]  # a starred group


def placeholder_name(name: str) -> bool:
    """Whether ``name`` stands for "some tool" (``function_name``, ``func1``)."""
    return _PLACEHOLDER.fullmatch(name) is not None


def _example(span: Found) -> bool:
    """A refused call to a placeholder name: call syntax shown, not a call."""
    call = span.call
    return (
        isinstance(call, RejectedCall)
        and call.reason.startswith(UNKNOWN_TOOL)
        and placeholder_name(call.name)
    )


def _without_examples(
    text: str, spans: list[Found], known: set[tuple[int, int]]
) -> list[Found]:
    """Drop calls to placeholder names shown in a closed code fence.

    A fence of such calls (and nothing that dispatches) is an example of the
    syntax in an answer ("write it like this: ..."): it stays whole in the
    content, and nothing goes back to the model as refused. So does a fence
    another format's reader found to be one (``known``, which this adds to):
    what this reader refuses in it is the example's syntax it cannot read.
    A call starts in the fence (MiniCPM's own inner fence may close it).
    """
    fences = [f for f in find_fences(text) if f.body_end < f.end]
    if not fences:
        return spans
    dropped: set[int] = set()
    for fence in fences:
        inside = [
            i
            for i, span in enumerate(spans)
            if fence.start <= span.start < fence.body_end
        ]
        if not inside:
            continue
        examples = [_example(spans[i]) for i in inside]
        if any(examples) and all(
            shown or spans[i].call is None
            for i, shown in zip(inside, examples, strict=True)
        ):
            known.add((fence.start, fence.end))
        elif (fence.start, fence.end) not in known or any(
            isinstance(spans[i].call, ToolCall) for i in inside
        ):
            continue
        dropped.update(inside)
    return [span for i, span in enumerate(spans) if i not in dropped]


def _wrapping_fences(text: str, spans: list[Found]) -> list[Found]:
    """Fences whose body is nothing but call markup go with the calls."""
    extra: list[Found] = []
    for fence in find_fences(text):
        inside = [
            f
            for f in spans
            if fence.body_start <= f.start < fence.body_end and f.end <= fence.end
        ]
        if not inside:
            continue
        pos = fence.body_start
        leftover: list[str] = []
        for span in inside:
            leftover.append(text[pos : span.start])
            pos = max(pos, min(span.end, fence.body_end))
        leftover.append(text[pos : fence.body_end])
        if not "".join(leftover).strip():
            extra.append(Found(fence.start, fence.end, None))
    return extra


# Spans in text order (a C-level key).
_span_order = operator.attrgetter("start", "end")


def _probed_nothing() -> ParseResult:
    """What a chain member that found no call markup answers: a new result
    each time, since a dialect may amend the one it is given (a shared one,
    amended once by gpt_oss, made every later reply look like markup)."""
    return ParseResult([], "", "", None, True, None, [])


def build_result(
    text: str,
    found: Sequence[Found],
    dialect: str | None,
    *,
    text_parsed: bool = True,
    sanitize: Callable[[str], str] | None = None,
) -> ParseResult:
    """Cut the call spans out of ``text`` and clean what is left.

    Spans may overlap or be unordered; the content is the raw text without
    them, minus reasoning and leaked scaffolding (``sanitize`` adds a
    dialect's own cleanup). ``end`` is the offset after the last span.
    """
    if not found and probing():
        # A chain is only asking "any calls?": skip the content work.
        return _probed_nothing()
    if len(found) == 1 and "```" not in text:
        return _one_span_result(text, found[0], dialect, text_parsed, sanitize)
    spans = sorted(found, key=_span_order) if len(found) > 1 else list(found)
    if spans and "```" in text:
        reply = current_reply()
        known = reply.examples if reply is not None else set()
        if known or any(_example(span) for span in spans):
            spans = _without_examples(text, spans, known)
            if not spans and probing():
                return _probed_nothing()
        if spans:
            spans = sorted([*spans, *_wrapping_fences(text, spans)], key=_span_order)
    pieces: list[str] = []
    calls: list[ToolCall] = []
    rejected: list[RejectedCall] = []
    pos = 0
    over = -1  # where the first call past ``MAX_CALLS`` starts
    for span in spans:
        if span.start > pos:
            pieces.append(text[pos : span.start])
        pos = max(pos, span.end)
        call = span.call
        if isinstance(call, ToolCall):
            if len(calls) < MAX_CALLS:
                calls.append(call)
            elif over < 0:
                over = span.start
        elif call is not None:
            rejected.append(call)
    if over >= 0:
        # However the format groups them (a list of a hundred calls is one
        # block), the first ``MAX_CALLS`` are read and the rest is one refusal.
        rejected.append(too_many_calls(text[over : over + 200]))
    pieces.append(text[pos:])
    remaining = "\n".join([p for p in pieces if p]) if len(pieces) > 1 else pieces[0]
    content, reasoning = clean(remaining, sanitize)
    # The offset after the last span (``pos`` only grows).
    end = pos if spans else None
    # Positional, in field order: a class called with keywords costs twice as much.
    return ParseResult(calls, content, reasoning, dialect, text_parsed, end, rejected)


def _one_span_result(
    text: str,
    span: Found,
    dialect: str | None,
    text_parsed: bool,
    sanitize: Callable[[str], str] | None,
) -> ParseResult:
    """``build_result`` of one span in a reply without fences (most replies)."""
    end = max(span.end, 0)
    before = text[: span.start] if span.start > 0 else ""
    after = text[end:]
    content, reasoning = clean(
        f"{before}\n{after}" if before and after else before or after, sanitize
    )
    call = span.call
    calls = [call] if isinstance(call, ToolCall) else []
    rejected = [call] if isinstance(call, RejectedCall) else []
    # Positional, in field order (as in ``build_result``).
    return ParseResult(calls, content, reasoning, dialect, text_parsed, end, rejected)
