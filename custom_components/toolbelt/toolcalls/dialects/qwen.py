"""Qwen 2.5 / Qwen3: ``<tool_call>\\n{json}\\n</tool_call>``, reasoning-aware.

Qwen3 sometimes writes its calls inside ``<think>`` (llama.cpp#20837) and
templates may open the think block in the prompt, so the reply starts with
reasoning and a lone ``</think>``. Parsing runs on the raw text, so calls in
reasoning are found; the reasoning itself never reaches the content.
"""

from __future__ import annotations

from typing import ClassVar, override

from ..catalog import Catalog
from ..model import ParseResult
from ..prompting.render import json_catalog
from ..reading.calls import build_result
from .hermes import HermesDialect, parse_tagged

__all__ = ["QwenDialect"]


class QwenDialect(HermesDialect):
    """Hermes-style tags as Qwen's chat template renders them."""

    name: ClassVar[str] = "qwen"
    markers: ClassVar[tuple[str, ...]] = ("<tool_call>",)
    triggers: ClassVar[tuple[str, ...]] = ("<tool_call>", "{")
    # Hermes reads the same tag and the same bare JSON (and more).
    subsumed_by: ClassVar[tuple[str, ...]] = ("hermes",)
    tags: ClassVar[tuple[tuple[str, str, bool], ...]] = (
        ("<tool_call>", "</tool_call>", True),
    )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = parse_tagged(text, catalog, tags=self.tags, function_tags=False)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
            "You are provided with function signatures within <tools></tools> XML tags:\n"
            f"<tools>\n{json_catalog(catalog)}\n</tools>\n\n"
            "For each function call, return a json object with function name and arguments "
            "within <tool_call></tool_call> XML tags:\n"
            '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
            "</tool_call>"
        )
