"""Upstage Solar Open 2: special tokens around a name and key/value arguments.

``<|tool_call:start|>NAME\\n<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>
\\n<|tool_call:end|>``, one block per call, any text before them. Values are
text, typed from the tool's schema (GLM's key/value reader, ``ArgTags``); a
string keeps its blanks. Reasoning is ``<|think:start|>…<|think:end|>``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..reading.calls import build_result
from ..reading.markup import prefer_outside_reasoning
from .base import Dialect
from .glm import ArgTags, arg_tag_calls

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["SolarOpenDialect"]

_OPEN = "<|tool_call:start|>"
_CLOSE = "<|tool_call:end|>"
_TAGS = ArgTags.tokens(
    (_OPEN, _CLOSE),
    ("<|tool_arg:start|>", "<|tool_arg:value|>"),
    ("", "<|tool_arg:end|>"),
    # Cut off inside an argument, or inside a token.
    cut=("<|tool_",),
    stops=("<|tool_",),
)
_TOKEN = re.compile(r"<\|tool_(?:call|arg):[a-z]{1,8}\|>")


class SolarOpenDialect(Dialect):
    """Solar Open 2 ``<|tool_call:start|>`` calls, typed from the schema."""

    name = "solar_open"
    markers = (_OPEN,)
    triggers = (_OPEN,)
    cleans = ("<|tool_",)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = prefer_outside_reasoning(text, arg_tag_calls(text, catalog, _TAGS))
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "For each function call, write its name and each argument in this"
            f" format:\n{_OPEN}function_name\n<|tool_arg:start|>arg<|tool_arg:value|>"
            f"value<|tool_arg:end|>\n{_CLOSE}\n"
            "If no function is needed, answer normally."
        )

    @override
    def sanitize(self, text: str) -> str:
        """Its tokens are never spoken, even around markup that is no call."""
        return _TOKEN.sub("", text) if "<|tool_" in text else text
