"""AllenAI OLMo 3: ``<function_calls>NAME(k=v)\\nNAME2(...)</function_calls>``.

Python calls, one per line, inside the tags; keyword arguments with Python or
JSON literals (``None``/``null``, ``True``/``true``). A call that cannot be
read (bytes, an infinite number) is refused on its own and the others run; a
block of calls that cannot be read at all is refused whole. A block that does
not open with a call is not OLMo's (prose naming the tag, another format). OLMo 3 Think opens its
reasoning in the prompt and writes only the closing ``</think>``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..model import RejectedCall
from ..prompting.render import compact_catalog
from ..reading.calls import Found, build_result
from ..reading.markup import prefer_outside_reasoning, too_many
from ..reading.pycall import PyCallError
from ..reading.scan import tag_blocks
from .base import Dialect
from .pythonic import python_calls

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall

__all__ = ["Olmo3Dialect"]

_OPEN = "<function_calls>"
_CLOSE = "</function_calls>"
_CALL_START = re.compile(r"[A-Za-z_][\w.\-]*\s*\(")


class Olmo3Dialect(Dialect):
    """OLMo 3 ``<function_calls>`` Python calls."""

    name = "olmo3"
    markers = (_OPEN,)
    triggers = (_OPEN,)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        for start, body_start, body_end, end in tag_blocks(text, _OPEN, _CLOSE):
            if too_many(found, text, start):
                break
            body = text[body_start:body_end].strip()
            raw = text[start:end]
            if not body:
                found.append(Found(start, end, None))
                continue
            if not _CALL_START.match(body):
                continue  # not calls (prose naming the tag, another format's body)
            calls: list[ToolCall | RejectedCall]
            try:
                calls = python_calls(catalog, body, raw=raw)
            except PyCallError as err:
                reason = (
                    "call is truncated"
                    if body_end == end
                    else f"cannot read the calls: {err}"
                )
                calls = [RejectedCall("", raw, reason)]
            found.extend([Found(start, end, call) for call in calls])
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions:\n"
            f"{compact_catalog(catalog)}\n\n"
            "To call functions, write them one per line, with keyword arguments, "
            f"between {_OPEN} and {_CLOSE}:\n"
            f"{_OPEN}function_name(param='value'){_CLOSE}\n"
            "If no function is needed, answer normally."
        )

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return [_CLOSE]
