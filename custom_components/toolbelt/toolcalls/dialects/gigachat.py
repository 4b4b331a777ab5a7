"""Sber GigaChat 3 / 3.1: a function-call header, then one JSON call object.

* GigaChat 3: ``<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{"name": ..,
  "arguments": {..}}``, the call written as a message of its own.
* GigaChat 3.1: ``<|function_call|>{"name": .., "arguments": {..}}``.

Nothing closes the call but the end of the reply (``</s>``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from .base import Dialect
from .hermes import tagged_result

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["GigaChatDialect"]

_HEADERS = ("function call<|role_sep|>", "<|function_call|>")
# No closer but the end of the reply: a block runs to the next header or ``</s>``.
_TAGS = tuple((header, "</s>", True) for header in _HEADERS)


class GigaChatDialect(Dialect):
    """GigaChat ``function call`` messages."""

    name = "gigachat"
    # ``<|message_sep|>`` opens the call message: a plain answer never writes
    # it, so streaming holds from there (before "function call" could show).
    markers = ("<|message_sep|>", *_HEADERS)
    triggers = _HEADERS

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        return tagged_result(self, text, catalog, _TAGS)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call one, write only the call and stop:\n"
            f'{_HEADERS[1]}{{"name": "function_name", "arguments": {{"arg": "value"}}}}\n'
            "If no function is needed, answer normally."
        )
