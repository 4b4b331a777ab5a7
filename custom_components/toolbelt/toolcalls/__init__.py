"""Turn any model reply into exact tool calls plus clean user-visible text.

Pure Python (no Home Assistant import) so it can be tested, benchmarked and
run as a CLI on its own: ``python -m custom_components.toolbelt.toolcalls``.
"""

from __future__ import annotations

from .catalog import Catalog, ToolSpec
from .chain import ChainDialect
from .dialects.base import Dialect
from .dialects.native import from_openai_tool_calls
from .model import ParseResult, RejectedCall, ToolCall
from .reading.calls import (
    Found,
    build_result,
    call_from_object,
    calls_from_value,
    make_call,
    new_call_id,
)
from .reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    decode_arguments,
    loads_loose,
    scan_json,
)
from .reading.schema import ArgumentError, coerce_arguments, validate_arguments
from .registry import (
    PRESETS,
    UnknownDialectError,
    dialect_names,
    get_dialect,
    preset_for_model,
    register_dialect,
    register_preset,
    resolve_dialect,
)
from .text.sanitize import clean, split_reasoning, strip_leakage
from .text.streaming import StreamDetector

__all__ = [
    "PRESETS",
    "ArgumentError",
    "Catalog",
    "ChainDialect",
    "Dialect",
    "Found",
    "LooseJSONError",
    "ParseResult",
    "RejectedCall",
    "StreamDetector",
    "ToolCall",
    "ToolSpec",
    "TruncatedJSONError",
    "UnknownDialectError",
    "build_result",
    "call_from_object",
    "calls_from_value",
    "clean",
    "coerce_arguments",
    "decode_arguments",
    "dialect_names",
    "from_openai_tool_calls",
    "get_dialect",
    "loads_loose",
    "make_call",
    "new_call_id",
    "parse",
    "preset_for_model",
    "register_dialect",
    "register_preset",
    "resolve_dialect",
    "scan_json",
    "split_reasoning",
    "strip_leakage",
    "validate_arguments",
]


def parse(
    text: str,
    catalog: Catalog,
    tool_format: str = "auto",
    model: str | None = None,
) -> ParseResult:
    """Parse one complete reply with the dialect ``tool_format`` resolves to."""
    return resolve_dialect(tool_format, model).parse(text, catalog)
