"""The data payloads of a server-sent-events body, read to its very end.

We read the chat-completions stream ourselves instead of through the SDK's
``AsyncStream``: openai 3.x stops reading at ``data: [DONE]`` and leaves its
own generators (and httpx's under them) suspended, for the event loop to
close later as stray tasks. Here ``[DONE]`` is handed to the caller, which
stops at once (a server may hold the body open after it), closes the
response and reads once more, which ends every generator in the chain.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

DONE = "[DONE]"


async def sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """Yield each event's data (multi-line data joined by newlines), then DONE.

    After ``[DONE]`` nothing more is yielded, but the body is still read if the
    caller asks, so the line iterator can end normally. Comments, ``event:``,
    ``id:`` and ``retry:`` fields carry nothing a chat completion needs.
    """
    data: list[str] = []
    done = False
    async for line in lines:
        if done:
            continue
        if not line:
            if data:
                payload = "\n".join(data)
                data.clear()
                if payload.strip() == DONE:
                    done = True
                    yield DONE
                    continue
                yield payload
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value.removeprefix(" "))
    if data and not done and (payload := "\n".join(data)).strip() != DONE:
        yield payload
