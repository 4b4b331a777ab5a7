"""NVIDIA Nemotron (Llama-3.1-Nemotron-Nano, Nemotron-Nano-v2): ``<TOOLCALL>[..]</TOOLCALL>``.

The block holds a JSON array of ``{"name", "arguments"}`` (or one object);
arguments may be an object or a JSON string. Nemotron-3 switched to the
Qwen3-Coder XML format, which the ``qwen3_coder_xml`` dialect reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.markup import (
    marked_json_calls,
    prefer_outside_reasoning,
    too_many,
)
from ..reading.scan import skip_ws, tag_blocks
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["NemotronDialect"]


class NemotronDialect(Dialect):
    """``<TOOLCALL>`` JSON arrays."""

    name = "nemotron"
    markers = ("<TOOLCALL>",)
    triggers = ("<TOOLCALL>",)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can use these tools to assist the user if required:\n"
            f"<AVAILABLE_TOOLS>\n{json_catalog(catalog)}\n</AVAILABLE_TOOLS>\n\n"
            "If you decide to call any tool(s), use this format:\n"
            '<TOOLCALL>[{"name": "tool_name", "arguments": {"arg": "value"}}]</TOOLCALL>'
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["</TOOLCALL>"]

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        for start, body_start, _body_end, end in tag_blocks(
            text, "<TOOLCALL>", "</TOOLCALL>"
        ):
            if too_many(found, text, start):
                break
            result = marked_json_calls(text, skip_ws(text, body_start), catalog)
            if result is None:
                continue
            calls, json_end = result
            found += [Found(start, max(end, json_end), c) for c in calls or (None,)]
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)
