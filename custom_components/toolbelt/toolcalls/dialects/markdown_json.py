"""JSON calls in code fences: ```` ```json {"name": .., "arguments": ..} ``` ````.

Shapes: ``{name, arguments}``, ``{function, parameters}``, ``{tool: .., ...flat
args}``, Gemini ``{functionCall: {name, args}}``, lists of these. A fence only
counts when its body is call-shaped JSON naming an exposed tool; example code
and ordinary JSON in fences stay in the content.
"""

from __future__ import annotations

from typing import ClassVar, override

from ..catalog import Catalog
from ..model import ParseResult
from ..prompting.render import compact_catalog
from ..reading.calls import Found, build_result
from ..reading.memo import memoized
from ..reading.scan import (
    find_fences,
    json_calls_at,
    skip_ws,
)
from .base import Dialect

__all__ = ["MarkdownJsonDialect", "fenced_json_calls"]

# Fence languages whose name says "this is a call": a bare object is enough.
CALL_LANGS = frozenset(
    {
        "tool_code",
        "tool_call",
        "tool_calls",
        "tool",
        "tools",
        "function",
        "function_call",
        "functions",
        "functioncall",
    }
)
# Generic JSON fences: the body must be call-shaped with an explicit argument key.
JSON_LANGS = frozenset({"", "json", "json5", "jsonc", "xml"})


@memoized
def fenced_json_calls(
    text: str,
    catalog: Catalog,
    *,
    langs: frozenset[str] = CALL_LANGS | JSON_LANGS,
    id_style: str = "openai",
) -> list[Found]:
    """Calls from fences whose whole body is one or more call-shaped JSON values."""
    found: list[Found] = []
    for fence in find_fences(text):
        lang = fence.lang.split()[0].lower() if fence.lang else ""
        if lang not in langs:
            continue
        spans: list[Found] = []
        pos = skip_ws(text, fence.body_start)
        while pos < fence.body_end and text[pos] in "{[":
            result = json_calls_at(
                text,
                pos,
                catalog,
                id_style=id_style,
                require_arguments=lang not in CALL_LANGS,
                limit=fence.body_end,
            )
            if result is None:
                spans = []
                break
            calls, end = result
            spans += [Found(fence.start, fence.end, call) for call in calls]
            pos = skip_ws(text, end)
            if pos < fence.body_end and text[pos] == ",":
                pos = skip_ws(text, pos + 1)
        if spans and pos >= fence.body_end:
            found.extend(spans)
    return found


class MarkdownJsonDialect(Dialect):
    """Fenced JSON calls (any common object shape)."""

    name: ClassVar[str] = "markdown_json"
    markers: ClassVar[tuple[str, ...]] = ("```json", "```tool_code", "```tool_call")
    start_markers: ClassVar[tuple[str, ...]] = ("```",)
    triggers: ClassVar[tuple[str, ...]] = ("```", "~~~")
    # Hermes reads the same fences (``fenced_json_calls``, shared in a reply)
    # wherever a bracket stands outside its tags: a fenced call is one.
    subsumed_by: ClassVar[tuple[str, ...]] = ("hermes",)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = fenced_json_calls(text, catalog)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            f"You can use these tools:\n{compact_catalog(catalog)}\n\n"
            "To use a tool, reply with only a JSON code block:\n"
            '```json\n{"name": "tool_name", "arguments": {"arg": "value"}}\n```\n'
            "Otherwise answer the user directly."
        )
