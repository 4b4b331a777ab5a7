"""Functionary v3.1 ``<function=fn>{..}</function>`` and v3.2 ``>>>fn\\n{..}``.

Cases adapted from ggml-org/llama.cpp tests/test-chat.cpp (legacy
``common_chat_parse`` tests and the peg tests for the meetkai templates);
names renamed to the corpus catalog, wire format kept.
"""

from __future__ import annotations

import pytest

from tests.toolcalls.dialect_helpers import (
    calls,
    check_corpus_case,
    corpus_cases,
    expect,
    parse,
    parse_auto,
    stream,
    ws,
)


@pytest.mark.parametrize("case", corpus_cases("functionary"), ids=lambda c: c["id"])
def test_dev_corpus(case):
    check_corpus_case("functionary", case)


ENGINE_CASES = [
    # v3.1 single call
    (
        '<function=HassTurnOn>{"name": "kitchen light"}</function>',
        expect(("HassTurnOn", {"name": "kitchen light"})),
        "",
    ),
    # v3.1 two calls on separate lines
    (
        '<function=HassTurnOn>{"name": "a"}</function>\n<function=GetDateTime>{}</function>',
        expect(("HassTurnOn", {"name": "a"}), ("GetDateTime", {})),
        "",
    ),
    # v3.1 content before the call
    (
        'Let me turn it on.\n<function=HassTurnOn>{"name": "a"}</function>',
        expect(("HassTurnOn", {"name": "a"})),
        "Let me turn it on.",
    ),
    # v3.2 recipient format
    (
        '>>>HassSetVolume\n{"area": "living room", "volume_level": 25}',
        expect(("HassSetVolume", {"area": "living room", "volume_level": 25})),
        "",
    ),
    # v3.2 first block without ">>>" (the prompt ends with it), trailing whitespace
    (
        'HassTurnOn\n{"name": "kitchen light"} \n                    ',
        expect(("HassTurnOn", {"name": "kitchen light"})),
        "",
    ),
    # v3.2 "all" text first, then a call glued to the text
    (
        "all\nHello, world!\nnono\nWhat's up?>>>HassTurnOn\n"
        '{"name": "kitchen light"}\n',
        expect(("HassTurnOn", {"name": "kitchen light"})),
        "Hello, world!\nnono\nWhat's up?",
    ),
    # v3.2 "all" then a call on its own block (Dart port test of the same format)
    (
        '>>>all\nLet me call a tool\n>>>HassTurnOn\n{"name": "x"}',
        expect(("HassTurnOn", {"name": "x"})),
        "Let me call a tool",
    ),
    # v3.2 two calls
    (
        '>>>HassTurnOff\n{"area": "kitchen"}\n>>>GetDateTime\n{}',
        expect(("HassTurnOff", {"area": "kitchen"}), ("GetDateTime", {})),
        "",
    ),
]


@pytest.mark.parametrize(("raw", "expected", "content"), ENGINE_CASES)
def test_engine_cases(raw, expected, content):
    for result in (parse("functionary", raw), parse_auto(raw)):
        assert calls(result) == expected
        assert ws(result.content) == ws(content)


@pytest.mark.parametrize(
    ("raw", "content"),
    [
        # llama.cpp: "all" text only
        ("all\nHello, world!\nWhat's up?", "Hello, world!\nWhat's up?"),
        (">>>all\nHello, world!\nWhat's up?", "Hello, world!\nWhat's up?"),
    ],
)
def test_all_blocks_are_content(raw, content):
    for result in (parse("functionary", raw), parse_auto(raw)):
        assert result.calls == []
        assert result.content == content


@pytest.mark.parametrize(
    "raw",
    [
        # First line that is not a tool, then JSON: prose showing data
        'Sure\n{"name": "kitchen light"}',
        # A known tool on the first line but no JSON body
        "HassTurnOn\nis the tool that switches things on.",
        # Python REPL prompts in prose
        "In Python:\n>>> print(1)\n1",
        "Functionary writes <function=NAME> tags, but no tool is needed here.",
        # A header naming a catalog tool but no JSON after it, and one mid-line
        "functions.HassTurnOn:\nswitches things on.",
        'Call functions.HassTurnOn: with {"area": "kitchen"}',
    ],
)
def test_prose_is_not_a_call(raw):
    for result in (parse("functionary", raw), parse_auto(raw)):
        assert result.calls == []


@pytest.mark.parametrize("size", [1, 3, 1000])
@pytest.mark.parametrize(
    ("raw", "visible"),
    [
        ('Ok <function=HassTurnOn>{"name": "a"}</function>', "Ok "),
        ('>>>HassTurnOn\n{"name": "a"}', ""),
    ],
)
def test_streaming_holds_on_markers(raw, visible, size):
    released, holding = stream("functionary", raw, size=size)
    assert holding
    assert released == visible
