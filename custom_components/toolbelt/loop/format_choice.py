"""Which tool-call format an agent uses: how it asks for calls.

``auto`` sends the tools natively and takes structured tool_calls when the
server returns them; otherwise it reads the text with the model family's preset
chain. An explicit dialect drives the model through the system prompt (no
``tools`` field) and cuts it off with stop sequences. How one hop's reply is
read (a constraint's frame, a leaked format) is ``reply_reader.ReplyReader``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..toolcalls import get_dialect, resolve_dialect
from ..toolcalls.dialects.base import Dialect

NATIVE_FORMATS = frozenset({"auto", "native"})


@dataclass(frozen=True, slots=True)
class FormatChoice:
    """How one agent asks for tool calls, and the dialect its replies are read in
    (unless a hop's constraint or a leak says otherwise: ``ReplyReader``)."""

    name: str
    dialect: Dialect
    send_tools: bool
    text_mode: bool
    stop_sequences: list[str] | None


def choose_format(tool_format: str, model: str, *, has_tools: bool) -> FormatChoice:
    """Resolve an agent's ``tool_format`` setting once per turn."""
    if tool_format in NATIVE_FORMATS:
        return FormatChoice(
            name=tool_format,
            # "native" trusts structured calls only; the reply reader still
            # reads a leaked text call.
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
