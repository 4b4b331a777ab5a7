"""Readable text from a fetched body: trafilatura for HTML, decoding for the rest.

trafilatura finds the main content of a page (drops menus, footers, cookie banners),
which keeps the model's context small. These functions are CPU-bound and blocking:
call them through an executor, never on the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import charset_normalizer
import trafilatura


@dataclass(frozen=True, slots=True)
class Extracted:
    """Text a model can read, plus the page title when there is one."""

    title: str | None
    text: str


def extract_html(body: bytes, url: str | None = None) -> Extracted:
    """Main content of an HTML page; falls back to all visible text for tiny pages."""
    doc = trafilatura.bare_extraction(
        body,
        url=url,
        with_metadata=True,
        include_comments=False,
        include_tables=True,
        favor_recall=True,
        date_extraction_params={"extensive_search": False},
    )
    title = (doc.title or None) if doc is not None else None
    text = (doc.text or "") if doc is not None else ""
    if not text.strip():
        text = trafilatura.html2txt(body)
    return Extracted(title=title, text=text.strip())


def decode_text(body: bytes, charset: str | None) -> str:
    """Decode a non-HTML text body: declared charset, else UTF-8, else a guess."""
    if charset:
        try:
            return body.decode(charset, errors="replace")
        except LookupError:
            pass
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        best = charset_normalizer.from_bytes(body).best()
        return str(best) if best is not None else body.decode("utf-8", "replace")


def truncate_text(text: str, max_chars: int) -> tuple[str, bool]:
    """Cut text to max_chars at a paragraph or sentence end when one is near.

    Returns the text and whether anything was cut; the note tells the model how much
    it did not see, so it does not mistake a cut page for the whole page.
    """
    if len(text) <= max_chars:
        return text, False
    window = text[:max_chars]
    floor = int(max_chars * 0.8)
    cut = max(window.rfind("\n", floor), window.rfind(". ", floor) + 1)
    if cut <= floor:
        cut = max_chars
    kept = window[:cut].rstrip()
    return f"{kept}\n[… cut: {len(text) - len(kept)} more characters not shown]", True
