"""Other names for a catalog's tools, declared by whoever builds the catalog.

Prompts, fine-tunes and small models call tools by names they were never
offered: ``memorize`` for a ``memory`` tool's store action, ``web_search`` for
a ``search`` tool. The host says which names mean which of its tools, and which
arguments a name implies (an ``Alias``); the parser itself names no tool.
``Catalog.resolve`` maps such a name to the first name of the same meaning
that the catalog offers (a memory server's own ``search_memory`` before the
aliased tool, whose own name comes last); ``Catalog.implied_arguments`` then
adds what the name implies when it reached the aliased tool itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["NO_ALIASES", "Alias", "Aliases", "fold"]

_FOLD_TABLE = str.maketrans("", "", " \t\r\n_-.")


def fold(name: str) -> str:
    """Case- and separator-insensitive key: ``Search-Memory`` -> ``searchmemory``."""
    return name.lower().translate(_FOLD_TABLE)


@dataclass(frozen=True, slots=True)
class Alias:
    """Names that mean ``tool`` called with ``arguments``.

    ``Alias("memory", ("memorize", "remember"), {"action": "store"})``: a call
    to ``memorize`` is a call to ``memory`` that stores.
    """

    tool: str
    names: tuple[str, ...]
    arguments: Mapping[str, str] = field(default_factory=dict)

    @property
    def meaning(self) -> tuple[str, frozenset[tuple[str, str]]]:
        """The tool and arguments: aliases of one meaning are one group."""
        return self.tool, frozenset(self.arguments.items())


class Aliases:
    """A host's other names for its tools, looked up case- and separator-folded."""

    def __init__(self, aliases: Iterable[Alias] = ()) -> None:
        """Merge aliases of one meaning, names in the order given."""
        groups: dict[tuple[str, frozenset[tuple[str, str]]], Alias] = {}
        for alias in aliases:
            known = groups.get(alias.meaning)
            names = (*known.names, *alias.names) if known else alias.names
            groups[alias.meaning] = Alias(alias.tool, names, dict(alias.arguments))
        self._targets = {
            fold(name): group for group in groups.values() for name in group.names
        }
        # A tool's own name means the tool (a catalog without ``web_fetch`` may
        # offer ``fetch_url``), with the names of the same meaning.
        for tool, _ in groups:
            bare = groups.get((tool, frozenset())) or Alias(tool, ())
            self._targets.setdefault(fold(tool), bare)

    def _target(self, name: str) -> Alias | None:
        """The meaning of a name, after any ``ns__`` prefix; or None."""
        return self._targets.get(fold(name.strip().rsplit("__", 1)[-1]))

    def same_meaning(self, name: str) -> tuple[str, ...]:
        """Names that mean what ``name`` means, the aliased tool's own last; ()."""
        target = self._target(name)
        return () if target is None else (*target.names, target.tool)

    def implied_arguments(self, called: str, resolved: str) -> dict[str, str]:
        """What the name ``called`` implies, when it resolved to the aliased tool."""
        target = self._target(called)
        if target is None or resolved.rsplit("__", 1)[-1] != target.tool:
            return {}
        return dict(target.arguments)


NO_ALIASES = Aliases()
