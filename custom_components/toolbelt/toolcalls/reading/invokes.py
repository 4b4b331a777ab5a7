"""Invokes as MiniMax M2 writes them, and the formats that took them up.

``<invoke name="fn"><parameter name="k">v</parameter></invoke>`` inside a
block; MiniMax M3, dots.llm, Muse Glimmer's ATEM and DeepSeek's DSML write
the same shape with other words (``InvokeTags``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import re
from typing import TYPE_CHECKING

from ..model import RejectedCall
from .calls import Found, make_call
from .jsonrepair import LooseJSONError, loads_loose
from .markup import parameter_pairs, too_many, typed_text_arguments

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ToolCall

__all__ = ["InvokeTags", "param_invoke_call", "read_invokes"]


def param_invoke_call(
    catalog: Catalog,
    name: str,
    body: str,
    raw: str,
    param: re.Pattern[str],
    param_close: str = "</parameter>",
) -> ToolCall | RejectedCall:
    """A call from the ``param`` elements of one complete invoke body (values
    typed from the schema), or from a JSON object body."""
    pairs = parameter_pairs(body, param, param_close)
    if pairs is None:
        return RejectedCall(name=name, raw=raw, reason="a parameter is never closed")
    if not pairs and body.strip().startswith("{"):
        try:
            return make_call(catalog, name, loads_loose(body.strip()), raw=raw)
        except LooseJSONError as err:
            return RejectedCall(
                name=name, raw=raw, reason=f"arguments are not JSON: {err}"
            )
    args = typed_text_arguments(catalog, name, pairs)
    return make_call(catalog, name, args, raw=raw, coerce=True)


@dataclass(frozen=True, slots=True)
class InvokeTags:
    """How one format writes its invokes, for ``read_invokes``.

    ``body`` reads a closed invoke: ``(catalog, name, body, raw)``.
    ``last_close``: a body ends at the last ``close`` before the next invoke
    (a value may hold the closer) rather than the first. ``bare_markup``: a
    block with no invoke is markup even when it holds text. ``to_next``: a
    call spans (and its raw runs) up to the next invoke, not its closer.
    """

    invoke: re.Pattern[str]
    close: str
    body: Callable[[Catalog, str, str, str], ToolCall | RejectedCall]
    last_close: bool = True
    bare_markup: bool = False
    to_next: bool = False


def read_invokes(
    text: str,
    catalog: Catalog,
    block: tuple[int, int, int, int],
    found: list[Found],
    tags: InvokeTags,
) -> None:
    """Add the invoke calls of one block (``tag_blocks``' tuple; a start of
    -1: invokes with no wrapper) to ``found``; the wrapper is spanned by the
    first and last call, or is empty markup."""
    start, body_start, body_end, end = block
    invokes = list(tags.invoke.finditer(text, body_start, body_end))
    if (
        start >= 0
        and not invokes
        and (tags.bare_markup or not text[body_start:body_end].strip())
    ):
        found.append(Found(start, end, None))
    find = text.rfind if tags.last_close else text.find
    for index, inv in enumerate(invokes):
        if too_many(found, text, inv.start()):
            break
        limit = invokes[index + 1].start() if index + 1 < len(invokes) else body_end
        close = find(tags.close, inv.end(), limit)
        name = inv.group(1).strip()
        after = limit if close < 0 or tags.to_next else close + len(tags.close)
        raw = text[inv.start() : after]
        call = (
            RejectedCall(name=name, raw=raw, reason="call is truncated")
            if close < 0
            else tags.body(catalog, name, text[inv.end() : close], raw)
        )
        first, last = index == 0, index == len(invokes) - 1
        span_start = start if start >= 0 and first else inv.start()
        found.append(Found(span_start, end if start >= 0 and last else after, call))
