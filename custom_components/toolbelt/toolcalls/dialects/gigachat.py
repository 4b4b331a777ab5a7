"""Sber GigaChat 3 / 3.1: a function-call header, then one JSON call object.

* GigaChat 3: ``<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": ..,
  "arguments": {..}}``, the call written as a message of its own.
* GigaChat 3.1: ``<|function_call|>{"name": .., "arguments": {..}}``.

Nothing closes those calls but the end of the reply (``</s>``).

* GigaChat 3.5: GCML, DeepSeek's DSML under another word:
  ``<｜GCML｜tool_calls><｜GCML｜invoke name="fn"><｜GCML｜parameter name="k"
  string="true">v</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..reading.calls import build_result
from ..reading.markup import prefer_outside_reasoning
from .base import Dialect
from .deepseek import InvokeMarkup, invoke_calls
from .hermes import tagged_result

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["GigaChatDialect"]

_HEADERS = ("function call<|role_sep|>", "<|function_call|>")
# No closer but the end of the reply: a block runs to the next header or ``</s>``.
_TAGS = tuple((header, "</s>", True) for header in _HEADERS)
_GCML = InvokeMarkup.of("GCML")
_GCML_BLOCK = "<｜GCML｜tool_calls>"


class GigaChatDialect(Dialect):
    """GigaChat ``function call`` messages."""

    name = "gigachat"
    # ``<|message_sep|>`` opens the call message: a plain answer never writes
    # it, so streaming holds from there (before "function call" could show).
    markers = ("<|message_sep|>", *_HEADERS, _GCML_BLOCK)
    triggers = (*_HEADERS, _GCML_BLOCK)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        if _GCML_BLOCK not in text:
            return tagged_result(self, text, catalog, _TAGS)
        found = prefer_outside_reasoning(text, invoke_calls(text, catalog, _GCML))
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call one, write only the call and stop:\n"
            f'{_HEADERS[1]}{{"name": "function_name", "arguments": {{"arg": "value"}}}}\n'
            "If no function is needed, answer normally."
        )
