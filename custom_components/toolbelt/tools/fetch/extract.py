"""Readable text from a fetched body: trafilatura for HTML, decoding for the rest.

trafilatura finds the main content of a page (drops menus, footers, cookie banners),
which keeps the model's context small. Its cost grows faster than the page: 2 MB
of short paragraphs took 23 s of CPU and 400 MB. So the work is bounded: lxml
parses the page once (linear, in C), the parts no reader sees are dropped, and
only a tree of at most ``MAX_EXTRACT_ELEMENTS`` elements goes to trafilatura.
A bigger page takes a cheap path: the visible text of its main part, which the
caller cuts to the model's budget anyway. These functions are CPU-bound and
blocking: call them through an executor, never on the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
import re

import charset_normalizer
from lxml import etree, html as lxml_html
import trafilatura

# trafilatura takes about 0.1 ms per element: ~0.3 s at this size.
MAX_EXTRACT_ELEMENTS = 3000
# Elements whose content nobody reads on the page.
_INVISIBLE = ("script", "style", "noscript", "template", "svg", "iframe", "object")
# Page furniture, dropped on the cheap path.
_FURNITURE = ("nav", "header", "footer", "aside", "form", "button", "select")
_BLOCKS = frozenset(
    {"p", "div", "section", "article", "main", "li", "tr", "br", "h1", "h2", "h3"}
    | {"h4", "h5", "h6", "pre", "blockquote", "dd", "dt", "table", "ul", "ol"}
)
_SPACES = re.compile(r"[ \t\r\f\v]+")
_BLANK_LINES = re.compile(r"\n\s*\n+")


@dataclass(frozen=True, slots=True)
class Extracted:
    """Text a model can read, plus the page title when there is one."""

    title: str | None
    text: str


def extract_html(
    body: bytes, url: str | None = None, max_chars: int | None = None
) -> Extracted:
    """Main content of an HTML page, with work bounded by the page's element count.

    ``max_chars``: on the cheap path, stop reading text well past this many
    characters (the caller cuts to it anyway).
    """
    try:
        root = lxml_html.fromstring(body)
    except (etree.ParserError, ValueError):
        return Extracted(title=None, text="")
    title = _title(root)
    if root.tag in _INVISIBLE:  # a bare <svg> or <iframe> body: nothing to read
        return Extracted(title=title, text="")
    for element in list(root.iter(*_INVISIBLE)):
        element.drop_tree()
    if _count(root) <= MAX_EXTRACT_ELEMENTS:
        doc = trafilatura.bare_extraction(
            root,
            url=url,
            with_metadata=True,
            include_comments=False,
            include_tables=True,
            favor_recall=True,
            date_extraction_params={"extensive_search": False},
        )
        text = (doc.text or "") if doc is not None else ""
        if doc is not None and doc.title:
            title = doc.title
        if text.strip():
            return Extracted(title=title, text=text.strip())
    budget = None if max_chars is None else max_chars * 2
    return Extracted(title=title, text=_visible_text(_main_part(root), budget))


def _title(root: lxml_html.HtmlElement) -> str | None:
    found = root.find(".//title")
    text = found.text_content().strip() if found is not None else ""
    return text or None


def _count(root: lxml_html.HtmlElement, limit: int = MAX_EXTRACT_ELEMENTS) -> int:
    """Elements in the tree, counting stops just past ``limit``."""
    count = 0
    for count, _element in enumerate(root.iter(), start=1):
        if count > limit:
            break
    return count


def _main_part(root: lxml_html.HtmlElement) -> lxml_html.HtmlElement:
    """<main> or the largest <article>, else the body without its furniture."""
    candidates = root.findall(".//main") or root.findall(".//article")
    if candidates:
        return max(candidates, key=lambda el: len(el.text_content()))
    for element in list(root.iter(*_FURNITURE)):
        if element.getparent() is not None:
            element.drop_tree()
    body = root.find(".//body")
    return body if body is not None else root


def _visible_text(element: lxml_html.HtmlElement, budget: int | None = None) -> str:
    """The text as a reader sees it: one line per block element, spaces collapsed.

    Reading stops once about ``budget`` characters are collected.
    """
    parts: list[str] = []
    size = 0
    for event, node in etree.iterwalk(element, events=("start", "end")):
        if budget is not None and size > budget:
            break
        if not isinstance(node.tag, str):
            continue
        if event == "start":
            if node.tag in _BLOCKS:
                parts.append("\n")
            if node.text:
                parts.append(node.text)
                size += len(node.text)
        else:
            if node.tag in _BLOCKS:
                parts.append("\n")
            if node.tail and node is not element:
                parts.append(node.tail)
                size += len(node.tail)
    text = _SPACES.sub(" ", "".join(parts))
    text = "\n".join(line.strip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()


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
