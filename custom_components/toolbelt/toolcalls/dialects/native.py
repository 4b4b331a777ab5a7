"""Native OpenAI tool calling: the server hands us structured ``tool_calls``."""

from __future__ import annotations

import json
from typing import Any, ClassVar, override

from ..catalog import Catalog
from ..model import (
    MAX_CALLS,
    ParseResult,
    RejectedCall,
    ToolCall,
    too_many_calls,
)
from ..reading.calls import make_call
from ..reading.jsonrepair import json5_budget
from ..text.sanitize import clean
from ..text.surrogates import mend_surrogates
from .base import Dialect

__all__ = ["NativeDialect", "from_openai_tool_calls"]


# Longer than any id a server makes (OpenAI's are 24-40 characters).
_MAX_ID = 128


def _get(item: Any, key: str) -> Any:
    if isinstance(item, dict):
        return item.get(key)
    return getattr(item, key, None)


def _own_id(item: Any, seen: set[str]) -> Any:
    """The server's id for this call, or None (a fresh id) when it cannot be used."""
    call_id = _get(item, "id")
    if isinstance(call_id, str) and (
        call_id in seen or len(call_id) > _MAX_ID or mend_surrogates(call_id) != call_id
    ):
        return None
    return call_id


def from_openai_tool_calls(
    tool_calls: Any, catalog: Catalog, *, content: str | None = ""
) -> ParseResult:
    """Structured ``tool_calls`` (dicts or OpenAI SDK objects) as a ``ParseResult``.

    Arguments may be a JSON string (decoded exactly once) or an object. Ids are
    kept verbatim unless a request could not carry them back: a repeated id
    (each result must find its own call), one over ``_MAX_ID`` characters or
    with a lone surrogate gets a fresh one. Names go through the same allowlist
    as text calls, and as in text, calls past ``MAX_CALLS`` are one refusal.
    """
    calls: list[ToolCall] = []
    rejected: list[RejectedCall] = []
    items = list(tool_calls or ())
    seen: set[str] = set()
    with json5_budget():  # hundreds of calls share one reply's json5 work
        for item in items[:MAX_CALLS]:
            func = _get(item, "function")
            name = _get(func, "name") if func is not None else _get(item, "name")
            arguments = (
                _get(func, "arguments") if func is not None else _get(item, "arguments")
            )
            try:
                raw = json.dumps(
                    {"name": name, "arguments": arguments}, ensure_ascii=False
                )
            except (TypeError, ValueError, RecursionError):
                raw = repr(item)
            call = make_call(
                catalog, name, arguments, raw=raw, call_id=_own_id(item, seen)
            )
            if isinstance(call, ToolCall):
                seen.add(call.id)
                calls.append(call)
            else:
                rejected.append(call)
    if len(items) > MAX_CALLS:
        rejected.append(too_many_calls(f"{len(items) - MAX_CALLS} more calls"))
    text, reasoning = clean(content or "")
    return ParseResult(
        calls=calls,
        content=text,
        reasoning=reasoning,
        dialect="native",
        text_parsed=False,
        rejected=rejected,
    )


class NativeDialect(Dialect):
    """Structured calls; text replies only need reasoning and leakage removed."""

    name: ClassVar[str] = "native"
    structured: ClassVar[bool] = True

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        content, reasoning = clean(text)
        return ParseResult(
            content=content, reasoning=reasoning, dialect=self.name, text_parsed=False
        )
