"""Numbered sources collected during one turn, so the answer can cite [1].

Search results and fetched pages are numbered in the order they arrive; the same URL
keeps its number for the whole turn, so a page found by search and then fetched is
cited once.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class Reference:
    """One citable source."""

    number: int
    title: str
    url: str
    snippet: str = ""
    date: str | None = None
    source: str = ""
    """The tool that produced it: 'search' or 'web_fetch'."""


class References:
    """The turn's numbered sources."""

    def __init__(self) -> None:
        self._by_url: dict[str, Reference] = {}

    def add(
        self,
        title: str,
        url: str,
        snippet: str = "",
        date: str | None = None,
        source: str = "",
    ) -> Reference:
        """Number a new source, or return the number its URL already has."""
        key = url.rstrip("/")
        if (known := self._by_url.get(key)) is not None:
            return known
        ref = Reference(
            number=len(self._by_url) + 1,
            title=title or url,
            url=url,
            snippet=snippet,
            date=date,
            source=source,
        )
        self._by_url[key] = ref
        return ref

    def items(self) -> list[Reference]:
        """All sources in number order."""
        return list(self._by_url.values())

    def as_dicts(self) -> list[dict[str, object]]:
        """Plain data for diagnostics and the chat log."""
        return [asdict(ref) for ref in self._by_url.values()]

    def __len__(self) -> int:
        """How many sources this turn has."""
        return len(self._by_url)


def format_reference(ref: Reference) -> str:
    """'[n] Title (date)' + URL + snippet, the block the model reads and cites."""
    date = f" ({ref.date})" if ref.date else ""
    lines = [f"[{ref.number}] {ref.title}{date}", f"    {ref.url}"]
    if ref.snippet:
        lines.append(f"    {ref.snippet}")
    return "\n".join(lines)


CITE_HINT = "Cite sources as [n] in your answer."
