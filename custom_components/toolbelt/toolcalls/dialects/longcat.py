"""Meituan LongCat-Flash: ``<longcat_tool_call>…</longcat_tool_call>``.

Two bodies are written inside the tags: a JSON call object
(``{"name": .., "arguments": {..}}``), or the GLM shape with LongCat's own tag
names (``NAME<longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v
</longcat_arg_value>``), whose values are typed from the tool's schema. A
block that is neither is refused, and never spoken. Reasoning is
``<longcat_think>…</longcat_think>``, or only its closer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, override

from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.markup import prefer_outside_reasoning, too_many
from ..reading.scan import tag_blocks
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect
from .glm import ArgTags, arg_tag_calls
from .hermes import json_block

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["LongCatDialect"]

_OPEN = "<longcat_tool_call>"
_CLOSE = "</longcat_tool_call>"
_ARG_TAGS = ArgTags.named("longcat_tool_call", "longcat_arg_key", "longcat_arg_value")
# The thinking models' template writes the opener into the prompt.
register_reasoning_delimiters("<longcat_think>", "</longcat_think>", lone_closer=True)


class LongCatDialect(Dialect):
    """LongCat ``<longcat_tool_call>`` calls, JSON or key/value.

    A format writing the same two bodies with its own tags subclasses it and
    sets ``call_tags`` and ``arg_tags``.
    """

    name = "longcat"
    markers: ClassVar[tuple[str, ...]] = (_OPEN,)
    triggers = (_OPEN,)
    call_tags: ClassVar[tuple[str, str]] = (_OPEN, _CLOSE)
    arg_tags: ClassVar[ArgTags] = _ARG_TAGS

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        keyed = {
            span.start: span for span in arg_tag_calls(text, catalog, self.arg_tags)
        }
        found: list[Found] = []
        for block in tag_blocks(text, *self.call_tags):
            if too_many(found, text, block[0]):
                break
            keyed_call = keyed.get(block[0])
            found += [keyed_call] if keyed_call else json_block(text, catalog, block)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return [_CLOSE]

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "For each function call, write a JSON object with the function name"
            f" and arguments inside {_OPEN}{_CLOSE} tags:\n"
            f'{_OPEN}\n{{"name": "function_name", "arguments": {{"arg": "value"}}}}\n'
            f"{_CLOSE}\n"
            "If no function is needed, answer normally."
        )
