"""Which of a fixed set of strings occur in a text, found in one pass.

A chain asks of every reply which of some sixty trigger strings it holds.
Asking ``trigger in text`` sixty times scans the reply sixty times; a regex
built as a trie of the strings (one branch per first character, then per next
character) finds them in one C-level scan that only stops where a string may
start. Strings of one character are looked up with ``in`` (memchr).
"""

from __future__ import annotations

from collections.abc import Iterable
import functools
import re

__all__ = ["Literals", "literals"]

# More matches than this in one text is a text made of trigger strings (a
# hostile one): the rest is answered with ``in``, one scan per string.
_MAX_MATCHES = 256


def _trie_pattern(words: Iterable[str]) -> str:
    """A regex matching the longest of ``words`` that starts at a position."""
    trie: dict[str, dict] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, dict]) -> str:
        branches = [
            re.escape(char) + build(child) for char, child in node.items() if char
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        # Greedy: a longer word is tried before the one that ends here.
        return f"(?:{body})?" if "" in node else body

    return build(trie)


class Literals:
    """A set of strings, and which of them occur in a text (as a bit mask)."""

    __slots__ = ("_bit", "_pattern", "_prefixes", "_single", "words")

    def __init__(self, words: Iterable[str]) -> None:
        self.words: tuple[str, ...] = tuple(dict.fromkeys(w for w in words if w))
        self._bit = {word: 1 << index for index, word in enumerate(self.words)}
        self._single = tuple(
            (word, self._bit[word]) for word in self.words if len(word) == 1
        )
        longer = [word for word in self.words if len(word) > 1]
        self._pattern = re.compile(_trie_pattern(longer)) if longer else None
        # A match is the longest word starting there: the words it starts with
        # occur there too.
        self._prefixes = {
            word: sum(self._bit.get(word[:end], 0) for end in range(2, len(word) + 1))
            for word in longer
        }

    def bits(self, words: Iterable[str]) -> int:
        """The mask of ``words`` (all of them in this set)."""
        return sum(self._bit[word] for word in dict.fromkeys(words))

    def mask(self, text: str) -> int:
        """Bit ``i`` is set when ``words[i]`` occurs in ``text``."""
        found = 0
        for word, bit in self._single:
            if word in text:
                found |= bit
        if self._pattern is None:
            return found
        search = self._pattern.search
        prefixes = self._prefixes
        pos = 0
        for _ in range(_MAX_MATCHES):
            match = search(text, pos)
            if match is None:
                return found
            found |= prefixes[match.group()]
            pos = match.start() + 1
        for word, bit in self._bit.items():  # a hostile text: one scan each
            if not found & bit and word in text:
                found |= bit
        return found

    def any_in(self, text: str) -> bool:
        """Whether any of the strings occurs in ``text``."""
        if any(word in text for word, _ in self._single):
            return True
        return self._pattern is not None and self._pattern.search(text) is not None


@functools.lru_cache(maxsize=32)
def _literals(words: tuple[str, ...]) -> Literals:
    return Literals(words)


def literals(words: Iterable[str]) -> Literals:
    """The ``Literals`` of these words, built once per set of words."""
    return _literals(tuple(sorted(set(words))))
