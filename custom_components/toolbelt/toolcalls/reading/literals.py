"""Which of a fixed set of strings occur in a text, found with few scans.

A chain asks of every reply which of some sixty trigger strings it holds.
Asking ``trigger in text`` sixty times scans the reply sixty times, and one
regex of them all stops at every letter a string may start with (most of
English). So the strings are grouped by how they open: those opening with a
sign (``<``, ``[``, a backtick...) by that character, which ``in`` finds in one
``memchr`` (most replies hold no ``<``), and those opening with a letter by
their first four characters. Only a group whose opening is in the text is
looked at further: its few strings one by one, or a regex of its many (a trie:
one branch per next character) that jumps from one opening to the next.

An ``in`` of one character is a ``memchr``; an ``in`` of a longer string costs
several times as much (about 450 instructions on a reply of a hundred
characters, against 80). So a longer opening is first ruled out by its least
common character (``probe``: ``=`` for ``to=functions.``, ``F`` for
``Final Answer``), which most replies do not hold.
"""

from __future__ import annotations

from collections.abc import Iterable
import functools
import re

__all__ = ["Literals", "literals"]

# Strings opening with a letter or digit are grouped by this many characters.
_KEY = 4
# A group of more strings than this is looked at with one regex, not ``in`` each.
_MAX_IN = 5
# More matches than this in one text is a text made of the strings (a hostile
# one): the rest of a group that cannot use ``findall`` is answered with ``in``.
_MAX_MATCHES = 256


# Characters from the most to the least common in replies: lower-case letters
# by their frequency in English, then space, the signs of JSON (a reply with a
# call is mostly JSON), digits, capitals, other signs.
_BY_FREQUENCY = (
    'etaoinsrhldcumfpgwybvkxjqz \n":,{}_.0123456789'
    "TAISCWHMBDNFPLREGOUVYJKQXZ"
    "-()[]/'=?!<>|&~`*#@$%^+;\\"
)


def _commonness(char: str) -> int:
    """How common ``char`` is: higher for more common (unknown: rarest)."""
    index = _BY_FREQUENCY.find(char)
    return -len(_BY_FREQUENCY) if index < 0 else -index


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


def _straddles(words: list[str], opens: str) -> bool:
    """Whether a word may start inside another's match and end past it: a
    proper suffix of one (opening like the group) is a proper prefix of one.

    Without that, the words starting inside a match are inside it, and
    ``findall`` (which resumes after each match) misses none that matter.
    """
    return any(
        other.startswith(word[start:]) and len(other) > len(word) - start
        for word in words
        for start in range(1, len(word))
        if word.startswith(opens, start)
        for other in words
    )


class _Group:
    """Strings sharing an opening ``key``, and how to tell which occur."""

    __slots__ = ("bit", "findall", "implied", "key", "probe", "seek", "single")

    def __init__(self, key: str, words: list[str], bits: dict[str, int]) -> None:
        self.key = key
        # The key's least common character: found by ``memchr``, it rules the
        # key out cheaply (a longer ``in`` costs several times as much). A
        # one-character key is its own probe: "" (always in) asks it once.
        self.probe = min(key, key=_commonness) if len(key) > 1 else ""
        # The key's own bit when it is one of the strings.
        self.bit = bits.get(key, 0)
        longer = [word for word in words if word != key]
        # Looked up with ``in`` one by one: a group of few strings always, a
        # group of many only on a hostile text (past ``_MAX_MATCHES``).
        self.single = tuple((word, bits[word]) for word in longer)
        self.seek = self.findall = None
        self.implied: dict[str, int] = {}
        if len(longer) > _MAX_IN:
            pattern = re.compile(_trie_pattern(longer))
            self.seek = pattern.search
            if not _straddles(longer, key):
                self.findall = pattern.findall
            # A match is the longest string starting there: every string
            # inside it occurs too (the ones it starts with, and any later).
            self.implied = {
                word: sum(bit for other, bit in bits.items() if other in word)
                for word in longer
            }

    def mask(self, text: str) -> int:
        found = self.bit
        if self.findall is not None:
            implied = self.implied
            for word in set(self.findall(text)):
                found |= implied[word]
            return found
        if self.seek is None:
            for word, bit in self.single:
                if word in text:
                    found |= bit
            return found
        return found | self._mask_overlapping(text)

    def _mask_overlapping(self, text: str) -> int:
        """Every match, overlapping ones too (a string may start inside another)."""
        assert self.seek is not None
        found = 0
        pos = 0
        for _ in range(_MAX_MATCHES):
            match = self.seek(text, pos)
            if match is None:
                return found
            found |= self.implied[match.group()]
            pos = match.start() + 1
        for word, bit in self.single:  # a hostile text: one scan each
            if not found & bit and word in text:
                found |= bit
        return found

    def any_in(self, text: str) -> bool:
        if self.bit:
            return True
        if self.seek is not None:
            return self.seek(text) is not None
        return any(word in text for word, _ in self.single)


class Literals:
    """A set of strings, and which of them occur in a text (as a bit mask)."""

    __slots__ = ("_bit", "_groups", "words")

    def __init__(self, words: Iterable[str]) -> None:
        self.words: tuple[str, ...] = tuple(dict.fromkeys(w for w in words if w))
        self._bit = {word: 1 << index for index, word in enumerate(self.words)}
        grouped: dict[str, list[str]] = {}
        for word in self.words:
            key = word[:_KEY] if word[0].isalnum() else word[0]
            grouped.setdefault(key, []).append(word)
        # A string alone in its group is looked up whole.
        grouped = {
            group[0] if len(group) == 1 else key: group
            for key, group in grouped.items()
        }
        # One-character keys first: ``in`` finds those cheapest.
        self._groups = tuple(
            _Group(key, grouped[key], self._bit) for key in sorted(grouped, key=len)
        )

    def bits(self, words: Iterable[str]) -> int:
        """The mask of ``words`` (all of them in this set)."""
        return sum(self._bit[word] for word in dict.fromkeys(words))

    def mask(self, text: str) -> int:
        """Bit ``i`` is set when ``words[i]`` occurs in ``text``."""
        found = 0
        for group in self._groups:
            if group.probe in text and group.key in text:
                found |= group.mask(text)
        return found

    def any_in(self, text: str) -> bool:
        """Whether any of the strings occurs in ``text``."""
        # A loop, not ``any()``: no generator per call (several per reply).
        for group in self._groups:
            if group.probe in text and group.key in text and group.any_in(text):
                return True
        return False


@functools.lru_cache(maxsize=32)
def _literals(words: tuple[str, ...]) -> Literals:
    return Literals(words)


def literals(words: Iterable[str]) -> Literals:
    """The ``Literals`` of these words, built once per set of words."""
    return _literals(tuple(sorted(set(words))))
