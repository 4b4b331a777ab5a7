"""Tencent Hunyuan Hy3 and HY 4: GLM's key/value calls in ``<tool_calls>``.

``<tool_calls><tool_call>NAME<tool_sep><arg_key>k</arg_key><arg_value>v
</arg_value></tool_call></tool_calls>``: Hy3 writes ``<tool_sep>`` after the
name, HY 4 does not; either may put newlines between the tags. A checkpoint
may suffix every tag with its own token (``<tool_calls:opensource>``). Values
are typed from the tool's schema, as GLM's are. Hunyuan A13B's JSON list in the
same wrapper is Apriel's (``apriel.py``).

Reasoning is ``<think>…</think>``, or with the released checkpoint's suffix
``<think:opensource>…</think:opensource>``; the chat template writes the opener
into the prompt, so a reply shows only the closer.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import islice
import re
from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..reading.calls import Found, build_result
from ..reading.markup import prefer_outside_reasoning
from ..reading.scan import MAX_BLOCKS, tag_blocks
from ..text.sanitize import register_reasoning_delimiters
from .base import Dialect
from .glm import ArgTags, arg_tag_calls

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["HyDialect"]

register_reasoning_delimiters(
    "<think:opensource>", "</think:opensource>", lone_closer=True
)

# The wrapper, and the checkpoint's suffix on every tag (group 1).
_OPEN = re.compile(r"<tool_calls(:[^\s<>]{1,64})?>")


@lru_cache(maxsize=8)
def _tags(suffix: str) -> ArgTags:
    """The call's tags with a checkpoint's suffix (``""``: none)."""
    return ArgTags.named(
        f"tool_call{suffix}",
        f"arg_key{suffix}",
        f"arg_value{suffix}",
        sep=f"tool_sep{suffix}",
    )


def _block_calls(text: str, catalog: Catalog, suffix: str) -> list[Found]:
    """The calls of every ``<tool_calls>`` block with this suffix; the wrapper
    is spanned by its first and last call, or is empty markup."""
    calls = arg_tag_calls(text, catalog, _tags(suffix))
    found: list[Found] = []
    opener, closer = f"<tool_calls{suffix}>", f"</tool_calls{suffix}>"
    for start, body_start, body_end, end in tag_blocks(text, opener, closer):
        if found and start < found[-1].end:
            continue  # inside a call cut off in an earlier block
        inside = [c for c in calls if body_start <= c.start < body_end]
        if not inside:
            if not text[body_start:body_end].strip():
                found.append(Found(start, end, None))
            continue  # a JSON list (Apriel's), or not a call
        inside[0] = Found(start, inside[0].end, inside[0].call)
        # A cut-off call runs to the end of the text, past the next opener.
        last = inside[-1]
        inside[-1] = Found(last.start, max(end, last.end), last.call)
        found += inside
    return found


class HyDialect(Dialect):
    """Hunyuan Hy3/HY 4 ``<arg_key>``/``<arg_value>`` calls in ``<tool_calls>``."""

    name = "hy"
    markers = ("<tool_calls>", "<tool_calls:")
    triggers = ("<tool_calls",)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        suffixes = dict.fromkeys(
            match.group(1) or "" for match in islice(_OPEN.finditer(text), MAX_BLOCKS)
        )
        found = [f for suffix in suffixes for f in _block_calls(text, catalog, suffix)]
        found = prefer_outside_reasoning(text, sorted(found, key=lambda f: f.start))
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return ["</tool_calls>"]

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "Write all function calls inside <tool_calls></tool_calls> tags, each"
            " in this format:\n<tool_calls>\n<tool_call>function_name<tool_sep>\n"
            "<arg_key>arg</arg_key>\n<arg_value>value</arg_value>\n</tool_call>\n"
            "</tool_calls>\n"
            "If no call is needed, answer normally."
        )
