"""InternLM 2.5/3 and Intern-S1: ``<|action_start|><|plugin|>{json}<|action_end|>``.

One JSON call object (``{"name": .., "parameters": {..}}``) per action block.
The other action kind, ``<|interpreter|>``, is code for InternLM's own
interpreter, not a call to a catalog tool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from .base import Dialect
from .hermes import tagged_result

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["InternLmDialect"]

_OPEN = "<|action_start|><|plugin|>"
_CLOSE = "<|action_end|>"
_TAGS = ((_OPEN, _CLOSE, True),)


class InternLmDialect(Dialect):
    """InternLM ``<|action_start|><|plugin|>`` calls."""

    name = "internlm"
    # The action token alone: streaming holds before ``<|plugin|>`` arrives.
    markers = ("<|action_start|>",)
    triggers = (_OPEN,)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        return tagged_result(self, text, catalog, _TAGS)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can use these tools, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To use a tool, write one call and stop:\n"
            f'{_OPEN}{{"name": "tool_name", "parameters": {{"arg": "value"}}}}{_CLOSE}\n'
            "If no tool is needed, answer normally."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the action block; the parser needs no closer."""
        return [_CLOSE]
