"""Which tool-call format an agent uses, and how a reply is read with it.

``auto`` sends the tools natively and takes structured tool_calls when the
server returns them; otherwise it reads the text with the model family's preset
chain and then every known dialect. An explicit dialect drives the model through
the system prompt (no ``tools`` field) and cuts it off with stop sequences. If a
model leaks another dialect's format, that dialect reads it and we warn once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..toolcalls import (
    Catalog,
    ParseResult,
    dialect_names,
    from_openai_tool_calls,
    get_dialect,
    resolve_dialect,
)
from ..toolcalls.dialects.base import Dialect

NATIVE_FORMATS = frozenset({"auto", "native"})


@dataclass(frozen=True, slots=True)
class FormatChoice:
    """How one agent asks for and reads tool calls."""

    name: str
    dialect: Dialect
    send_tools: bool
    text_mode: bool
    stop_sequences: list[str] | None

    def interpret(
        self,
        text: str,
        structured: list[dict[str, Any]],
        catalog: Catalog,
        warn_once: Callable[[str], None],
    ) -> ParseResult:
        """What a reply means: structured calls first, then the text.

        ``structured``: whole calls from ``ToolCallAccumulator``, parsed as they are.
        """
        if structured:
            result = from_openai_tool_calls(structured, catalog)
            text_view = self.dialect.parse(text, catalog)
            result.content = text_view.content
            result.reasoning = result.reasoning or text_view.reasoning
            return result
        result = self.dialect.parse(text, catalog)
        if result.calls or not catalog.names:
            return result
        leaked = _leaked_dialect(text, exclude=self.name)
        if leaked is None:
            return result
        other = get_dialect(leaked).parse(text, catalog)
        if other.calls:
            warn_once(
                f"The model answered in the {leaked} tool-call format although the"
                f" agent is set to {self.name}; Toolbelt read it anyway"
            )
            return other
        return result


def _leaked_dialect(text: str, *, exclude: str) -> str | None:
    """The first dialect (other than ours) whose markers appear in the text."""
    for name in dialect_names():
        if name == exclude:
            continue
        dialect = get_dialect(name)
        if any(marker in text for marker in dialect.markers):
            return name
    return None


def choose_format(tool_format: str, model: str, *, has_tools: bool) -> FormatChoice:
    """Resolve an agent's ``tool_format`` setting once per turn."""
    if tool_format in NATIVE_FORMATS:
        return FormatChoice(
            name=tool_format,
            # "native" trusts structured calls only; leaks still get read below.
            dialect=resolve_dialect("auto", model)
            if tool_format == "auto"
            else get_dialect("native"),
            send_tools=True,
            text_mode=False,
            stop_sequences=None,
        )
    dialect = resolve_dialect(tool_format, model)
    return FormatChoice(
        name=tool_format,
        dialect=dialect,
        send_tools=False,
        text_mode=has_tools,
        stop_sequences=(dialect.stop_sequences() or None) if has_tools else None,
    )
