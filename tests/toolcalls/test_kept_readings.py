"""Replies that issue 23's new formats first read worse than the code before.

Two reviews fed realistic replies to the code before and after that change;
each case here read worse after it until fixed. Four now read better than
before it too: the stray tool name before a whole call object is no longer
spoken, invokes after a closed ``<tool_calls>`` block are read, and two answer
messages keep their space.
"""

from __future__ import annotations

import pytest

from .dialect_helpers import calls, parse_auto

LIGHT = {"name": "kitchen"}


@pytest.mark.parametrize(
    ("raw", "want", "content"),
    [
        # A tool's name written before a whole call object: the object is the
        # call, not the arguments of a call named by the word.
        (
            '<tool_call>\nHassTurnOn\n{"name": "HassTurnOn", "arguments": '
            '{"name": "kitchen"}}\n</tool_call>',
            [("HassTurnOn", LIGHT)],
            "",
        ),
        (
            '<tool_call>web_search {"name": "web_search", "arguments": '
            '{"query": "x"}}</tool_call>',
            [("web_search", {"query": "x"})],
            "",
        ),
        # A quoted user turn naming a tool is no call.
        (
            "Previous turn:\n<user>\nGetDateTime\n</user>\nIt is 5pm.",
            [],
            "Previous turn:\n<user>\nGetDateTime\n</user>\nIt is 5pm.",
        ),
        ("<think><user>HassTurnOn</user> said</think>The light is on.", [], None),
        # An unbalanced brace after a name does not carry the block over the
        # answer after it.
        (
            '<tool_call>HassTurnOn {"name": "kitchen"</tool_call>\n'
            'Done. It uses {{ states }} templates, like {"a": 1}}.',
            [],
            'Done. It uses {{ states }} templates, like {"a": 1}}.',
        ),
        # Qwen3-Coder markup the model broke is refused, never spoken.
        ("<function=HassTurnOn<parameter=name>x</parameter></function>", [], ""),
        # Invokes after a closed <tool_calls> block still count; an unclosed
        # wrapper named in prose stays prose.
        (
            '<tool_calls><invoke name="HassTurnOn"><parameter name="name">kitchen'
            '</parameter></invoke></tool_calls>\n<invoke name="HassTurnOff">'
            '<parameter name="name">porch</parameter></invoke>',
            [("HassTurnOn", LIGHT), ("HassTurnOff", {"name": "porch"})],
            "",
        ),
        (
            'The <tool_calls> tag wraps calls.\n<invoke name="HassTurnOn">'
            '<parameter name="name">kitchen</parameter></invoke>',
            [("HassTurnOn", LIGHT)],
            "The <tool_calls> tag wraps calls.",
        ),
        # Two answer messages stay two sentences.
        (
            "<|start|>assistant to=user<|message|>One moment.<|end|><|start|>"
            "assistant to=user<|message|>The kitchen light is on.",
            [],
            "One moment. The kitchen light is on.",
        ),
    ],
)
def test_a_reply_reads_as_it_did(raw: str, want: list, content: str | None) -> None:
    result = parse_auto(raw)
    assert calls(result) == [(name, args) for name, args in want]
    if content is not None:
        assert result.content == content
    else:
        assert result.content == "The light is on."
