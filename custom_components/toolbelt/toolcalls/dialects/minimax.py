"""MiniMax M3 and M2 XML invokes, and M1 ``<tool_calls>`` JSON lines.

* M3: every tag opens with the namespace token ``]<]minimax[>[``:
  ``NS<tool_call>NS<invoke name="fn">NS<k>v NS</k>NS</invoke>NS</tool_call>``
  (NS = the token). A parameter is named by its own tag; a value that holds
  tags is an object (a list when its children are ``<item>``). Reasoning is
  ``<mm:think>…</mm:think>``.

* M2: ``<minimax:tool_call><invoke name="fn"><parameter name="k">v</parameter>
  </invoke></minimax:tool_call>``; values are text typed from the schema. A
  value may itself contain ``</parameter>``: the last closer before the next
  parameter (or ``</invoke>``) ends it.
* M1: ``<tool_calls>`` with one JSON object per line (or a JSON array).

Reasoning is ``<think>…</think>`` (or a lone ``</think>``); example calls in it
only count when there is no call after it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, override

from ..model import RejectedCall
from ..prompting.render import json_catalog
from ..reading.calls import (
    Found,
    build_result,
    call_from_object,
    make_call,
)
from ..reading.invokes import InvokeTags, param_invoke_call, read_invokes
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    loads_loose,
)
from ..reading.markup import (
    prefer_outside_reasoning,
    too_many,
    typed_text_arguments,
)
from ..reading.scan import json_calls_at, skip_ws, tag_blocks
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall

__all__ = ["M2_TAGS", "MiniMaxDialect"]

_INVOKE = re.compile(r"""<invoke\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>""")
# A ``string="true|false"`` attribute (DeepSeek V3.2's, also written in plain
# ``<tool_calls>``) does not hide the parameter; its value is typed from the
# tool's schema, as every value here is.
_PARAM = re.compile(
    r"""<parameter\s+name\s*=\s*["']?([^"'>]+?)["']?"""
    r"""(?:\s+string\s*=\s*["']?(?:true|false)["']?)?\s*>"""
)
_M2_OPEN = "<minimax:tool_call>"
_M2_CLOSE = "</minimax:tool_call>"
# M3's namespace token, before every tag of a call block.
_NS = "]<]minimax[>["
_M3_OPEN = f"{_NS}<tool_call>"
_M3_CLOSE = f"{_NS}</tool_call>"
_M3_INVOKE = re.compile(
    re.escape(_NS) + r"""<invoke\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>"""
)
_M3_END_INVOKE = f"{_NS}</invoke>"
# A tag as M3 writes it right after the token: ``<name>`` or ``</name>``.
_M3_TAG = re.compile(r"<(/?)([^<>\s/]{1,128})>")
# Deeper values than any tool's schema has (and than ``json.dumps`` writes).
_M3_DEPTH = 32

register_reasoning_delimiters("<mm:think>", "</mm:think>", lone_closer=True)


def _invoke_call(
    catalog: Catalog, name: str, body: str, raw: str
) -> ToolCall | RejectedCall:
    """Arguments from the ``<parameter>`` elements of one complete invoke body."""
    return param_invoke_call(catalog, name, body, raw, _PARAM)


def _invoke_wrappers(text: str) -> list[tuple[int, int, int, int]]:
    """Closed ``<tool_calls>`` blocks wrapping invokes (no ``minimax:`` prefix,
    as SGLang's multi_format detector reads them), never spoken, and the text
    between them (a start of -1), whose bare invokes are read as before."""
    if "<tool_calls>" not in text:
        return []
    wrappers = [
        block
        for block in tag_blocks(text, "<tool_calls>", "</tool_calls>")
        if block[3] > block[2] and _INVOKE.search(text, block[1], block[2])
    ]
    if not wrappers:
        return []
    blocks: list[tuple[int, int, int, int]] = []
    gap = 0
    for block in wrappers:
        blocks += [(-1, gap, block[0], -1), block]
        gap = block[3]
    return [*blocks, (-1, gap, len(text), -1)]


def _m3_value(own: str, children: list[tuple[str, Any]]) -> Any:
    """A tag's value: its text, or an object of its child tags (a repeated tag
    gives a list), or a list when every child is an ``<item>``."""
    if not children:
        return own
    grouped: dict[str, list[Any]] = {}
    for name, value in children:
        grouped.setdefault(name, []).append(value)
    if grouped.keys() == {"item"}:
        return grouped["item"]
    return {
        name: items[0] if len(items) == 1 else items for name, items in grouped.items()
    }


def _m3_pairs(body: str) -> list[tuple[str, str]] | None:
    """``(name, raw value)`` of each top-level parameter of an M3 invoke body,
    a nested value as JSON text; None when the tags do not nest."""
    # Each piece starts right after a token: ``<tag>text`` or ``</tag>text``.
    stack: list[tuple[str, list[tuple[str, Any]], str]] = [("", [], "")]
    for piece in body.split(_NS)[1:]:
        tag = _M3_TAG.match(piece)
        if tag is None or len(stack) > _M3_DEPTH:
            return None
        closing, name = tag.group(1), tag.group(2)
        if not closing:
            stack.append((name, [], piece[tag.end() :]))
            continue
        if len(stack) < 2 or stack[-1][0] != name:
            return None
        _, children, own = stack.pop()
        stack[-1][1].append((name, _m3_value(own, children)))
    if len(stack) != 1:
        return None
    return [
        (name, value if isinstance(value, str) else json.dumps(value))
        for name, value in stack[0][1]
    ]


def _m3_call(
    catalog: Catalog, name: str, body: str, raw: str
) -> ToolCall | RejectedCall:
    """An M3 invoke's call from its nested parameter tags."""
    pairs = _m3_pairs(body)
    if pairs is None:
        return RejectedCall(name=name, raw=raw, reason="the parameter tags do not nest")
    args = typed_text_arguments(catalog, name, pairs)
    return make_call(catalog, name, args, raw=raw, coerce=True)


M2_TAGS = InvokeTags(_INVOKE, "</invoke>", _invoke_call)
_M3_TAGS = InvokeTags(
    _M3_INVOKE,
    _M3_END_INVOKE,
    _m3_call,
    last_close=False,
    bare_markup=True,
    to_next=True,
)


class MiniMaxDialect(Dialect):
    """MiniMax M3 and M2 invokes and M1 JSON-lines tool calls."""

    name = "minimax"
    markers = (_M3_OPEN, _M2_OPEN, "<tool_calls>")
    triggers = (_NS, _M2_OPEN, "<tool_calls>", "<invoke")
    cleans = (_NS, _M2_OPEN, _M2_CLOSE)
    # M3's token is never spoken, streamed or not, wherever it stands.
    dropped = (_NS,)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "# Tools\nYou may call one or more tools to assist with the user query."
            " The tools, in JSONSchema format:\n<tools>\n"
            f"{json_catalog(catalog)}\n</tools>\n\n"
            "To call tools, use this XML format:\n<minimax:tool_call>\n"
            '<invoke name="tool-name">\n<parameter name="arg">value</parameter>\n'
            "</invoke>\n</minimax:tool_call>"
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["</minimax:tool_call>"]

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        if _NS in text:
            # M3's invokes are its own: M2's reading of them has no arguments.
            found += self._m3(text, catalog)
        elif "<invoke" in text:
            found += self._m2(text, catalog)
        if "<tool_calls>" in text:
            found += self._m1(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _m2(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        blocks = (
            list(tag_blocks(text, _M2_OPEN, _M2_CLOSE))
            or _invoke_wrappers(text)
            or [(-1, 0, len(text), -1)]
        )
        for block in blocks:
            read_invokes(text, catalog, block, found, M2_TAGS)
        return found

    def _m3(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        for block in tag_blocks(text, _M3_OPEN, _M3_CLOSE):
            read_invokes(text, catalog, block, found, _M3_TAGS)
        return found

    def _m1(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        for start, body_start, body_end, end in tag_blocks(
            text, "<tool_calls>", "</tool_calls>"
        ):
            if too_many(found, text, start):
                break
            body = text[body_start:body_end]
            first = skip_ws(body, 0)
            whole = (
                json_calls_at(body, first, catalog)
                if body[first : first + 1] == "["
                else None
            )
            calls: list[ToolCall | RejectedCall | None] = []
            if whole is not None and skip_ws(body, whole[1]) >= len(body):
                calls = list(whole[0])
            else:
                for line in body.splitlines():
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        obj = loads_loose(line)
                    except TruncatedJSONError:
                        calls.append(
                            RejectedCall(name="", raw=line, reason="call is truncated")
                        )
                        continue
                    except LooseJSONError:
                        continue
                    calls.append(
                        call_from_object(obj, catalog, raw=line, require_arguments=True)
                    )
            calls = [c for c in calls if c is not None]
            if calls:
                found += [Found(start, end, c) for c in calls]
            elif not body.strip():
                found.append(Found(start, end, None))
        return found

    @override
    def sanitize(self, text: str) -> str:
        return text.replace(_M2_OPEN, "").replace(_M2_CLOSE, "").replace(_NS, "")
