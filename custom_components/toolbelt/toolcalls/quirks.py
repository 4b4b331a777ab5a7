"""Model quirks removed before any dialect looks at the text a person will hear.

Small local models carry habits from their fine-tunes: a speaker label before
the answer, roleplay BBCode, or running on into an invented next user turn.
None of it should be spoken.
"""

from __future__ import annotations

import re

# "Assistant: Sure." -> "Sure." (only at the very start of the reply).
_SPEAKER = re.compile(r"\A\s*(?:assistant|ai|bot|response)\s*:[ \t]*", re.I)
# [b]bold[/b], [i]…[/i], [color=red]…[/color]: the tags go, the words stay.
_BBCODE = re.compile(r"\[/?(?:b|i|u|s|quote|color|size)(?:=[^\]\n]{1,20})?\]", re.I)
# The model starts writing the user's next line: everything from there is invented.
_NEXT_TURN = re.compile(
    r"\n[ \t]*(?:user|human|###[ \t]*(?:user|instruction|human))[ \t]*:", re.I
)


def strip_quirks(text: str) -> str:
    """The reply without speaker labels, BBCode and invented next turns."""
    if not text:
        return text
    if match := _NEXT_TURN.search(text):
        text = text[: match.start()]
    text = _SPEAKER.sub("", text, count=1)
    return _BBCODE.sub("", text)
