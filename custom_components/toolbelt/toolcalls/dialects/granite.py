"""IBM Granite: ``<|tool_call|>[..]``, ``<tool_call> [..]``, granite-20b ``<function_call> {..}``.

Granite 3.0 opens with the ``<|tool_call|>`` token and Granite 3.1 with the
string ``<tool_call>``, both followed by a JSON array and often no closing tag.
Granite 4 Nano writes Python-dict syntax inside ``<tool_call>`` (``{name:
get_time, arguments: {...}}``) or even a Python call. Some servers hand the
tags back HTML-escaped (``&lt;tool_call&gt;``). Text around the calls is kept.
"""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.jsonrepair import strict_json_at
from ..reading.markup import (
    after_closer,
    marked_json_calls,
    prefer_outside_reasoning,
    token_json_calls,
    too_many,
)
from ..reading.pycall import PyCallError
from ..reading.scan import MAX_BLOCKS, skip_ws, tag_blocks
from .base import Dialect
from .hermes import body_calls
from .pythonic import python_calls

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["GraniteDialect"]

_ESCAPED = re.compile(r"&lt;\|?/?(?:tool_call|function_call)\|?&gt;")
_RESPONSE_TAGS = re.compile(r"</?response>")


class GraniteDialect(Dialect):
    """Granite 3.x/4 and granite-20b-functioncalling tool calls."""

    name = "granite"
    markers = (
        "<|tool_call|>",
        "<function_call>",
        "&lt;tool_call&gt;",
        "&lt;|tool_call|&gt;",
    )
    triggers = ("<|tool_call|>", "<tool_call>", "<function_call>", "&lt;")
    cleans = ("<|tool_call|>", "<response>", "</response>")
    # Granite 3.x and ERNIE 4.5 Thinking wrap their answer in these: the parse
    # drops them, and so does the stream.
    dropped = ("<response>", "</response>")

    @override
    def may_match(self, text: str) -> bool:
        """Its own tokens, or a ``<tool_call>`` body that is not one strict JSON
        object (that body is Hermes's)."""
        if "<|tool_call|>" in text or "<function_call>" in text or "&lt;" in text:
            return True
        # Most replies: each ``<tool_call>`` holds one strict JSON object and
        # its closer follows right after (the value Hermes reads next: shared).
        pos = text.find("<tool_call>")
        for _ in range(MAX_BLOCKS):
            if pos < 0:
                return False
            body = skip_ws(text, pos + len("<tool_call>"))
            if not text.startswith("{", body):
                return True
            strict = strict_json_at(text, body)
            if strict is None:
                break
            close = skip_ws(text, strict[1])
            if not text.startswith("</tool_call>", close):
                if close < len(text) and not (
                    text[close].isspace() or text.startswith("<tool_call>", close)
                ):
                    return True  # more than the object before any closer
                break
            pos = text.find("<tool_call>", close)
        return self._odd_block(text)

    def _odd_block(self, text: str) -> bool:
        """``may_match``'s answer from every ``<tool_call>`` block as read."""
        for _, body_start, body_end, _ in tag_blocks(
            text, "<tool_call>", "</tool_call>"
        ):
            body = skip_ws(text, body_start)
            if not text.startswith("{", body) or not _strict_json(
                text, body, text[body:body_end].strip()
            ):
                return True
        return False

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You may call these functions, described as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call functions, reply with <tool_call> followed by a JSON list: "
            '<tool_call>[{"name": "function_name", "arguments": {"arg": "value"}}]\n'
            "Only call functions listed above. If no call is needed, answer normally."
        )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        if "&lt;" in text and _ESCAPED.search(text):
            text = html.unescape(text)
        found: list[Found] = []
        # Phi-4-mini writes the same token and closes it with <|/tool_call|>.
        found += token_json_calls(text, catalog, "<|tool_call|>", "<|/tool_call|>")
        found += token_json_calls(text, catalog, "<function_call>", "</function_call>")
        found += self._tag_calls(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _tag_calls(self, text: str, catalog: Catalog) -> list[Found]:
        """``<tool_call>`` with an array (3.1), loose JSON or a Python call (4).

        Strict JSON objects are left to the Hermes dialect, which owns that tag.
        """
        found: list[Found] = []
        for start, body_start, body_end, end in tag_blocks(
            text, "<tool_call>", "</tool_call>"
        ):
            if too_many(found, text, start):
                break
            body = skip_ws(text, body_start)
            payload = text[body:body_end].strip()
            calls = None
            if payload.startswith("["):
                result = marked_json_calls(text, body, catalog)
                if result is not None:
                    calls, json_end = result
                    end = max(end, after_closer(text, json_end, "</tool_call>"))
            elif payload.startswith("{"):
                if not _strict_json(text, body, payload):
                    calls = body_calls(text, body, body_end, catalog, "openai")
            elif payload[:1].isalpha():
                try:
                    calls = python_calls(catalog, payload, raw=text[start:end])
                except PyCallError:
                    calls = None
            if calls is not None:
                found += [Found(start, end, c) for c in calls or (None,)]
        return found

    @override
    def sanitize(self, text: str) -> str:
        text = text.replace("<|tool_call|>", "")
        return _RESPONSE_TAGS.sub("", text) if "response>" in text else text


def _strict_json(text: str, body: int, payload: str) -> bool:
    """Whether ``payload`` (the stripped body starting at ``text[body]``) is
    strict JSON; the value read here is the one Hermes reads next."""
    strict = strict_json_at(text, body)
    if strict is not None:
        return strict[1] == body + len(payload)
    try:
        json.loads(payload)
    except ValueError:
        return False
    return True
