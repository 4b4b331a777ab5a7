"""One reply's shared scans, done once while a chain's members read it.

Several members of a chain look for the same things in one reply: the JSON
call objects at its start or in its prose, its fenced blocks, its reasoning
spans. While ``ChainDialect`` tries its members, the open ``Reply`` holds a
memo (``reply.memo``); inside it a ``memoized`` scan runs once per distinct
set of arguments and later members get a copy of its answer. Outside it (one
dialect reading a reply) the scans run as they are. Nothing is kept after the
reply: a call read here never carries its id into another reply's result.
"""

from __future__ import annotations

from collections.abc import Callable
import functools

from .reply import current_reply

__all__ = ["memoized", "once_per_reply"]

_MISS = object()


def memoized[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """``func`` answered once per argument set while a chain shares a memo.

    ``func`` must depend on its arguments only; callers that mean the same
    call pass the same arguments (a keyword given at its default is another
    key). A list answer is copied, so a caller may extend its own without
    touching the next caller's.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        reply = current_reply()
        scope = None if reply is None else reply.memo
        if scope is None:
            return func(*args, **kwargs)
        key = (func, args, *kwargs.items()) if kwargs else (func, args)
        hit = scope.get(key, _MISS)
        if hit is _MISS:
            hit = scope[key] = func(*args, **kwargs)
        return list(hit) if isinstance(hit, list) else hit  # type: ignore[return-value]

    return wrapper


def once_per_reply[**P, R](func: Callable[P, R]) -> Callable[P, R]:
    """``func`` answered once per argument set for the whole open reply
    (``reply.kept``), whoever asks and whether or not a chain is probing;
    outside any reply it runs as it is.

    For what a reply reads or cleans more than once (a JSON value, a content
    built twice). Nothing is kept past the reply: an answer that depends on
    the reply (its json5 budget) is never given to another, and a figure taken
    over one corpus fed many times over is the figure of new replies.
    ``func`` takes positional arguments only; its answer is shared, not copied.
    """

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        reply = current_reply()
        if reply is None:
            return func(*args, **kwargs)
        key = (func, args)
        kept = reply.kept
        hit = kept.get(key, _MISS)
        if hit is _MISS:
            hit = kept[key] = func(*args, **kwargs)
        return hit

    return wrapper
