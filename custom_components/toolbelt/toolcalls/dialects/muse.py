"""Muse Glimmer: harmony-like channels, calls in an ``<atem:function_calls>`` block.

A reply is a run of channels ``<|start|>assistant to=R<|message|>BODY`` ending
with ``<|eom|>``, ``<|eot|>``, ``<|end_of_text|>`` or the next header. The
generation prompt ends with ``<|start|>assistant``, so the first header is
usually bare (`` to=self<|message|>``). ``to=self`` is reasoning (several
concatenate), ``to=user`` the answer, and a tool recipient's body an ATEM block::

    <atem:function_calls>
    <atem:invoke name="fn">
    <atem:parameter name="k">v</atem:parameter>
    </atem:invoke>
    </atem:function_calls>

Values are typed from the tool's schema. An invoke named ``X.X`` (the template
doubles a bare name's namespace) is ``X`` when ``X`` is a catalog tool. A block
with no header at all is read too; one inside a ``to=user`` or ``to=self`` body
is prose. The channel reading is GPT-OSS's (``gpt_oss.py``), with Muse's
terminators; the invokes are read by MiniMax M2's reader (``read_invokes``).
"""

from __future__ import annotations

from collections.abc import Callable
import re
from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..reading.calls import Found
from ..reading.invokes import InvokeTags, param_invoke_call, read_invokes
from ..reading.scan import tag_blocks
from ..text.reasoning import MUSE_ENDS, TO_SELF, TO_USER
from ..text.sanitize import register_reasoning_delimiters
from .gpt_oss import GptOssDialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, RejectedCall, ToolCall

__all__ = ["MuseDialect"]

_BLOCK = "<atem:function_calls>"
_BLOCK_END = "</atem:function_calls>"
_INVOKE = re.compile(r"""<atem:invoke\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>""")
_PARAM = re.compile(r"""<atem:parameter\s+name\s*=\s*["']?([^"'>]+?)["']?\s*>""")
_ENDS = MUSE_ENDS
_SELF = f"{TO_SELF}<|message|>"
_USER = f"{TO_USER}<|message|>"
# The answer's header where the streaming detector reads it as one: opening
# the reply, after ``<|start|>assistant`` or after an end token.
_USER_HEADER = re.compile(
    r"(?P<before>\A|<\|start\|>[A-Za-z_]{0,20}\s?|<\|eom\|>|<\|eot\|>"
    r"|<\|end_of_text\|>)\s*" + re.escape(_USER)
)

# A reasoning header, or the answer's header.
_SELF_OR_USER = re.compile(f"(?P<thought>{re.escape(_SELF)})|{_USER_HEADER.pattern}")


def _answer_header() -> Callable[[re.Match[str]], str]:
    """A replacement for ``_SELF_OR_USER`` over one text: an answer header
    right after a reasoning message stays (the reasoning block ends at it;
    the end token before it goes, since other formats' cleanups drop such
    tokens before the reasoning is split off), any other goes (its end token
    stays)."""
    after_self = False

    def replace(match: re.Match[str]) -> str:
        nonlocal after_self
        if match.group("thought"):
            after_self = True
            return match.group(0)
        if after_self:
            after_self = False
            return " " + _USER
        return match.group("before")

    return replace


# A reply with no call is cleaned, not parsed: its ``to=self`` bodies are
# reasoning there too (a bare header, or one after ``<|start|>assistant``),
# up to an end token, the next header or a bare switch to the answer.
register_reasoning_delimiters(_SELF, (*_ENDS, "<|start|>", _USER))


def _tool_name(catalog: Catalog, name: str) -> str:
    """``X`` for ``X.X`` when only ``X`` is a catalog tool, else ``name``."""
    head, dot, tail = name.partition(".")
    doubled = dot and head == tail and catalog.resolve(name) is None
    return head if doubled and catalog.resolve(head) is not None else name


def _atem_call(
    catalog: Catalog, name: str, body: str, raw: str
) -> ToolCall | RejectedCall:
    name = _tool_name(catalog, name)
    return param_invoke_call(catalog, name, body, raw, _PARAM, "</atem:parameter>")


_ATEM = InvokeTags(_INVOKE, "</atem:invoke>", _atem_call)


class MuseDialect(GptOssDialect):
    """Muse Glimmer channels: ``to=self`` reasoning, ``to=user`` answer, ATEM calls."""

    name = "muse"
    markers = (_BLOCK, "<|start|>")
    triggers = (_BLOCK, *_ENDS, _SELF)
    terminators = (*GptOssDialect.terminators, *_ENDS)
    bare_switch = True
    cleans = (_USER,)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "# Tools\nThe tools, in JSONSchema format:\n"
            f"{json_catalog(catalog)}\n\n"
            "Write your reasoning to=self and your answer to=user:\n"
            " to=user<|message|>answer<|eot|>\n"
            "To call tools, write a message to the tool holding an ATEM block"
            " (several invokes may share one block):\n"
            "<|start|>assistant to=tool-name<|message|><atem:function_calls>\n"
            '<atem:invoke name="tool-name">\n'
            '<atem:parameter name="arg">value</atem:parameter>\n'
            "</atem:invoke>\n</atem:function_calls><|eot|>"
        )

    @override
    def stop_sequences(self) -> list[str]:
        """Stop after the call block; the parser needs no closer."""
        return [_BLOCK_END]

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found, thoughts, spans = self._messages(text, catalog)
        if _BLOCK in text:
            _bare_blocks(text, catalog, spans, found)
        return self._result(text, found, thoughts)

    @override
    def _channel_calls(
        self,
        text: str,
        catalog: Catalog,
        recipient: str,
        message: tuple[int, int, int, int],
    ) -> list[Found]:
        head_start, body_start, body_end, term_end = message
        body = text[body_start:body_end]
        if _BLOCK not in body:
            return super()._channel_calls(text, catalog, recipient, message)
        calls: list[Found] = []
        for block in tag_blocks(body, _BLOCK, _BLOCK_END):
            read_invokes(body, catalog, block, calls, _ATEM)
        # The whole message is the call's: prose beside the block is not the answer.
        read = [Found(head_start, term_end, f.call) for f in calls if f.call]
        return read or [Found(head_start, term_end, None)]

    @override
    def sanitize(self, text: str) -> str:
        text = super().sanitize(text)
        if _USER not in text:
            return text
        return _SELF_OR_USER.sub(_answer_header(), text)


def _bare_blocks(
    text: str, catalog: Catalog, spans: list[tuple[int, int]], found: list[Found]
) -> None:
    """Add the calls of the blocks outside every message (a reply with no
    header) to ``found``."""
    for block in tag_blocks(text, _BLOCK, _BLOCK_END):
        if not any(start <= block[0] < end for start, end in spans):
            read_invokes(text, catalog, block, found, _ATEM)
