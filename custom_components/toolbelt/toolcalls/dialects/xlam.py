"""Salesforce xLAM / Hammer: a JSON call list, fenced or bare.

Bare ``[{"name": .., "arguments": ..}]`` at the start of the reply, the same in
a ```` ```json ```` or plain fence, ``{"tool_calls": [...]}``, or inside
``<tool_call>...</tool_call>``.
"""

from __future__ import annotations

from typing import ClassVar, override

from ..catalog import Catalog
from ..model import ParseResult
from ..prompting.render import json_catalog
from ..reading.calls import build_result
from ..reading.openers import JSON_CALL, InlineOpener
from ..reading.scan import leading_json_calls
from .base import Dialect, may_open_call_list
from .hermes import _drop_overlaps, parse_tagged
from .markdown_json import JSON_LANGS, fenced_json_calls

__all__ = ["XlamDialect"]


class XlamDialect(Dialect):
    """xLAM-style call lists."""

    name: ClassVar[str] = "xlam"
    markers: ClassVar[tuple[str, ...]] = ("<tool_call>", "```json")
    # A call object anywhere in prose counts (``scan.prose_json_calls``).
    inline_openers: ClassVar[tuple[InlineOpener, ...]] = (JSON_CALL,)
    triggers: ClassVar[tuple[str, ...]] = ("{", "[")
    # Hermes reads the same fences, the same tag and the same bare JSON.
    subsumed_by: ClassVar[tuple[str, ...]] = ("hermes",)

    @override
    def may_match(self, text: str) -> bool:
        """A call object, a tag or fence, or a JSON list at the start.

        Without a ``{`` no call object can be read: only an empty list at
        the start is markup, or something in a tag or fence.
        """
        return (
            "{" in text
            or "<tool_call>" in text
            or "```" in text
            or "~~~" in text
            or may_open_call_list(text)
        )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = fenced_json_calls(text, catalog, langs=JSON_LANGS)
        if "<tool_call>" in text:
            found += parse_tagged(
                text,
                catalog,
                tags=(("<tool_call>", "</tool_call>", True),),
                function_tags=False,
                bare=False,
            )
        if not found:
            found = leading_json_calls(text, catalog)
        return build_result(
            text, _drop_overlaps(found), self.name, sanitize=self.sanitize
        )

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You are an expert in composing functions. Available tools:\n"
            f"{json_catalog(catalog)}\n"
            "If you call tools, reply ONLY with a JSON list: "
            '[{"name": "func_name", "arguments": {"arg": "value"}}, ...]. '
            "Otherwise answer the user directly."
        )
