"""``<tool_calls>[{"name": .., "arguments": {..}}, …]</tool_calls>``: Apriel, Hunyuan, Jamba.

* ServiceNow Apriel 1.5/1.6 reason first: "Here are my reasoning steps:"
  (Apriel 1.6's prompt already ends with it), then ``[BEGIN FINAL RESPONSE]``,
  the answer, and (1.5) ``[END FINAL RESPONSE]``. The reasoning and both
  markers are never spoken.
* Tencent Hunyuan (A13B and the small dense models) put the answer in
  ``<answer>…</answer>`` after ``<think>…</think>``; the tags are not spoken.
* AI21 Jamba writes the same JSON list in the same tags.

Calls may carry their own ``"id"``, which is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect
from .hermes import tagged_result

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["AprielDialect"]

register_reasoning_delimiters(
    "Here are my reasoning steps:", "[BEGIN FINAL RESPONSE]", lone_closer=True
)

_OPEN = "<tool_calls>"
_CLOSE = "</tool_calls>"
_TAGS = ((_OPEN, _CLOSE, True),)


class AprielDialect(Dialect):
    """``<tool_calls>`` JSON lists, with Apriel's and Hunyuan's answer markers."""

    name = "apriel"
    markers = (_OPEN,)
    triggers = (_OPEN,)
    dropped = ("[END FINAL RESPONSE]", "<answer>", "</answer>")

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        return tagged_result(self, text, catalog, _TAGS)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "Return all function calls as a list of JSON objects within "
            f"{_OPEN}{_CLOSE} tags:\n"
            f'{_OPEN}[{{"name": "function_name", "arguments": {{"arg": "value"}}}}]'
            f"{_CLOSE}\n"
            "If no call is needed, answer normally."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call list; the parser needs no closer."""
        return [_CLOSE]
