"""``<tool_calls>[{"name": .., "arguments": {..}}, …]</tool_calls>``: Apriel, Hunyuan, Jamba.

* ServiceNow Apriel 1.5/1.6 reason first: "Here are my reasoning steps:"
  (Apriel 1.6's prompt already ends with it), then ``[BEGIN FINAL RESPONSE]``,
  the answer, and (1.5) ``[END FINAL RESPONSE]``; the reasoning may also
  come in a ``<thinking>`` or ``<think>`` block before the marker. The
  reasoning and both markers are never spoken, and a ``<tool_calls>`` the
  reasoning mentions is never read past the marker.
* Tencent Hunyuan (A13B and the small dense models) put the answer in
  ``<answer>…</answer>`` after ``<think>…</think>``; the tags are not spoken.
* AI21 Jamba writes the same JSON list in the same tags.

Calls may carry their own ``"id"``, which is kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..model import RejectedCall
from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.markup import prefer_outside_reasoning
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect
from .hermes import parse_tagged, tagged_result

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["AprielDialect"]

_ANSWER = "[BEGIN FINAL RESPONSE]"
register_reasoning_delimiters("Here are my reasoning steps:", _ANSWER, lone_closer=True)

_OPEN = "<tool_calls>"
_CLOSE = "</tool_calls>"
_TAGS = ((_OPEN, _CLOSE, True),)


def _tagged(text: str, catalog: Catalog) -> list[Found]:
    """The ``<tool_calls>`` spans of ``text`` (as ``tagged_result`` reads them)."""
    return parse_tagged(text, catalog, tags=_TAGS, function_tags=False, bare=False)


class AprielDialect(Dialect):
    """``<tool_calls>`` JSON lists, with Apriel's and Hunyuan's answer markers."""

    name = "apriel"
    markers = (_OPEN,)
    triggers = (_OPEN,)
    dropped = ("[END FINAL RESPONSE]", "<answer>", "</answer>")

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        cut = text.find(_ANSWER)
        if cut < 0 or text.find(_OPEN, 0, cut) < 0:
            return tagged_result(self, text, catalog, _TAGS)
        # A tag in the reasoning is read up to the answer marker only: an
        # unclosed one there is a mention, not a call cut off, and must not
        # swallow the answer.
        found = [
            span
            for span in _tagged(text[:cut], catalog)
            if not isinstance(span.call, RejectedCall) or span.call.raw.endswith(_CLOSE)
        ]
        found += [
            Found(span.start + cut, span.end + cut, span.call)
            for span in _tagged(text[cut:], catalog)
        ]
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

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
