"""One reply's shared scans, done once while a chain's members read it.

Several members of a chain look for the same things in one reply: the JSON
call objects at its start or in its prose, its fenced blocks, its reasoning
spans. ``ChainDialect.parse`` opens a scope for the reply
(``start_reply_scope``); inside it a
``memoized`` scan runs once per distinct set of arguments and later members
get a copy of its answer. Outside a scope (one dialect reading a reply) the
scans run as they are. Nothing is kept after the reply: a call read here
never carries its id into another reply's result.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
import functools
from typing import Any

__all__ = ["end_reply_scope", "memoized", "start_reply_scope"]

_SCOPE: ContextVar[dict[Any, Any] | None] = ContextVar("toolcalls_memo", default=None)
_MISS = object()


def start_reply_scope() -> Token[dict[Any, Any] | None] | None:
    """Share memoized scans until ``end_reply_scope`` (nested: a no-op)."""
    return _SCOPE.set({}) if _SCOPE.get() is None else None


def end_reply_scope(token: Token[dict[Any, Any] | None] | None) -> None:
    """Close what ``start_reply_scope`` opened; its answers are dropped."""
    if token is not None:
        _SCOPE.reset(token)


def memoized[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """``func`` answered once per argument set inside a reply scope.

    ``func`` must depend on its arguments only; callers that mean the same
    call pass the same arguments (a keyword given at its default is another
    key). A list answer is copied, so a caller may extend its own without
    touching the next caller's.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        scope = _SCOPE.get()
        if scope is None:
            return func(*args, **kwargs)
        key = (func, args, *kwargs.items()) if kwargs else (func, args)
        hit = scope.get(key, _MISS)
        if hit is _MISS:
            hit = scope[key] = func(*args, **kwargs)
        return list(hit) if isinstance(hit, list) else hit  # type: ignore[return-value]

    return wrapper
