"""Qwen3-Coder / Qwen3.5 XML parameters, typed from the tool schema.

``<tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n</function>
\\n</tool_call>``. Values are raw text; the schema says what they are ("21"
becomes 21 for a number, "5123123" stays a string for a string).
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, override

from ..catalog import Catalog
from ..model import ParseResult, RejectedCall
from ..prompting.render import compact_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.markup import Finder, too_many
from ..reading.scan import skip_ws
from ..reading.schema import coerce_text_value
from .base import Dialect

__all__ = ["Qwen3CoderXmlDialect"]

# A name may hold "<" here: ``<function=NAME<parameter=...>`` is markup the
# model broke, refused (unknown tool), never spoken. A run of openers costs
# 200 characters each (linear: 130 ms a megabyte, past the reply bound).
_FUNCTION = re.compile(r"<function=([^>\n]{1,200})>")
_PARAM = re.compile(r"<parameter=([^>\n]{1,200})>")
_WRAPPER = "<tool_call>"


def _parse_params(body: str) -> dict[str, str] | None:
    """Raw parameter texts; None when the last one is cut off."""
    params: dict[str, str] = {}
    matches = list(_PARAM.finditer(body))
    for index, match in enumerate(matches):
        value_start = match.end()
        limit = matches[index + 1].start() if index + 1 < len(matches) else len(body)
        close = body.find("</parameter>", value_start, limit)
        params[match.group(1).strip()] = body[
            value_start : close if close >= 0 else limit
        ]
    return params


def _wrapper_start(text: str, start: int) -> int:
    """Where a ``<tool_call>`` right before the function (blanks between) starts."""
    pos = start
    floor = max(0, start - 256)  # bounded: a flood of blanks stays linear
    while pos > floor and text[pos - 1] in " \t\r\n":
        pos -= 1
    return pos - len(_WRAPPER) if text.endswith(_WRAPPER, 0, pos) else start


def _cut_off(text: str, inner: int, limit: int) -> bool:
    """Whether an unclosed function is a call cut off (nothing or parameters
    follow it) rather than ``<function=NAME>`` named in prose."""
    return inner >= limit or text.startswith("<parameter=", inner)


class Qwen3CoderXmlDialect(Dialect):
    """XML-parameter calls (Qwen3-Coder, Qwen3.5)."""

    name: ClassVar[str] = "qwen3_coder_xml"
    markers: ClassVar[tuple[str, ...]] = ("<tool_call>", "<function=")
    triggers: ClassVar[tuple[str, ...]] = ("<function=",)

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        finder = Finder(text)  # every search moves forward: linear on a flood
        for match in _FUNCTION.finditer(text):
            if too_many(found, text, match.start()):
                break
            body_start = match.end()
            inner = skip_ws(text, body_start)
            if text.startswith("{", inner):
                continue  # JSON body: Functionary v3.1 / Hermes ``<function=..>``
            close = finder.find("</function>", body_start)
            nxt = _FUNCTION.search(text, body_start)
            if nxt is not None and 0 <= nxt.start() < close:
                close = -1  # the next function starts before this one closes
            start = _wrapper_start(text, match.start())
            if close < 0:
                # No </function>: complete only if </tool_call> closes it.
                limit = nxt.start() if nxt is not None else len(text)
                outer = finder.find("</tool_call>", body_start, limit)
                if outer < 0:
                    if not _cut_off(text, inner, limit):
                        continue  # "<function=NAME> tags" in prose: no call
                    raw = text[start:limit][:2000]
                    reject = RejectedCall(match.group(1), raw, "call is truncated")
                    found.append(Found(start, limit, reject))
                    continue
                body_end, end = outer, outer + len("</tool_call>")
            else:
                body_end, end = close, close + len("</function>")
                after = skip_ws(text, end)
                if text.startswith("</tool_call>", after):
                    end = after + len("</tool_call>")
            found.append(
                Found(
                    start,
                    end,
                    self._call(
                        text[start:end],
                        match.group(1),
                        text[body_start:body_end],
                        catalog,
                    ),
                )
            )
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @staticmethod
    def _call(raw: str, name: str, body: str, catalog: Catalog) -> Any:
        params = _parse_params(body) or {}
        resolved = catalog.resolve(name.strip())
        if resolved is None:
            return make_call(catalog, name.strip(), {}, raw=raw)
        keyed = catalog.normalize_arguments(resolved, params)
        props = catalog.schema(resolved).get("properties") or {}
        typed = {
            key: coerce_text_value(props.get(key), value)
            for key, value in keyed.items()
        }
        return make_call(catalog, resolved, typed, raw=raw)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "# Tools\n\nYou have access to the following functions:\n"
            f"{compact_catalog(catalog)}\n\n"
            "If you choose to call a function ONLY reply in the following format with NO suffix:\n\n"
            "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\n"
            "value_1\n</parameter>\n</function>\n</tool_call>\n\n"
            "- Function calls MUST follow the specified format\n"
            "- Required parameters MUST be specified\n"
            "- You may provide optional reasoning BEFORE the function call, but NOT after"
        )
