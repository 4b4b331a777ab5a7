"""Python-call syntax (``fn(a=1, b='x')``, ``[f(), g()]``) read safely with ``ast``.

Used by pythonic, tool_code, Llama built-ins (``brave_search.call(...)``) and
the plain ``name(args)`` fallback. Nothing is evaluated: only literals are
accepted, plus JSON's ``true/false/null`` spellings.

Most replies are plain (``[HassTurnOn(name="kitchen light")]``): one regular
expression splits those into tokens and a small reader turns them into calls,
exactly as ``ast`` would, without compiling. Anything else goes to ``ast``.
"""

from __future__ import annotations

import ast
from keyword import kwlist, softkwlist
import re
from typing import Any, NoReturn

from .jsonrepair import MAX_DEPTH
from .numbers import int_fits

__all__ = ["PyCallError", "parse_python_calls"]

_NAMED = {
    "True": True,
    "False": False,
    "None": None,
    "true": True,
    "false": False,
    "null": None,
}


class PyCallError(ValueError):
    """The text is not a call expression made of literals."""


# The plain shape most replies take, read in one pass without compiling:
# calls with keyword or positional arguments whose values are quoted strings
# (escapes ``\\ \' \" \n \t \r`` only), short decimal numbers, the six names
# above, lists and string-keyed dicts of those. Anything else (other escapes,
# comments, tuples, sets, expressions, odd whitespace, non-ASCII names) is left
# to ``ast``.
# A short decimal number, as ``int``/``float`` read it and ``ast`` would.
_NUMBER = r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?(?:[eE][-+]?[0-9]{1,4})?"
_TOKENS = re.compile(
    r"([ \t\n]*)(?:"
    r"(\"[^\"\\\n\r\x00\ud800-\udfff]*(?:\\[\\'\"ntr][^\"\\\n\r\x00\ud800-\udfff]*)*\""
    r"|'[^'\\\n\r\x00\ud800-\udfff]*(?:\\[\\'\"ntr][^'\\\n\r\x00\ud800-\udfff]*)*')"  # 1
    rf"|({_NUMBER})(?![\w.])"  # 2
    r"|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?![\w.])"  # 3 name
    r"|([\[\](){},:=])"  # 4 punctuation
    r"|(.))",  # 5 anything else
    re.S,
)
_END = ("", "", "", "", "", "end")
# The flattest shape of all (``_flat_calls``): keyword arguments whose values
# are strings without escapes, numbers or the six names; the token reader's
# own pieces, so it reads the same text the same way. No piece can end where
# the next begins, so nothing is ever given back: possessive repeats and an
# atomic value keep the regex engine from saving states it never returns to.
_WS = r"[ \t\n]*+"
_FLAT_NAME = r"[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+"
_FLAT_KEY = r"[A-Za-z_][A-Za-z0-9_]*+"
_FLAT_TEXT = r"\"[^\"\\\n\r\x00\ud800-\udfff]*+\"|'[^'\\\n\r\x00\ud800-\udfff]*+'"
_FLAT_NUMBER = rf"{_NUMBER}(?![\w.])"
_FLAT_NAMED = rf"(?:{'|'.join(_NAMED)})(?![\w.])"
_FLAT_ARG = rf"{_FLAT_KEY}{_WS}={_WS}(?>{_FLAT_TEXT}|{_FLAT_NUMBER}|{_FLAT_NAMED})"
_FLAT_CALL = (
    rf"{_FLAT_NAME}\({_WS}"
    rf"(?:{_FLAT_ARG}{_WS}(?:,{_WS}{_FLAT_ARG}{_WS})*+(?:,{_WS})?+)?+\)"
)
_FLAT_LIST = (
    rf"\[{_WS}(?:{_FLAT_CALL}{_WS}(?:,{_WS}{_FLAT_CALL}{_WS})*+(?:,{_WS})?+)?+\]"
)
_FLAT_STATEMENT = rf"(?:{_FLAT_LIST}|{_FLAT_CALL})"
_FLAT = re.compile(rf"{_FLAT_STATEMENT}(?:(?:[ \t]*+\n)++{_FLAT_STATEMENT})*+")
# The pieces of a text ``_FLAT`` matched: a call's name, or one argument.
_FLAT_PIECES = re.compile(
    rf"({_FLAT_NAME})\(|({_FLAT_KEY}){_WS}={_WS}"
    rf"(?:({_FLAT_TEXT})|({_FLAT_NUMBER})|({_FLAT_NAMED}))"
)
# Longer text goes to ``ast``, which stops at its first error where this reader
# splits the whole text into tokens first (a reply's calls are far shorter).
_PLAIN_MAX = 1_000
_QUOTES = frozenset("'\"")
_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
# String prefixes, lower-cased: text, bytes, and f/t-strings (never literals).
_TEXT_PREFIXES = frozenset(("u", "r"))
_BYTES_PREFIXES = frozenset(("b", "br", "rb"))
_FORMAT_PREFIXES = frozenset(("f", "fr", "rf", "t", "tr", "rt"))
_CLOSERS = frozenset(")]}")
_STATEMENT_BREAK = re.compile(r"(?:[ \t]*\n)+")
# Names ``ast`` reads otherwise (keywords; ``print(call(...))`` is unwrapped).
_RESERVED = frozenset((*kwlist, *softkwlist, "print"))


class _Unsure(Exception):
    """Not the plain shape: ``ast`` decides (caught in ``_plain_calls``)."""


class _Refused(Exception):
    """Text ``ast`` refuses whatever follows, so it is never compiled (caught in
    ``parse_python_calls``): a value that starts with a name (``name=porch
    light``: a name or an expression, never a literal), a bracket that closes
    what is not open (``brightness=1])``: Python's tokenizer stops there), a
    value nested deeper than ``MAX_DEPTH``.
    """


type _Token = tuple[str, str, str, str, str, str]


def _stop(token: _Token) -> NoReturn:
    """The reader cannot go on at ``token``: refused or left to ``ast``."""
    if token[4] in _CLOSERS:
        raise _Refused("not Python: a bracket does not match")
    raise _Unsure


def _text(token: str) -> str:
    body = token[1:-1]
    if "\\" in body:
        return _ESCAPE.sub(lambda m: _ESCAPES[m.group(1)], body)
    return body


def _prefixed(name: str, glued: _Token) -> str | bytes:
    """A string with a prefix (``u'x'``, ``b'x'``); any other name is refused."""
    if glued[0] or not (glued[1] or glued[5] in _QUOTES):
        raise _Refused("not a literal: a name")
    prefix = name.lower()
    text = glued[1]
    if text and "\\" not in text:
        if prefix in _TEXT_PREFIXES:
            return text[1:-1]
        if prefix in _BYTES_PREFIXES and text.isascii():
            return text[1:-1].encode()
    if prefix in _FORMAT_PREFIXES:
        raise _Refused("not a literal: a formatted string")
    if prefix in _TEXT_PREFIXES or prefix in _BYTES_PREFIXES:
        raise _Unsure
    raise _Refused("not Python: a name before a string")


def _plain_value(tokens: list[_Token], i: int, depth: int) -> tuple[Any, int]:
    """The value at ``tokens[i]``, nested ``depth`` deep, as ``_literal`` counts
    (a sign is one more level there)."""
    _, text, number, name, punct, _ = tokens[i]
    if depth > MAX_DEPTH or (depth == MAX_DEPTH and number[:1] == "-"):
        raise _Refused(f"nested deeper than {MAX_DEPTH} levels")
    if text:
        return _text(text), i + 1
    if number:
        if number.isdigit() or (number[0] == "-" and number[1:].isdigit()):
            return int(number), i + 1
        return float(number), i + 1
    if name:
        if name in _NAMED:
            return _NAMED[name], i + 1
        return _prefixed(name, tokens[i + 1]), i + 2
    if punct == "[":
        items = []
        i += 1
        while tokens[i][4] != "]":
            item, i = _plain_value(tokens, i, depth + 1)
            items.append(item)
            if tokens[i][4] == ",":
                i += 1
            elif tokens[i][4] != "]":
                _stop(tokens[i])
        return items, i + 1
    if punct == "{":
        result: dict[str, Any] = {}
        i += 1
        while tokens[i][4] != "}":
            key = tokens[i][1]
            if not key or tokens[i + 1][4] != ":":
                raise _Unsure
            result[_text(key)], i = _plain_value(tokens, i + 2, depth + 1)
            if tokens[i][4] == ",":
                i += 1
            elif tokens[i][4] != "}":
                _stop(tokens[i])
        return result, i + 1
    _stop(tokens[i])


def _plain_call(
    tokens: list[_Token], i: int
) -> tuple[tuple[str, dict[str, Any], list[Any]], int]:
    name = tokens[i][3]
    opening = tokens[i + 1]
    if not name:
        _stop(tokens[i])
    if opening[4] != "(" or opening[0]:
        raise _Unsure
    if not _RESERVED.isdisjoint(name.split(".")):
        raise _Unsure
    i += 2
    kwargs: dict[str, Any] = {}
    positional: list[Any] = []
    while tokens[i][4] != ")":
        key = tokens[i][3]
        if key and tokens[i + 1][4] == "=":
            if key in kwargs or key in _RESERVED or "." in key:
                raise _Unsure
            kwargs[key], i = _plain_value(tokens, i + 2, 0)
        elif kwargs:
            raise _Unsure  # positional after keyword: a SyntaxError for ``ast``
        else:
            value, i = _plain_value(tokens, i, 0)
            positional.append(value)
        if tokens[i][4] == ",":
            i += 1
        elif tokens[i][4] != ")":
            _stop(tokens[i])
    if name.endswith(".call"):
        name = name[: -len(".call")]
    return (name, kwargs, positional), i + 1


def _flat_calls(source: str) -> list[tuple[str, dict[str, Any], list[Any]]] | None:
    """``_plain_calls`` for the flattest shape, in two regular-expression passes
    (no token list); None for any other shape or anything the token reader
    would leave to ``ast`` (a reserved name, a repeated keyword)."""
    if _FLAT.fullmatch(source) is None:
        return None
    calls: list[tuple[str, dict[str, Any], list[Any]]] = []
    kwargs: dict[str, Any] = {}
    for name, key, text, number, named in _FLAT_PIECES.findall(source):
        if name:
            if not _RESERVED.isdisjoint(name.split(".")):
                return None
            kwargs = {}
            calls.append((name.removesuffix(".call"), kwargs, []))
        elif key in kwargs or key in _RESERVED:
            return None
        elif text:
            kwargs[key] = text[1:-1]
        elif number:
            kwargs[key] = int(number) if number.lstrip("-").isdigit() else float(number)
        else:
            kwargs[key] = _NAMED[named]
    return calls


def _plain_calls(source: str) -> list[tuple[str, dict[str, Any], list[Any]]] | None:
    """The calls of a plain-shaped ``source`` exactly as ``ast`` reads them, or
    None when the shape is not the plain one (then ``ast`` decides). Raises
    ``_Refused`` for text ``ast`` refuses too.
    """
    if len(source) > _PLAIN_MAX:
        return None
    flat = _flat_calls(source)
    return flat if flat is not None else _token_calls(source)


def _token_calls(source: str) -> list[tuple[str, dict[str, Any], list[Any]]] | None:
    """``_plain_calls`` by the token list: every plain shape."""
    tokens: list[_Token] = _TOKENS.findall(source)
    last = len(tokens)
    tokens += (_END, _END)  # every look-ahead lands on a token that fits nowhere
    calls: list[tuple[str, dict[str, Any], list[Any]]] = []
    i = 0
    try:
        while i < last:
            if i and not _STATEMENT_BREAK.fullmatch(tokens[i][0]):
                return None  # statements are whole lines
            if tokens[i][4] != "[":
                call, i = _plain_call(tokens, i)
                calls.append(call)
                continue
            i += 1
            while tokens[i][4] != "]":
                call, i = _plain_call(tokens, i)
                calls.append(call)
                if tokens[i][4] == ",":
                    i += 1
                elif tokens[i][4] != "]":
                    _stop(tokens[i])
            i += 1
    except _Unsure:
        return None
    return calls


def _literal(node: ast.AST, depth: int = 0) -> Any:
    """The value of a literal node, as deep as JSON arguments may nest."""
    if depth > MAX_DEPTH:
        raise PyCallError(f"nested deeper than {MAX_DEPTH} levels")
    depth += 1
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, int) and not int_fits(value):
            raise PyCallError("a number has too many digits")
        return value
    if isinstance(node, ast.Name) and node.id in _NAMED:
        return _NAMED[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand, depth)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
        raise PyCallError("sign on a non-number")
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(item, depth) for item in node.elts]
    if isinstance(node, ast.Dict):
        result = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:
                raise PyCallError("** in a dict")
            result[str(_literal(key, depth))] = _literal(item, depth)
        return result
    raise PyCallError(f"not a literal: {type(node).__name__}")


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` as text; a loop, since the chain may be thousands of links long."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise PyCallError("call target is not a name")
    parts.append(node.id)
    return ".".join(reversed(parts))


def _call(node: ast.AST) -> tuple[str, dict[str, Any], list[Any]]:
    # print(default_api.fn(...)) is how Gemma writes tool_code.
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "print"
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], ast.Call)
    ):
        node = node.args[0]
    if not isinstance(node, ast.Call):
        raise PyCallError("not a call")
    name = _dotted(node.func)
    if name.endswith(".call"):
        name = name[: -len(".call")]
    kwargs: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise PyCallError("**kwargs in a call")
        kwargs[keyword.arg] = _literal(keyword.value)
    return name, kwargs, [_literal(arg) for arg in node.args]


def parse_python_calls(source: str) -> list[tuple[str, dict[str, Any], list[Any]]]:
    """``[(name, kwargs, positional), ...]`` from a call, a list/tuple of calls,
    or several calls on separate lines/``;``. Raises ``PyCallError``.
    """
    source = source.strip()
    if not source or len(source) > 100_000:
        raise PyCallError("empty or oversized")
    try:
        plain = _plain_calls(source)
    except _Refused as err:
        raise PyCallError(str(err)) from None
    return plain if plain is not None else _ast_calls(source)


def _ast_calls(source: str) -> list[tuple[str, dict[str, Any], list[Any]]]:
    try:
        tree = ast.parse(source, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        raise PyCallError(f"not Python: {err}") from None
    calls: list[tuple[str, dict[str, Any], list[Any]]] = []
    for stmt in tree.body:
        if not isinstance(stmt, ast.Expr):
            raise PyCallError("not an expression")
        value = stmt.value
        if isinstance(value, (ast.List, ast.Tuple)):
            calls.extend(_call(item) for item in value.elts)
        else:
            calls.append(_call(value))
    return calls
