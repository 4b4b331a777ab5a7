"""rednote dots.llm: ``<dots_function_call>…</dots_function_call>``.

The block holds ``<invoke name="fn"><parameter name="k">v</parameter>
</invoke>`` elements, read as MiniMax M2's are (values typed from the tool's
schema), or one JSON call object (``{"name": .., "arguments": {..}}``). A
block that is neither is refused, and never spoken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.invokes import read_invokes
from ..reading.markup import prefer_outside_reasoning, too_many
from ..reading.scan import skip_ws, tag_blocks
from .base import Dialect
from .hermes import json_block
from .minimax import M2_TAGS

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["DotsDialect"]

_OPEN = "<dots_function_call>"
_CLOSE = "</dots_function_call>"


class DotsDialect(Dialect):
    """dots.llm ``<dots_function_call>`` blocks of invokes or JSON."""

    name = "dots"
    markers = (_OPEN,)
    triggers = (_OPEN,)
    # A closer with no block is the format's word, never content (vLLM).
    dropped = (_CLOSE,)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        for block in tag_blocks(text, _OPEN, _CLOSE):
            if too_many(found, text, block[0]):
                break
            if text.startswith("<invoke", skip_ws(text, block[1])):
                read_invokes(text, catalog, block, found, M2_TAGS)
            else:
                found += json_block(text, catalog, block)
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
            f"To call functions, write them inside {_OPEN}{_CLOSE} tags:\n"
            f'{_OPEN}\n<invoke name="function_name">\n'
            '<parameter name="arg">value</parameter>\n</invoke>\n'
            f"{_CLOSE}\n"
            "If no call is needed, answer normally."
        )
