"""OpenAI GPT-OSS harmony format.

A reply is a run of messages: ``[<|start|>assistant][ to=R]<|channel|>C[ to=R]
[<|constrain|>json]<|message|>BODY`` ending with ``<|end|>``, ``<|call|>``,
``<|return|>`` or the next header. The recipient ``to=functions.fn`` makes the
body the JSON arguments of a call (it may sit in the role header or the
channel header). Without a recipient, ``analysis`` is reasoning and never
content, while ``final`` and ``commentary`` are content; final text after a
call is kept (as vLLM does). Built-in recipients (``python``,
``browser.search``, ``container.exec``) are not ours to run and are dropped.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar, override

from ..model import RejectedCall, ToolCall
from ..prompting.render import compact_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    loads_loose,
)
from ..reading.markup import Finder, too_many
from ..reading.reply import probing
from ..text.reasoning import RECIPIENT, TO_SELF
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["GptOssDialect"]

_MESSAGE = "<|message|>"
_TERMINATORS = ("<|end|>", "<|call|>", "<|return|>")
_NEXT_HEADER = ("<|start|>", "<|channel|>")
_HEADER_START = re.compile(r"<\|start\|>|<\|channel\|>|\s?to=")
_RECIPIENT = RECIPIENT
_CHANNEL = re.compile(r"<\|channel\|>\s*([A-Za-z_]+)")
# A bare recipient header ending where a ``<|message|>`` starts.
_BARE_TO = re.compile(r"\s?(?<![\w=])to=[^\s<>]{1,128}\Z")
_NOT_TOOLS = frozenset({"user", "assistant", "all", "system", "developer"})
# A message a tool wrote (``<|start|>functions.fn to=assistant``): a result the
# model invented after its call, neither a call nor an answer.
_TOOL_AUTHOR = re.compile(r"<\|start\|>\s*functions\.")
# The header of a message that is the model's reasoning (Muse Glimmer's).
_THINKING = TO_SELF


def _body_end(
    finder: Finder, start: int, terminators: tuple[str, ...]
) -> tuple[int, int]:
    """``(end of body, end of its terminator)``; a next header is not consumed."""
    best, best_end = len(finder.text), len(finder.text)
    for token in terminators:
        idx = finder.find(token, start)
        if 0 <= idx < best:
            best, best_end = idx, idx + len(token)
    for token in _NEXT_HEADER:
        idx = finder.find(token, start)
        if 0 <= idx < best:
            best, best_end = idx, idx
    return best, best_end


def _switch(
    text: str, finder: Finder, body_start: int, body_end: int, term_end: int
) -> tuple[int, int]:
    """``(body end, message end)``, ending at a bare header (``to=X<|message|>``)
    inside the body: a channel switch with no end token."""
    nxt = finder.find(_MESSAGE, body_start)
    if not 0 <= nxt < body_end:
        return body_end, term_end
    bare = _BARE_TO.search(text, body_start, nxt)
    return (bare.start(), bare.start()) if bare else (body_end, term_end)


class GptOssDialect(Dialect):
    """Harmony messages: calls via ``to=functions.X``, analysis as reasoning."""

    name = "gpt_oss"
    markers: ClassVar[tuple[str, ...]] = ("<|channel|>", "<|start|>", "to=functions.")
    triggers: ClassVar[tuple[str, ...]] = ("<|message|>", "to=functions.")
    # Tokens that end a message (a next header ends one too, not consumed).
    terminators: ClassVar[tuple[str, ...]] = _TERMINATORS
    # Whether a bare ``to=X<|message|>`` inside a body starts the next message.
    bare_switch: ClassVar[bool] = False

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            f"# Tools\nfunctions:\n{compact_catalog(catalog)}\n\n"
            "To call a function, write: <|channel|>commentary to=functions.NAME "
            '<|constrain|>json<|message|>{"arg": "value"}<|call|>\n'
            "If no function is needed, answer the user in the final channel."
        )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found, thoughts, _ = self._messages(text, catalog)
        return self._result(text, found, thoughts)

    def _messages(
        self, text: str, catalog: Catalog
    ) -> tuple[list[Found], list[str], list[tuple[int, int]]]:
        """What every message is (calls, cut headers), its reasoning, and
        each message's ``(start, end)``."""
        found: list[Found] = []
        thoughts: list[str] = []
        spans: list[tuple[int, int]] = []
        prev = 0
        finder = Finder(text)
        pos = finder.find(_MESSAGE)
        while pos >= 0:
            head = _HEADER_START.search(text, prev, pos)
            head_start = head.start() if head else pos
            if too_many(found, text, head_start):
                break
            header = text[head_start:pos]
            body_start = pos + len(_MESSAGE)
            body_end, term_end = _body_end(finder, body_start, self.terminators)
            if self.bare_switch:
                body_end, term_end = _switch(
                    text, finder, body_start, body_end, term_end
                )
            recipients = _RECIPIENT.findall(header)
            channels = _CHANNEL.findall(header)
            recipient = recipients[-1] if recipients else ""
            channel = channels[-1].lower() if channels else ""
            thinking = f"to={recipient.lower()}" == _THINKING
            if recipient and recipient.lower() not in _NOT_TOOLS and not thinking:
                found += self._channel_calls(
                    text,
                    catalog,
                    recipient,
                    (head_start, body_start, body_end, term_end),
                )
            elif _TOOL_AUTHOR.match(header):
                found.append(Found(head_start, term_end, None))
            elif channel == "analysis" or thinking:
                # Reasoning: cut whole, reported as reasoning, never content.
                thoughts.append(text[body_start:body_end].strip())
                found.append(Found(head_start, term_end, None))
            else:
                # Content: cut the header and terminator, keep the body.
                found.append(Found(head_start, body_start, None))
                if term_end > body_end:
                    found.append(Found(body_end, term_end, None))
            spans.append((head_start, term_end))
            prev = term_end
            pos = finder.find(_MESSAGE, max(term_end, body_start))
        return found, thoughts, spans

    def _result(
        self, text: str, found: list[Found], thoughts: list[str]
    ) -> ParseResult:
        if probing() and all(f.call is None for f in found):
            # A chain asks only "any calls?": channels without one are none.
            return build_result(text, (), self.name)
        result = build_result(text, found, self.name, sanitize=self.sanitize)
        if result.end is not None:  # None: no call (or only examples of one)
            # ``end`` is after the last call, not after content headers cut later.
            result.end = max((f.end for f in found if f.call is not None), default=None)
        if thoughts:
            result.reasoning = "\n".join(t for t in (*thoughts, result.reasoning) if t)
        return result

    def _channel_calls(
        self,
        text: str,
        catalog: Catalog,
        recipient: str,
        message: tuple[int, int, int, int],
    ) -> list[Found]:
        """The calls of a message to a tool: ``message`` is its header start,
        body start, body end and end."""
        head_start, body_start, body_end, term_end = message
        call = self._call(
            catalog,
            recipient,
            text[body_start:body_end],
            text[head_start:term_end],
            closed=term_end > body_end or body_end < len(text),
        )
        return [Found(head_start, term_end, call)]

    def _call(
        self, catalog: Catalog, recipient: str, body: str, raw: str, *, closed: bool
    ) -> ToolCall | RejectedCall:
        name = recipient
        if name.startswith("functions."):
            name = name[len("functions.") :]
        elif catalog.resolve(name) is None:
            # A built-in tool (python, browser.*): not exposed, never content.
            return RejectedCall(name=name, raw=raw, reason=f"unknown tool: {name}")
        body = body.strip()
        if not body:
            return make_call(catalog, name, {}, raw=raw)
        try:
            args = loads_loose(body)
        except TruncatedJSONError:
            return RejectedCall(name=name, raw=raw, reason="arguments are truncated")
        except LooseJSONError as err:
            reason = (
                "arguments are truncated"
                if not closed
                else f"arguments are not JSON: {err}"
            )
            return RejectedCall(name=name, raw=raw, reason=reason)
        return make_call(catalog, name, args, raw=raw)

    @override
    def stop_sequences(self) -> list[str]:
        return ["<|call|>"]
