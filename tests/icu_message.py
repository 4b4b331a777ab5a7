"""How HA's frontend reads a translated string: ICU MessageFormat, as intl-messageformat parses it.

HA's frontend formats every translation with ``new IntlMessageFormat(text,
language)`` (tags not ignored). A string it cannot parse is shown as
"Translation error: <KIND>" in place of the label. This module follows the
rules of intl-messageformat's parser (@formatjs/icu-messageformat-parser) for
the part of the syntax a translation of ours may use, and refuses the rest:

- ``{name}`` is an argument; a ``{`` that does not open one (``{"name", …}``,
  ``{}``, an unclosed brace) is a MALFORMED_ARGUMENT or an unclosed argument.
  Typed arguments (``{n, number}``, plural, select) are refused: we use none.
- ``<`` followed by a letter or ``/`` opens a tag, which must be closed; HA's
  own strings hold no HTML (hassfest's ``string_with_no_html``), so any tag is
  refused here, closed or not. ``<`` before anything else is plain text.
- An apostrophe quotes only before ``{``, ``}``, ``<``, ``>`` (and ``'``): ``'<'``
  is a literal ``<``, ``''`` a literal apostrophe; anywhere else it is text.
- A ``}`` outside an argument is plain text.

``parse`` returns the text a user sees (arguments filled with ``{name}``
markers as given) and the argument names, or raises ``IcuSyntaxError``.
"""

from __future__ import annotations

from dataclasses import dataclass

QUOTABLE = "{}<>"


class IcuSyntaxError(ValueError):
    """The frontend would show "Translation error: <kind>" for this string."""

    def __init__(self, kind: str, text: str, offset: int) -> None:
        """Name the error as intl-messageformat does, with where it is."""
        super().__init__(
            f"{kind} at {offset}: {text[max(0, offset - 15) : offset + 15]!r}"
        )
        self.kind = kind


@dataclass(frozen=True)
class Message:
    """What a parsed string shows, and which arguments it needs."""

    rendered: str
    arguments: tuple[str, ...]


def _is_pattern_syntax_or_space(char: str) -> bool:
    """The characters an argument name may not contain (ICU Pattern_Syntax, spaces)."""
    return char.isspace() or (char.isascii() and not char.isalnum() and char != "_")


def parse(text: str) -> Message:
    """Read ``text`` as the frontend does; raise IcuSyntaxError where it would."""
    out: list[str] = []
    arguments: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if char == "'" and nxt == "'":
            out.append("'")
            i += 2
        elif char == "'" and nxt in QUOTABLE:
            # Quoted text runs to the next lone apostrophe (or the end).
            i += 1
            while i < n:
                if text[i] == "'":
                    if text[i + 1 : i + 2] == "'":
                        out.append("'")
                        i += 2
                        continue
                    i += 1
                    break
                out.append(text[i])
                i += 1
        elif char == "{":
            end = i + 1
            while end < n and text[end].isspace():
                end += 1
            start = end
            while end < n and not _is_pattern_syntax_or_space(text[end]):
                end += 1
            name = text[start:end]
            while end < n and text[end].isspace():
                end += 1
            if end >= n:
                raise IcuSyntaxError("EXPECT_ARGUMENT_CLOSING_BRACE", text, i)
            if not name:
                raise IcuSyntaxError(
                    "EMPTY_ARGUMENT" if text[end] == "}" else "MALFORMED_ARGUMENT",
                    text,
                    i,
                )
            if text[end] == ",":
                raise IcuSyntaxError("TYPED_ARGUMENT_NOT_USED_HERE", text, i)
            if text[end] != "}":
                raise IcuSyntaxError("MALFORMED_ARGUMENT", text, i)
            arguments.append(name)
            out.append("{" + name + "}")
            i = end + 1
        elif char == "<" and (nxt == "/" or (nxt.isascii() and nxt.isalpha())):
            # intl-messageformat would parse a tag here (UNCLOSED_TAG,
            # INVALID_TAG or UNMATCHED_CLOSING_TAG unless it is well formed);
            # HA's strings carry no HTML either way.
            raise IcuSyntaxError("TAG", text, i)
        else:
            out.append(char)
            i += 1
    return Message("".join(out), tuple(arguments))
