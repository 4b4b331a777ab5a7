"""Native OpenAI tool calling: the server hands us structured ``tool_calls``."""

from __future__ import annotations

import json
from typing import Any, ClassVar, override

from ..calls import make_call
from ..catalog import Catalog
from ..jsonrepair import json5_budget
from ..model import (
    ParseResult,
    RejectedCall,
    ToolCall,
)
from ..sanitize import clean
from .base import Dialect

__all__ = ["NativeDialect", "from_openai_tool_calls"]


def _get(item: Any, key: str) -> Any:
    if isinstance(item, dict):
        return item.get(key)
    return getattr(item, key, None)


def from_openai_tool_calls(
    tool_calls: Any, catalog: Catalog, *, content: str | None = ""
) -> ParseResult:
    """Structured ``tool_calls`` (dicts or OpenAI SDK objects) as a ``ParseResult``.

    Arguments may be a JSON string (decoded exactly once) or an object. Ids are
    kept verbatim; names go through the same allowlist as text calls.
    """
    calls: list[ToolCall] = []
    rejected: list[RejectedCall] = []
    with json5_budget():  # hundreds of calls share one reply's json5 work
        for item in tool_calls or ():
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
                catalog, name, arguments, raw=raw, call_id=_get(item, "id")
            )
            if isinstance(call, ToolCall):
                calls.append(call)
            else:
                rejected.append(call)
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
