"""Hermes / legacy XML: ``<tool_call>{"name": .., "arguments": ..}</tool_call>``.

Also the wrappers llama.cpp accepts (``<function_call>``, ``<tool>``,
``<tools>``, ``<response>``, ``<json>``, ``<xml>``, ``<function name="..">``,
``<function=..>``), arrays inside the tag, an unclosed tag, and a bare JSON
call at the very start of the reply. Two families name the tool before its
JSON arguments: Step-Audio 2 (``<tool_call>function\nNAME\n{..}</tool_call>``)
and Meta's CWM (``<tool: function>\nNAME {..}\n</tool>``; a rest that is not
JSON is the tool's ``command``, as vLLM reads it). Poolside Laguna and TeleChat4
write a catalog tool's name, then its JSON arguments (``<tool_call>NAME\n{..}``).
"""

from __future__ import annotations

import json
import operator
import re
from typing import Any, ClassVar, override

from ..catalog import Catalog
from ..model import (
    ParseResult,
    RejectedCall,
    ToolCall,
)
from ..prompting.render import json_catalog, result_text
from ..reading.calls import Found, build_result, call_from_object, make_call
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    find_json_end,
    loads_loose,
)
from ..reading.markup import (
    Finder,
    prefer_outside_reasoning,
    too_many,
    without_mentions,
)
from ..reading.openers import JSON_CALL, InlineOpener
from ..reading.scan import (
    MAX_BLOCKS,
    NAME_THEN_OBJECT,
    json_calls_at,
    json_error_at,
    leading_json_calls,
    skip_ws,
    tag_blocks,
)
from .base import Dialect
from .markdown_json import fenced_json_calls

__all__ = ["HermesDialect", "body_calls", "json_block", "parse_tagged"]

# (opener, closer, strong): a strong tag is always call markup, so a body we
# cannot read is rejected (and cut); a weak tag only counts with a call inside.
HERMES_TAGS: tuple[tuple[str, str, bool], ...] = (
    ("<tool_call>", "</tool_call>", True),
    ("<function_call>", "</function_call>", True),
    ("<functioncall>", "</functioncall>", True),
    ("<tools>", "</tools>", True),
    ("<tool>", "</tool>", True),
    ("<response>", "</response>", False),
    ("<json>", "</json>", False),
    ("<xml>", "</xml>", False),
    ("<JSON>", "</JSON>", False),
    ("<XML>", "</XML>", False),
)
# Every Hermes opener in one scan: each is ``<`` + letters/``_`` + ``>``, so
# no two occurrences overlap and ``findall`` sees each one.
_HERMES_OPENERS = re.compile("|".join(re.escape(tag[0]) for tag in HERMES_TAGS))
_HERMES_BY_OPENER = {tag[0]: tag for tag in HERMES_TAGS}
_MAX_OPENERS = 256
# A name never holds "<": a run of ``<function=`` openers fails each at once
# (possessive), not after reading to the end of the text (quadratic).
_FUNCTION_TAG = re.compile(
    r"""<function(?:\s+name\s*=\s*["']([^"'<>]+)["']|=([^<>\s]++))\s*>"""
)
# Step-Audio 2's body: the call type on its own line, then the tool's name.
_TYPED_NAME = re.compile(
    r"function[ \t]*\r?\n[ \t]*([A-Za-z_][\w.\-]*+)[ \t]*(?=\r?\n|$)"
)
# CWM: ``<tool: LABEL>`` (the label says nothing), the name on the next line,
# then the arguments; a label in a sentence (``as <tool: bash> blocks``) is prose.
_LABELLED_TOOL = re.compile(r"<tool:[ \t]*[^>\s]{1,64}[ \t]*>(?=[ \t]*\r?\n)")
_NAME_FIRST = re.compile(r"\s*([A-Za-z_][\w.\-]*+)")
# A harmony recipient header in the tag (SGLang's multi_format detector):
# ``[assistant ]to=functions.NAME[ json]`` before the JSON arguments.
_RECIPIENT = re.compile(
    r"(?:assistant[ \t]+)?to=functions\.([A-Za-z_][\w.\-]*+)(?:[ \t]+json)?[ \t\r\n]*(?=\{)"
)


def _tag_calls(
    text: str, catalog: Catalog, tags: tuple[tuple[str, str, bool], ...], id_style: str
) -> list[Found]:
    found: list[Found] = []
    for opener, closer, strong in _present(text, tags):
        for start, body_start, body_end, end in tag_blocks(text, opener, closer):
            if too_many(found, text, start):
                return found  # the rest of the text is refused with them
            pos = skip_ws(text, body_start)
            if pos < body_end and text[pos] in "{[":
                calls = body_calls(text, pos, body_end, catalog, id_style)
                if calls is not None:
                    found += [Found(start, end, call) for call in calls]
                    if not calls:
                        found.append(Found(start, end, None))
                    continue
            if strong and (named := _TYPED_NAME.match(text, pos, body_end)):
                raw = text[start:end]
                call = _named_call(text, named, body_end, raw, catalog, id_style)
                found.append(Found(start, end, call))
                continue
            if strong and (bare := _name_then_json(text, pos, body_end, catalog)):
                found.append(Found(start, end, bare))
                continue
            if strong:
                body = text[body_start:body_end].strip()
                # No closer (body_end == end) means generation stopped inside.
                reason = (
                    "call is truncated"
                    if body_end == end
                    else _invalid_reason(text, pos, body_end)
                )
                if not body:
                    found.append(Found(start, end, None))
                else:
                    found.append(
                        Found(start, end, RejectedCall("", text[start:end], reason))
                    )
    return found


def _present(
    text: str, tags: tuple[tuple[str, str, bool], ...]
) -> tuple[tuple[str, str, bool], ...] | list[tuple[str, str, bool]]:
    """The ``tags`` whose opener is in ``text``, in order (Hermes' ten: one scan)."""
    if tags is not HERMES_TAGS or text.count("<") > _MAX_OPENERS:
        # Another family's tags, or a text made of tags: one search per tag,
        # not a list of every opener.
        return [tag for tag in tags if tag[0] in text]
    present = _HERMES_OPENERS.findall(text) if "<" in text else ()
    if not present:
        return ()
    if present.count(present[0]) == len(present):
        return (_HERMES_BY_OPENER[present[0]],)  # one kind of tag (most replies)
    return [tag for tag in tags if tag[0] in present]


def body_calls(
    text: str, pos: int, limit: int, catalog: Catalog, id_style: str
) -> list[ToolCall | RejectedCall] | None:
    """Every JSON value in one tag body: templates that range over the calls
    inside one tag write them back to back, or separated by ``,``/newlines.

    None when the first value is not call-shaped; a later value that is not
    ends the list (what follows it is left to the tag's own rules).
    """
    calls: list[ToolCall | RejectedCall] = []
    for _ in range(MAX_BLOCKS):
        result = json_calls_at(text, pos, catalog, id_style=id_style, limit=limit)
        if result is None:
            return calls if calls else None
        more, end = result
        calls.extend(more)
        pos = skip_ws(text, end, limit)
        if pos < limit and text[pos] == ",":
            pos = skip_ws(text, pos + 1, limit)
        if pos >= limit or text[pos] not in "{[":
            break
    return calls


def json_block(
    text: str, catalog: Catalog, block: tuple[int, int, int, int]
) -> list[Found]:
    """One tag block (``tag_blocks``' tuple) of a family whose tags hold JSON
    calls: its calls, empty markup, or a refusal; the block is never spoken."""
    start, body_start, body_end, end = block
    pos = skip_ws(text, body_start)
    calls = None
    if pos < body_end and text[pos] in "{[":
        calls = body_calls(text, pos, body_end, catalog, "openai")
    if calls:
        return [Found(start, end, call) for call in calls]
    if pos >= body_end:
        return [Found(start, end, None)]  # an empty block
    reason = "call is truncated" if body_end == end else "not a call"
    return [Found(start, end, RejectedCall("", text[start:end], reason))]


def _named_call(
    text: str,
    name: re.Match[str],
    body_end: int,
    raw: str,
    catalog: Catalog,
    id_style: str,
    *,
    command: bool = False,
) -> ToolCall | RejectedCall:
    """The call of a body that names its tool, then writes its JSON arguments.

    ``command``: a rest that is not JSON is the tool's ``command`` (CWM).
    """
    rest = text[name.end() : body_end].strip()
    if not rest:
        return make_call(catalog, name.group(1), {}, raw=raw, id_style=id_style)
    if command and rest[0] not in "{[":
        args: Any = {"command": rest}
    else:
        try:
            args = loads_loose(rest)
        except TruncatedJSONError:
            return RejectedCall(name.group(1), raw, "call is truncated")
        except LooseJSONError as err:
            return RejectedCall(name.group(1), raw, f"arguments are not JSON: {err}")
    return make_call(catalog, name.group(1), args, raw=raw, id_style=id_style)


def _name_then_json(
    text: str, pos: int, body_end: int, catalog: Catalog
) -> ToolCall | RejectedCall | None:
    """``NAME {..}`` (Laguna, TeleChat4; GLM-5.3-Flash's ``Namespace/NAME>{..}``,
    often unclosed; ``to=functions.NAME {..}``): a catalog tool's name, then its JSON
    arguments; what follows the object is dropped with the block, as Ollama
    drops a repeated opener. None when the body is not that."""
    named = NAME_THEN_OBJECT.match(text, pos, body_end) or _RECIPIENT.match(
        text, pos, body_end
    )
    if named is None or catalog.resolve(named.group(1)) is None:
        return None
    end = find_json_end(text, named.end())
    if not 0 < end <= body_end:
        return None
    try:
        args = loads_loose(text[named.end() : end])
    except LooseJSONError:
        return None
    raw = text[pos:body_end]
    # The object may be the whole call (``NAME\n{"name": NAME, "arguments":
    # {..}}``): the name before it is a stray word, not the call's name.
    whole = call_from_object(args, catalog, raw=raw, require_arguments=True)
    if whole is not None and whole.name == catalog.resolve(named.group(1)):
        return whole
    return make_call(catalog, named.group(1), args, raw=raw)


def _labelled_tool_calls(text: str, catalog: Catalog, id_style: str) -> list[Found]:
    """CWM's ``<tool: function>\\nNAME {..}\\n</tool>`` blocks; an unclosed
    one was cut off (it runs to the next block or the end)."""
    found: list[Found] = []
    finder = Finder(text)
    for match in _LABELLED_TOOL.finditer(text):
        if too_many(found, text, match.start()):
            break
        close = finder.find("</tool>", match.end())
        following = _LABELLED_TOOL.search(text, match.end())
        limit = following.start() if following else len(text)
        if 0 <= close < limit:
            body_end, end = close, close + len("</tool>")
        else:
            body_end = end = limit
        raw = text[match.start() : end]
        pos = skip_ws(text, match.end(), body_end)
        if pos < body_end and text[pos] in "{[":  # a Hermes JSON body
            calls = body_calls(text, pos, body_end, catalog, id_style)
            if calls:
                found += [Found(match.start(), end, call) for call in calls]
                continue
        name = _NAME_FIRST.match(text, match.end(), body_end)
        if name is None:
            call: ToolCall | RejectedCall | None = (
                None
                if not text[match.end() : body_end].strip()
                else RejectedCall("", raw, "call names no tool")
            )
        elif body_end == end:
            call = RejectedCall(name.group(1), raw, "call is truncated")
        else:
            call = _named_call(
                text, name, body_end, raw, catalog, id_style, command=True
            )
        found.append(Found(match.start(), end, call))
    return found


def _invalid_reason(text: str, pos: int, limit: int) -> str:
    """Why a closed call block is refused, in the JSON reader's words if it has some."""
    why = json_error_at(text, pos, limit)
    return f"call is not valid JSON: {why}" if why else "call is not valid JSON"


def _function_tag_calls(text: str, catalog: Catalog, id_style: str) -> list[Found]:
    """``<function name="X">{args}</function>`` and ``<function=X>{args}</function>``."""
    found: list[Found] = []
    for match in _FUNCTION_TAG.finditer(text):
        if too_many(found, text, match.start()):
            break
        name = match.group(1) or match.group(2)
        pos = skip_ws(text, match.end())
        if pos >= len(text) or text[pos] != "{":
            continue  # XML parameters: the qwen3_coder_xml dialect's job
        end = find_json_end(text, pos)
        raw_end = len(text) if end < 0 else end
        try:
            args: Any = loads_loose(text[pos:raw_end])
        except TruncatedJSONError:
            rejected = RejectedCall(name, text[match.start() :], "call is truncated")
            found.append(Found(match.start(), len(text), rejected))
            continue
        except LooseJSONError:
            continue
        close = skip_ws(text, raw_end)
        if text.startswith("</function>", close):
            raw_end = close + len("</function>")
        call = make_call(
            catalog, name, args, raw=text[match.start() : raw_end], id_style=id_style
        )
        found.append(Found(match.start(), raw_end, call))
    return found


# Labels a family writes on the line before its JSON call (fenced or bare).
_LABELS = ("**Tool Call:**", "-> tool/function_call")
_LABEL = re.compile(
    r"(?:\*\*Tool Call:\*\*|->[ \t]*tool/function_call)[ \t]*(?:\r?\n[ \t]*)?\Z"
)
_START = operator.attrgetter("start")
_END = operator.attrgetter("end")


def _drop_overlaps(found: list[Found]) -> list[Found]:
    """Keep spans in order; a span starting inside a kept one is a duplicate."""
    if len(found) < 2:
        return found
    kept: list[Found] = []
    limit = -1
    last_start = -1
    # By start, then the longest first: two stable C-level sorts, no key call.
    for span in sorted(sorted(found, key=_END, reverse=True), key=_START):
        if span.start < limit and span.start != last_start:
            continue
        kept.append(span)
        if span.start != last_start:
            last_start = span.start
        limit = max(limit, span.end)
    return kept


def _json_outside(text: str, found: list[Found]) -> bool:
    """Whether a ``{`` or ``[`` lies outside the spans found so far.

    A bare call object inside a span is dropped with it (``_drop_overlaps``),
    so when every bracket is inside one (the common one-tagged-call reply) the
    scans for bare calls are skipped: they would find only those.
    """
    pos = 0
    for span in sorted(found, key=_START) if len(found) > 1 else found:
        if span.start > pos and _has_bracket(text, pos, span.start):
            return True
        pos = max(pos, span.end)
    return _has_bracket(text, pos, len(text))


def _has_bracket(text: str, start: int, end: int) -> bool:
    return text.find("{", start, end) >= 0 or text.find("[", start, end) >= 0


def _with_labels(text: str, found: list[Found]) -> list[Found]:
    """Each call span widened over a label written right before it (RWKV's
    ``**Tool Call:**``, HyperCLOVA X SEED's `` -> tool/function_call``
    header): the label goes with the call, unspoken."""
    wider: list[Found] = []
    for span in found:
        label = _LABEL.search(text, max(0, span.start - 64), span.start)
        if span.call is not None and label is not None:
            span = Found(label.start(), span.end, span.call)
        wider.append(span)
    return wider


def parse_tagged(
    text: str,
    catalog: Catalog,
    *,
    tags: tuple[tuple[str, str, bool], ...] = HERMES_TAGS,
    function_tags: bool = True,
    bare: bool = True,
    id_style: str = "openai",
) -> list[Found]:
    """All Hermes-style call spans in ``text`` (tags, function tags, bare start)."""
    found = _tag_calls(text, catalog, tags, id_style)
    if function_tags and "<function" in text:
        found.extend(_function_tag_calls(text, catalog, id_style))
    if function_tags and "<tool:" in text:
        found.extend(_labelled_tool_calls(text, catalog, id_style))
    if bare and _json_outside(text, found):
        # The default id style passed as no keyword: one shared scan (memo).
        style: dict[str, Any] = {} if id_style == "openai" else {"id_style": id_style}
        found.extend(leading_json_calls(text, catalog, **style))
        if "```" in text or "~~~" in text:
            found.extend(fenced_json_calls(text, catalog, **style))
    return _drop_overlaps(found)


def tagged_result(
    dialect: Dialect,
    text: str,
    catalog: Catalog,
    tags: tuple[tuple[str, str, bool], ...],
) -> ParseResult:
    """A reply of a family that writes JSON calls only inside its own ``tags``
    (Apriel, GigaChat, InternLM): the calls outside its reasoning, the rest as
    content."""
    found = parse_tagged(text, catalog, tags=tags, function_tags=False, bare=False)
    found = prefer_outside_reasoning(text, found)
    return build_result(text, found, dialect.name, sanitize=dialect.sanitize)


class HermesDialect(Dialect):
    """NousResearch Hermes format and its common variants."""

    name: ClassVar[str] = "hermes"
    markers: ClassVar[tuple[str, ...]] = (
        "<tool_call>",
        "<function_call>",
        "<functioncall>",
        "<function=",
        "<function name=",
        "<tools>",
        "<tool>",
        "<tool:",
        *_LABELS,
    )
    # A call object anywhere in prose counts (``scan.prose_json_calls``).
    inline_openers: ClassVar[tuple[InlineOpener, ...]] = (JSON_CALL,)
    triggers: ClassVar[tuple[str, ...]] = (
        "<tool",
        "<function",
        "<response>",
        "<json>",
        "<xml>",
        "{",  # every JSON call holds one (a list of calls too)
    )
    tags: ClassVar[tuple[tuple[str, str, bool], ...]] = HERMES_TAGS

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = without_mentions(text, parse_tagged(text, catalog, tags=self.tags))
        if found and (_LABELS[0] in text or _LABELS[1] in text):
            found = _with_labels(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You may call one or more functions to assist with the user query. "
            "The available functions, as JSON signatures:\n"
            f"<tools>\n{json_catalog(catalog)}\n</tools>\n"
            "For each function call, return a JSON object with the function name and "
            "arguments inside <tool_call></tool_call> tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
            "</tool_call>\n"
            "Only call functions listed above. If no call is needed, answer normally."
        )

    @override
    def stop_sequences(self) -> list[str]:
        return ["<tool_response>"]

    @override
    def format_result(self, call: ToolCall, result: Any) -> str:
        payload = json.dumps(
            {"name": call.name, "content": result_text(result)}, ensure_ascii=False
        )
        return f"<tool_response>\n{payload}\n</tool_response>"
