"""The data payloads of a server-sent-events body, read to its very end.

We read the chat-completions stream ourselves instead of through the SDK's
``AsyncStream``: openai 3.x stops reading at ``data: [DONE]`` and leaves its
own generators (and httpx's under them) suspended, for the event loop to
close later as stray tasks. Here ``[DONE]`` is handed to the caller, which
stops at once (a server may hold the body open after it), closes the
response and reads once more, which ends every generator in the chain.

Lines are split from the raw bytes as the SSE standard says, at CR, LF or
CRLF only (httpx's ``aiter_lines`` also splits at U+2028, U+2029, U+0085...,
which JSON need not escape), and no line or event may grow past ``limit``
characters: a server that never sends a newline cannot fill the memory.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator
import re

DONE = "[DONE]"
_EOL = re.compile(r"\r\n?|\n")


class EventTooLargeError(Exception):
    """A line or an event went past its size limit."""


async def sse_lines(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[str]:
    """The body's lines (UTF-8, a leading BOM dropped), each at most ``limit`` long.

    Each chunk costs its own length: a line in progress is kept in pieces.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending: list[str] = []
    size = 0
    after_cr = False  # a CR ended the last piece: a LF opening the next is its pair
    start = True
    final = False
    while not final:
        chunk = await anext(chunks, None)
        final = chunk is None
        text = decoder.decode(chunk or b"", final=final)
        if not text:
            continue
        if start:
            text = text.removeprefix("\ufeff")
            start = False
        if after_cr and text.startswith("\n"):
            text = text[1:]
        after_cr = text.endswith("\r")
        pos = 0
        for end in _EOL.finditer(text):
            size += end.start() - pos
            if size > limit:
                raise EventTooLargeError(f"a line longer than {limit} characters")
            pending.append(text[pos : end.start()])
            yield "".join(pending)
            pending.clear()
            size = 0
            pos = end.end()
        size += len(text) - pos
        if size > limit:
            raise EventTooLargeError(f"a line longer than {limit} characters")
        pending.append(text[pos:])
    if size:
        yield "".join(pending)


async def sse_data(lines: AsyncIterator[str], limit: int) -> AsyncIterator[str]:
    """Yield each event's data (multi-line data joined by newlines), then DONE.

    After ``[DONE]`` nothing more is yielded, but the body is still read if the
    caller asks, so the line iterator can end normally. Comments, ``event:``,
    ``id:`` and ``retry:`` fields carry nothing a chat completion needs. An
    event's data lines together may hold at most ``limit`` characters.
    """
    data: list[str] = []
    size = 0
    done = False
    async for line in lines:
        if done:
            continue
        if not line:
            if data:
                payload = "\n".join(data)
                data.clear()
                size = 0
                if payload.strip() == DONE:
                    done = True
                    yield DONE
                    continue
                yield payload
            continue
        field, _, value = line.partition(":")
        if field == "data":
            value = value.removeprefix(" ")
            size += len(value) + 1
            if size > limit:
                raise EventTooLargeError(f"an event longer than {limit} characters")
            data.append(value)
    if data and not done and (payload := "\n".join(data)).strip() != DONE:
        yield payload
