"""Mistral tool calls in all three wire forms.

* v3 / Nemo: ``[TOOL_CALLS][{"name": .., "arguments": {..}, "id": "a1B2c3D4e"}]``
* v11: ``[TOOL_CALLS]name{..}``, ``[TOOL_CALLS]name[CALL_ID]a1B2c3D4e[ARGS]{..}``
* v13: ``[TOOL_CALLS]name[ARGS]{..}`` (repeated for parallel calls)

Mistral's templates require the 9-character id to come back verbatim in the
tool message, so ids are kept, and synthesised in Mistral's style otherwise.
A list whose later element was cut off keeps its complete calls.
"""

from __future__ import annotations

import re
from typing import ClassVar, override

from ..catalog import Catalog
from ..model import ParseResult, RejectedCall
from ..prompting.render import json_catalog
from ..reading.calls import (
    Found,
    build_result,
    make_call,
    reply_start,
)
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    find_json_end,
    loads_loose,
)
from ..reading.scan import (
    json_calls_at,
    leading_json_calls,
    skip_ws,
)
from .base import Dialect, may_open_call_list

__all__ = ["MistralDialect"]

MARKER = "[TOOL_CALLS]"
_COMPACT = re.compile(
    r"\s*([A-Za-z_][\w.\-:]{0,127})\s*(?:\[CALL_ID\]\s*([A-Za-z0-9_\-]{1,64})\s*)?(\[ARGS\])?\s*"
)


def _compact_calls(text: str, pos: int, catalog: Catalog) -> tuple[list[Found], int]:
    """``name[CALL_ID]id[ARGS]{..}``, ``name[ARGS]{..}`` and ``name{..}`` from ``pos``.

    A bare ``name`` with nothing after it (end of text or the next marker) is
    a call without arguments, if the name is an exposed tool.
    """
    found: list[Found] = []
    while True:
        match = _COMPACT.match(text, pos)
        if not match:
            return found, pos
        args_start = match.end()
        if args_start >= len(text) or text.startswith(MARKER, args_start):
            if match.group(3) is None and catalog.resolve(match.group(1)) is not None:
                call = make_call(
                    catalog,
                    match.group(1),
                    {},
                    raw=match.group(0),
                    call_id=match.group(2),
                    id_style="mistral",
                )
                found.append(Found(pos, args_start, call))
                return found, args_start
            return found, pos
        if text[args_start] != "{":
            return found, pos
        end = find_json_end(text, args_start)
        raw_end = len(text) if end < 0 else end
        raw = text[pos:raw_end]
        try:
            args = loads_loose(text[args_start:raw_end])
        except TruncatedJSONError:
            reject = RejectedCall(match.group(1), raw, "call is truncated")
            found.append(Found(pos, raw_end, reject))
            return found, raw_end
        except LooseJSONError as err:
            reason = f"arguments are not valid JSON: {err}"
            found.append(Found(pos, raw_end, RejectedCall(match.group(1), raw, reason)))
            return found, raw_end
        call = make_call(
            catalog,
            match.group(1),
            args,
            raw=raw,
            call_id=match.group(2),
            id_style="mistral",
        )
        found.append(Found(pos, raw_end, call))
        pos = raw_end


class MistralDialect(Dialect):
    """``[TOOL_CALLS]`` in list, ``[CALL_ID]`` and ``[ARGS]`` forms."""

    name: ClassVar[str] = "mistral"
    markers: ClassVar[tuple[str, ...]] = (MARKER, "[ARGS]", "[CALL_ID]")
    # Without a marker only a bare list at the start is read: "[" is enough.
    triggers: ClassVar[tuple[str, ...]] = (MARKER, "[ARGS]", "[")

    @override
    def may_match(self, text: str) -> bool:
        """A marker, or a JSON list at the start (not ``[f(...)]``)."""
        return MARKER in text or "[ARGS]" in text or may_open_call_list(text)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        pos = text.find(MARKER)
        while pos >= 0:
            body = skip_ws(text, pos + len(MARKER))
            spans: list[Found] = []
            end = body
            if body < len(text) and text[body] in "{[":
                result = json_calls_at(text, body, catalog, id_style="mistral")
                if result is not None:
                    calls, end = result
                    spans = [Found(body, end, call) for call in calls] or [
                        Found(body, end)
                    ]
            else:
                spans, end = _compact_calls(text, body, catalog)
            if spans:
                found.append(Found(pos, body, None))
                found.extend(spans)
            pos = text.find(MARKER, max(end, pos + len(MARKER)))
        if not found:
            # Missing marker: a bare call list at the start of the reply.
            start = reply_start(text)
            if text.startswith("[", start):
                found = leading_json_calls(
                    text, catalog, start=start, id_style="mistral"
                )
            if not found and "[ARGS]" in text:
                start = skip_ws(text, 0)
                found, _ = _compact_calls(text, start, catalog)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            f"[AVAILABLE_TOOLS]\n{json_catalog(catalog)}\n[/AVAILABLE_TOOLS]\n"
            "To call tools, reply with [TOOL_CALLS] followed by a JSON list, e.g. "
            '[TOOL_CALLS][{"name": "tool_name", "arguments": {"arg": "value"}}]. '
            "Otherwise answer the user directly."
        )
