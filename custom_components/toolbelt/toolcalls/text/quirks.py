"""Model quirks removed before any dialect looks at the text a person will hear.

Small local models carry habits from their fine-tunes: a speaker label before
the answer, roleplay BBCode, or running on into an invented next user turn.
None of it should be spoken.
"""

from __future__ import annotations

import re

# "Assistant: Sure." -> "Sure." (only at the very start of the reply).
# Possessive "\s*+": no backtracking through a megabyte of leading whitespace.
_SPEAKER = re.compile(r"\s*+(?:assistant|ai|bot|response)\s*:[ \t]*", re.I)
# [b]bold[/b], [i]…[/i], [color=red]…[/color]: the tags go, the words stay.
# Case folding only on the tag name: a case-insensitive "[" costs 2x per bracket.
_BBCODE = re.compile(r"\[/?(?i:[bius]|quote|color|size)(?:=[^\]\n]{1,20})?\]")
# The model starts writing the user's next line: everything from there is invented.
_NEXT_TURN = re.compile(
    r"\n[ \t]*+(?=[uh#])(?:user|human|###[ \t]*(?:user|instruction|human))[ \t]*:", re.I
)


def strip_quirks(text: str) -> str:
    """The reply without speaker labels, BBCode and invented next turns."""
    if not text:
        return text
    if ":" in text:  # a label and an invented turn both end with one
        if match := _NEXT_TURN.search(text):
            text = text[: match.start()]
        if match := _SPEAKER.match(text):
            text = text[match.end() :]
    if "]" not in text:  # no tag can close: skip a pass over every "["
        return text
    return _BBCODE.sub("", text)
