"""MeetKai Functionary v3.1 and v3.2.

* v3.1 (Llama 3.1 based): ``<function=fn>{json}</function>``, anywhere in the
  text; ``<|python_tag|>code`` calls a ``python`` tool when one is exposed.
* v3.2: recipient blocks ``>>>fn\\n{json}`` and ``>>>all\\ntext`` (text for the
  user). The prompt ends with ``>>>``, so the first block comes without it:
  ``fn\\n{json}`` or ``all\\ntext``. A first line only counts as a recipient
  when it is ``all`` or a catalog tool followed by a JSON object.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..model import RejectedCall, ToolCall
from ..prompting.render import compact_catalog
from ..reading.calls import (
    Found,
    build_result,
    make_call,
    reply_start,
)
from ..reading.jsonrepair import (
    LooseJSONError,
    TruncatedJSONError,
    find_json_end,
    loads_loose,
)
from ..reading.markup import (
    Finder,
    prefer_outside_reasoning,
    too_many,
)
from ..reading.scan import MAX_BLOCKS, skip_ws
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult

__all__ = ["FunctionaryDialect"]

_V31 = re.compile(r"<function=([A-Za-z_][\w.\-]*)>")
_RECIPIENT = re.compile(r"[A-Za-z_][\w.\-]*")
# Functionary v1/v2 as llama-cpp-python prompts them (the prompt ends with the
# role word "assistant", so the reply is " to=functions.NAME:", or the whole
# role line when a model repeats it), and its chatml-function-calling
# ("functions.NAME:" at the start of a line, or right after the previous
# call's arguments, as its template joins them): a header naming the tool,
# then the JSON arguments.
_TO_HEADER = re.compile(
    r"(?:^|(?<=\}))[ \t]*(?:(?:(?:<\|im_start\|>)?assistant[ \t]+)?to=)?"
    r"functions\.([A-Za-z_][\w.\-]*)[ \t]*:",
    re.M | re.I,
)
# "all" blocks (text for the user): the header goes, the text stays.
_ALL_HEADER = re.compile(r"\A\s*(?:>>>)?all\n|>>>all\n")
_PYTHON_TOOLS = ("python", "ipython", "code_interpreter")
# What a call with a marker holds: a v3.1 tag, a v3.2 recipient header, a
# python tag or a v1/v2 header.
_MARKS = ("<function=", ">>>", "<|python_tag|>", "functions.")


def _json_call(
    catalog: Catalog, name: str, body: str, raw: str
) -> ToolCall | RejectedCall | None:
    """A call whose arguments are the JSON object in ``body``; None if not JSON."""
    stripped = body.strip()
    if not stripped:
        return make_call(catalog, name, {}, raw=raw)
    if stripped[0] != "{":
        return None
    try:
        args = loads_loose(stripped)
    except TruncatedJSONError:
        return RejectedCall(name=name, raw=raw, reason="arguments are truncated")
    except LooseJSONError:
        return None
    if not isinstance(args, dict):
        return None
    return make_call(catalog, name, args, raw=raw)


def _to_headers(text: str, catalog: Catalog) -> list[Found]:
    """``[assistant to=]functions.NAME:`` followed by a JSON arguments object."""
    found: list[Found] = []
    for match in _TO_HEADER.finditer(text):
        if len(found) >= MAX_BLOCKS:
            break
        start = skip_ws(text, match.end())
        if start >= len(text) or text[start] != "{":
            continue
        end = find_json_end(text, start)
        end = len(text) if end < 0 else end
        raw = text[match.start() : end]
        call = _json_call(catalog, match.group(1), text[start:end], raw)
        if call is not None:
            found.append(Found(match.start(), end, call))
    return found


class FunctionaryDialect(Dialect):
    """Functionary ``<function=…>`` (v3.1) and ``>>>recipient`` (v3.2) calls."""

    name = "functionary"
    markers = ("<function=", ">>>", "to=functions.")
    # The role line of a recipient header is held from its first word, at the
    # start of the reply or of any line, so "assistant" is never spoken.
    start_markers = (
        ">>>",
        "all\n",
        "assistant to=functions.",
        "Assistant to=functions.",
        "ASSISTANT to=functions.",
        "functions.",
    )
    # Its markers, or a newline: an unmarked call is a first line naming the
    # recipient (``may_match``).
    triggers = (*_MARKS, "\n")
    cleans = ("</function>", "all\n")

    @override
    def may_match(self, text: str) -> bool:
        """A marker, or a reply whose first line names a recipient (``NAME\\n{…}``)."""
        if any(map(text.__contains__, _MARKS)):  # one C-level loop
            return True
        start = reply_start(text)
        newline = text.find("\n", start)
        return (
            newline >= 0
            and _RECIPIENT.fullmatch(text[start:newline].strip()) is not None
        )

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            f"You can call these functions:\n{compact_catalog(catalog)}\n\n"
            "To call a function, write it as "
            '<function=function_name>{"arg": "value"}</function> and nothing else. '
            "If no function is needed, answer normally."
        )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found = self._v31(text, catalog)
        if "functions." in text:
            found += _to_headers(text, catalog)
        if not any(isinstance(f.call, ToolCall) for f in found):
            found += self._v32(text, catalog)
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    def _v31(self, text: str, catalog: Catalog) -> list[Found]:
        found: list[Found] = []
        if "<function=" in text:
            finder = Finder(text)
            matches = list(_V31.finditer(text))
            for index, match in enumerate(matches):
                if too_many(found, text, match.start()):
                    break
                limit = (
                    matches[index + 1].start()
                    if index + 1 < len(matches)
                    else len(text)
                )
                start = skip_ws(text, match.end())
                close = finder.find("</function>", start, limit)
                stop = close if close >= 0 else limit
                end = close + len("</function>") if close >= 0 else limit
                call = _json_call(
                    catalog, match.group(1), text[start:stop], text[match.start() : end]
                )
                if call is not None:
                    found.append(Found(match.start(), end, call))
        tag = text.find("<|python_tag|>")
        if tag >= 0:
            tool = next((t for t in _PYTHON_TOOLS if t in catalog), None)
            code = text[tag + len("<|python_tag|>") :].strip()
            if tool and code and not code.startswith("{"):
                found.append(
                    Found(
                        tag,
                        len(text),
                        make_call(catalog, tool, {"code": code}, raw=code),
                    )
                )
        return found

    def _v32(self, text: str, catalog: Catalog) -> list[Found]:
        """Recipient blocks; ``all`` blocks stay as content minus their header."""
        found: list[Found] = []
        start = reply_start(text)
        heads = [m.start() for m in re.finditer(">>>", text)]
        if not heads and "\n" not in text[start:]:
            return found
        bounds: list[tuple[int, int]] = []  # (header start, recipient start)
        implicit = not text.startswith(">>>", start)
        if implicit:
            bounds.append((start, start))
        bounds += [(h, h + 3) for h in heads]
        for index, (head, rec_start) in enumerate(bounds):
            if too_many(found, text, head):
                break
            block_end = bounds[index + 1][0] if index + 1 < len(bounds) else len(text)
            newline = text.find("\n", rec_start, block_end)
            if newline < 0:
                continue
            recipient = text[rec_start:newline].strip()
            if not _RECIPIENT.fullmatch(recipient):
                continue
            body = text[newline + 1 : block_end]
            if recipient == "all":
                found.append(Found(head, newline + 1, None))
                continue
            resolved = catalog.resolve(recipient)
            if resolved in _PYTHON_TOOLS and not body.lstrip().startswith("{"):
                code = make_call(catalog, resolved, {"code": body.strip()}, raw=body)
                found.append(Found(head, block_end, code))
                continue
            call = _json_call(catalog, recipient, body, text[head:block_end])
            if call is None:
                continue
            if head == rec_start and resolved is None:
                # An implicit first block must name a real tool: "Sure\n{...}" is prose.
                continue
            found.append(Found(head, block_end, call))
        if not any(isinstance(f.call, (ToolCall, RejectedCall)) for f in found):
            # Only "all" blocks: plain text with its headers removed.
            return found if heads or (implicit and found) else []
        return found

    @override
    def sanitize(self, text: str) -> str:
        text = text.replace("</function>", "")
        if "all\n" in text:
            text = _ALL_HEADER.sub("", text)
        return text
