"""MiniMax M2 ``<minimax:tool_call>`` XML invokes and M1 ``<tool_calls>`` JSON lines.

* M2: ``<minimax:tool_call><invoke name="fn"><parameter name="k">v</parameter>
  </invoke></minimax:tool_call>``; values are text typed from the schema. A
  value may itself contain ``</parameter>``: the last closer before the next
  parameter (or ``</invoke>``) ends it.
* M1: ``<tool_calls>`` with one JSON object per line (or a JSON array).

Reasoning is ``<think>…</think>`` (or a lone ``</think>``); example calls in it
only count when there is no call after it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..model import RejectedCall
from ..prompting.render import json_catalog
from ..reading.calls import (
    Found,
    build_result,
    call_from_object,
    make_call,
)
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    loads_loose,
)
from ..reading.markup import (
    parameter_pairs,
    prefer_outside_reasoning,
    too_many,
    typed_text_arguments,
)
from ..reading.scan import json_calls_at, skip_ws, tag_blocks
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall

__all__ = ["MiniMaxDialect"]

_INVOKE = re.compile(r"""<invoke\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>""")
_PARAM = re.compile(r"""<parameter\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>""")
_M2_OPEN = "<minimax:tool_call>"
_M2_CLOSE = "</minimax:tool_call>"


def _invoke_call(
    catalog: Catalog, name: str, body: str, raw: str
) -> ToolCall | RejectedCall:
    """Arguments from the ``<parameter>`` elements of one complete invoke body."""
    pairs = parameter_pairs(body, _PARAM)
    if pairs is None:
        return RejectedCall(name=name, raw=raw, reason="a parameter is never closed")
    if not pairs and body.strip().startswith("{"):
        try:
            return make_call(catalog, name, loads_loose(body.strip()), raw=raw)
        except LooseJSONError as err:
            return RejectedCall(
                name=name, raw=raw, reason=f"arguments are not JSON: {err}"
            )
    args = typed_text_arguments(catalog, name, pairs)
    return make_call(catalog, name, args, raw=raw, coerce=True)


class MiniMaxDialect(Dialect):
    """MiniMax M2 invokes and M1 JSON-lines tool calls."""

    name = "minimax"
    markers = (_M2_OPEN, "<tool_calls>")
    triggers = (_M2_OPEN, "<tool_calls>", "<invoke")
    cleans = (_M2_OPEN, _M2_CLOSE)

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
        if "<invoke" in text:
            found += self._m2(text, catalog)
        if "<tool_calls>" in text:
            found += self._m1(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _m2(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        blocks = [
            (start, body_start, body_end, end)
            for start, body_start, body_end, end in tag_blocks(
                text, _M2_OPEN, _M2_CLOSE
            )
        ] or [(-1, 0, len(text), -1)]
        for start, body_start, body_end, end in blocks:
            invokes = list(_INVOKE.finditer(text, body_start, body_end))
            if start >= 0 and not invokes and not text[body_start:body_end].strip():
                found.append(Found(start, end, None))
            for index, inv in enumerate(invokes):
                if too_many(found, text, inv.start()):
                    break
                limit = (
                    invokes[index + 1].start() if index + 1 < len(invokes) else body_end
                )
                close = text.rfind("</invoke>", inv.end(), limit)
                name = inv.group(1).strip()
                span_start = start if start >= 0 and index == 0 else inv.start()
                if close < 0:
                    call: ToolCall | RejectedCall = RejectedCall(
                        name=name,
                        raw=text[inv.start() : limit],
                        reason="call is truncated",
                    )
                    span_end = (
                        end if start >= 0 and index == len(invokes) - 1 else limit
                    )
                else:
                    raw = text[inv.start() : close + len("</invoke>")]
                    call = _invoke_call(catalog, name, text[inv.end() : close], raw)
                    last = index == len(invokes) - 1
                    span_end = end if start >= 0 and last else close + len("</invoke>")
                found.append(Found(span_start, span_end, call))
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
        return text.replace(_M2_OPEN, "").replace(_M2_CLOSE, "")
