"""The one list of reasoning delimiters, read by the streaming detector and the sanitizer.

Two lists drifted apart once (``<reasoning>`` was cleaned from the answer but
streamed to TTS), so both sides read this one. A block runs from its opener to
the first of its closers. ``lone_closer``: a closer seen before any opener
means everything before it was reasoning (chat templates that put the opener
in the prompt), and so does one after other blocks when its own opener is
nowhere in the reply; only for closers that never appear in prose.
"""

from __future__ import annotations

import re

__all__ = [
    "BARE_HEADER",
    "DELIMITERS",
    "HARMONY_OPENERS",
    "MUSE_ENDS",
    "RECIPIENT",
    "TO_SELF",
    "TO_USER",
    "lone_closers",
    "register",
    "stream_pairs",
]

# (opener, closers, lone_closer), in registration order: ties go to the first.
DELIMITERS: list[tuple[str, tuple[str, ...], bool]] = []

# Harmony (gpt-oss) headers: the detector reads them whole (the channel decides),
# so blocks opened by them are the sanitizer's alone.
HARMONY_OPENERS = ("<|channel|>", "<|start|>")
# Muse Glimmer's bare header (``to=self<|message|>``): read whole by the
# detector at the start of a reply, not watched everywhere as an opener.
BARE_HEADER = "to="
# A header's recipient (``to=functions.fn``); Muse Glimmer's reasoning and
# answer recipients, and the tokens that end its messages.
RECIPIENT = re.compile(r"\bto=([^\s<]+)")
TO_SELF, TO_USER = "to=self", "to=user"
MUSE_ENDS = ("<|eom|>", "<|eot|>", "<|end_of_text|>")


def register(
    opener: str, closers: tuple[str, ...] | str, *, lone_closer: bool = False
) -> bool:
    """Add a block; returns False when it was already known."""
    if isinstance(closers, str):
        closers = (closers,)
    entry = (opener, tuple(closers), lone_closer)
    if entry in DELIMITERS:
        return False
    DELIMITERS.append(entry)
    return True


def stream_pairs() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(opener, closers)`` pairs the streaming detector swallows."""
    return tuple(
        (opener, closers)
        for opener, closers, _ in DELIMITERS
        if not opener.startswith((*HARMONY_OPENERS, BARE_HEADER))
    )


def lone_closers() -> tuple[str, ...]:
    """Closers that end a block the chat template opened in the prompt."""
    return tuple(
        dict.fromkeys(c for _, closers, lone in DELIMITERS if lone for c in closers)
    )


register("<think>", "</think>", lone_closer=True)
register("<thinking>", "</thinking>")
register("<reasoning>", "</reasoning>")
register("[THINK]", "[/THINK]", lone_closer=True)
register("<seed:think>", "</seed:think>", lone_closer=True)
register("<|START_THINKING|>", "<|END_THINKING|>", lone_closer=True)
register("<|think:start|>", "<|think:end|>", lone_closer=True)  # Solar Open 2
register("<|channel>thought", "<channel|>")
register("<|channel|>analysis", ("<|end|>", "<|start|>", "<|channel|>"))
# LLM-jp 4.1 writes harmony with a space after every special token.
register("<|channel|> analysis", ("<|end|>", "<|start|>", "<|channel|>"))
