"""Python-call reading: the one-pass reader of plain calls agrees with ``ast``.

``parse_python_calls`` reads plain replies (``[HassTurnOn(name="kitchen
light")]``) without compiling them; everything it is unsure of goes to
``ast``. Whatever the plain reader returns must be exactly what ``ast`` reads
(same names, same values, same types), and whatever Python would refuse it
must leave to ``ast``.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st
import pytest

from custom_components.toolbelt.toolcalls.reading import pycall
from custom_components.toolbelt.toolcalls.reading.pycall import (
    PyCallError,
    parse_python_calls,
)


def _by_ast(source: str) -> str:
    """What the ``ast`` path reads, as text (types show: 1, 1.0, True differ)."""
    try:
        return repr(pycall._ast_calls(source))
    except PyCallError:
        return "refused"


# Plain shapes: read in one pass.
PLAIN = [
    '[HassTurnOn(name="kitchen light")]',
    "[HassTurnOn(name='kitchen light'), HassTurnOff(area='porch')]",
    '[\n  HassLightSet(area="living room", brightness=50),\n  GetLiveContext(),\n]',
    "HassLightSet(name='kitchen light', color='warm white')\nGetDateTime()",
    "HassTurnOn(name='a')\n  \n\nHassTurnOff(name='b')",
    "memory_store(content='x', tags=[], metadata={}, pinned=True, expires=None)",
    "f(a=true, b=false, c=null, d=-0, e=-0.0, f=1.50, g=0, h=-12)",
    "f('positional', 2, k={'a': [1, {'b': 'c'}], 'a': 2})",
    "brave_search.call(query='weather')",
    "tools.HassTurnOn(name='x',)",
    "f(a=\"it's\", b='say \"hi\"', c='é 北京 \x7f \u2028')",
    "[]",
    r"""f(a='Ben\'s "special" sauce', b="say \"hi\"", c='\\n\n\t\r')""",
    "f(a=b'x', b=u'y', c=R'z', d=Rb'w', e=bR'')",
    "f(a=1e5, b=-1E+05, c=1e999, d=-1e999, e=0e0, f=2.5e-3)",
    "f(a=" + "[" * 65 + "]" * 65 + ")",  # as deep as MAX_DEPTH allows
    "f(a=" + "[" * 63 + "-1" + "]" * 63 + ")",
    "f(a=" + "{'k': " * 64 + "1" + "}" * 64 + ")",
    r"""f(x={"a\nb": 1, 'it\'s': 2, "say \"hi\"": 3})""",  # keys unescaped as values
]

# Shapes ``ast`` must decide (some it reads, some it refuses).
NOT_PLAIN = [
    "f(a='a' 'b')",  # implicit concatenation
    "f(a=07)",  # leading zero: a SyntaxError
    "f(a=1_000)",
    "f(a=0x10)",
    "f(a=1.)",
    "f(a=- 5)",
    "f(a=-True)",
    "f(a=u'\\n')",  # a prefix and an escape
    "f(a='\\x41')",  # an escape the plain reader leaves to ``ast``
    "f(a='\\N{BULLET}')",
    "f(a=b'é')",
    "f(a=1234567890123456)",  # more digits than the plain reader takes
    "f(a=(1, 2))",
    "f(a={1, 2})",
    "f(a={1: 2})",
    "f(a=1, a=2)",  # repeated keyword: a SyntaxError
    "f(a=1, 2)",  # positional after keyword: a SyntaxError
    "f(class=1)",
    "f(True=1)",
    "True(a=1)",
    "a.if(x=1)",
    "match(a=1)",  # a soft keyword
    "print(f(a=1))",
    "f (a=1)",
    "f(a=1)(b=2)",
    "f(a=1)[0]",
    "f(a=1)\n  g(b=2)",  # unexpected indent
    "f(a=1); g(b=2)",
    "f(a=1) # a comment",
    "f(a=1),g(b=2)",  # a tuple of calls
    "f(a=1)\r\ng(b=2)",
    "café(a=1)",
    "f(a='x\x00')",
    "f(a='\ud800')",
    "f(**k)",
    "f(a=[1,,2])",
    "[f(a=1) g(b=2)]",
    "f(a='" + "x" * 1000 + "')",  # long text: ``ast`` stops at its first error
]


# Refused without ``ast``: a value that starts with a name (never a literal),
# a bracket that closes what is not open (Python's tokenizer stops there).
REFUSED = [
    "f(a=x)",
    "[HassTurnOn(name='kitchen light'), HassTurnOff(name=porch light)]",
    "f(a=x.y)",
    "f(a=x(1))",
    "f(a=x if True else 1)",
    "f(x for x in [1])",
    "f(a=lambda: 1)",
    "f(a=not True)",
    "f(a=[1, {'b': match}])",
    "f(a=Trueish)",
    "f(a=x\n",
    "f(a=x\\\n)",
    "HassLightSet(brightness=1])",
    "[HassLightSet(brightness=1}]",
    "f(a=[1, 2)",
    "f(a={'b': 1])",
    "f(a=)",
    "f(a=1, b=]",
    "[f(a=1))",
    "[f(a=1), )]",
    ")",
    "f(a=f'{x}')",
    "f(a=f'x')",
    "f(a=t'x')",
    "f(a=rf'x\\n')",
    "f(a=x'y')",
    "f(a=ur'y')",
    "f(a=a.b'y')",
    "f(a=" + "[" * 66 + "]" * 66 + ")",  # deeper than MAX_DEPTH
    "f(a=" + "[" * 64 + "-1" + "]" * 64 + ")",  # the sign is one more level
    "f(a=" + "{'k': " * 64 + "-1" + "}" * 64 + ")",
    "[f(a=" + "[" * 200 + "]" * 200 + "), g(b=1)]",
]


@pytest.mark.parametrize("source", PLAIN)
def test_plain_calls_read_in_one_pass_as_ast_reads_them(source):
    plain = pycall._plain_calls(source)
    assert plain is not None
    assert repr(plain) == _by_ast(source)
    assert repr(parse_python_calls(source)) == _by_ast(source)


@pytest.mark.parametrize("source", REFUSED)
def test_what_python_refuses_whatever_follows_is_refused_without_ast(source):
    with pytest.raises(pycall._Refused):
        pycall._plain_calls(source)
    with pytest.raises(PyCallError):
        parse_python_calls(source)
    assert _by_ast(source) == "refused"


@pytest.mark.parametrize("source", NOT_PLAIN)
def test_other_shapes_are_left_to_ast(source):
    assert pycall._plain_calls(source) is None
    try:
        read = repr(parse_python_calls(source))
    except PyCallError:
        read = "refused"
    assert read == _by_ast(source)


_ATOMS = st.sampled_from(
    [
        '"a b"',
        "'x'",
        "''",
        '"é"',
        "0",
        "07",
        "-0",
        "-0.0",
        "1.5",
        "1.",
        ".5",
        "1e5",
        "-5",
        "- 5",
        "True",
        "null",
        "x",
        "u'x'",
        "b'x'",
        "f'x'",
        "'\\''",
        '"\\n\\\\"',
        "'\\x41'",
        "1e5",
        "-1E-5",
        "x y",
        "x.y",
        "x(1)",
        "b'x'",
        "[]",
        "{}",
        "[1,]",
        '{"a": 1}',
        '{"a\\nb": 1, \'it\\\'s\': "x"}',
        "{1: 2}",
        "(1,)",
        '"a" "b"',
        "1-2",
    ]
)
_NAMES = st.sampled_from(["f", "HassTurnOn", "a.b", "x.call", "print", "None", "if"])
_GLUE = st.sampled_from(
    ["", " ", "\n", "\t", "\r", ",", ", ", "=", ";", "#", "\\", ")", "]", "}", "["]
)


@st.composite
def _call_like(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        args = [
            draw(st.sampled_from(["", "a=", "b =", "a ="])) + draw(_ATOMS)
            for _ in range(draw(st.integers(0, 3)))
        ]
        glue = draw(st.sampled_from([",", ", ", ",\n", " ,"]))
        end = draw(st.sampled_from([")", ",)", "", "))", "]"]))
        parts.append(
            draw(_NAMES) + draw(st.sampled_from(["(", " ("])) + glue.join(args) + end
        )
    source = draw(st.sampled_from(["\n", ", ", "; ", "\n  "])).join(parts)
    if draw(st.booleans()):
        source = f"[{source}]"
    if draw(st.booleans()):
        at = draw(st.integers(0, len(source)))
        source = source[:at] + draw(_GLUE) + source[at:]
    return source


@given(_call_like())
@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
def test_whatever_the_plain_reader_returns_is_what_ast_reads(source):
    source = source.strip()  # as parse_python_calls hands it to either reader
    try:
        plain = pycall._plain_calls(source)
    except pycall._Refused:
        assert _by_ast(source) == "refused"
        return
    if plain is not None:
        assert repr(plain) == _by_ast(source)
