"""Call markup that a GGUF chat template handed back HTML-escaped.

Some templates escape the whole assistant turn, so ``<tool_call>`` arrives as
``&lt;tool_call&gt;`` (and quotes inside as ``&quot;``). A reply is unescaped
only when an escaped call tag is in it: ordinary prose that merely contains
``&lt;`` is left as written.
"""

from __future__ import annotations

import html
import re

__all__ = ["unescape_markers"]

_ESCAPED_TAG = re.compile(
    r"&lt;\|?/?(?:tool_call|tool_calls|function_call|functioncall|tools?|function[=\s])"
)


def unescape_markers(text: str) -> str:
    """``text`` with HTML entities decoded when it holds an escaped call tag."""
    if "&lt;" in text and _ESCAPED_TAG.search(text):
        return html.unescape(text)
    return text
