"""Python-call syntax (``fn(a=1, b='x')``, ``[f(), g()]``) read safely with ``ast``.

Used by pythonic, tool_code, Llama built-ins (``brave_search.call(...)``) and
the plain ``name(args)`` fallback. Nothing is evaluated: only literals are
accepted, plus JSON's ``true/false/null`` spellings.
"""

from __future__ import annotations

import ast
from typing import Any

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
