"""ByteDance Seed-OSS: ``<seed:tool_call><function=fn><parameter=k>v</parameter></function>``.

Values are text typed from the schema. Reasoning is ``<seed:think>…
</seed:think>`` with ``<seed:cot_budget_reflect>`` notes; Seed often quotes the
call format inside its thinking, so calls there only count when none follow.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, override

from ..model import RejectedCall
from ..prompting.render import compact_catalog
from ..reading.calls import Found, build_result, make_call
from ..reading.markup import (
    parameter_pairs,
    prefer_outside_reasoning,
    too_many,
    typed_text_arguments,
)
from ..reading.scan import tag_blocks
from .base import Dialect

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..model import ParseResult, ToolCall

__all__ = ["SeedOssDialect"]

_FUNCTION = re.compile(r"<function=([^>\s]+)\s*>")
_PARAM = re.compile(r"<parameter=([^>]+?)\s*>")
_BUDGET = re.compile(
    r"<seed:cot_budget_reflect>.*?(?:</seed:cot_budget_reflect>|\Z)", re.S
)
_OPEN = "<seed:tool_call>"
_CLOSE = "</seed:tool_call>"


def _function_call(
    catalog: Catalog, name: str, body: str, raw: str
) -> ToolCall | RejectedCall:
    pairs = parameter_pairs(body, _PARAM)
    if pairs is None:
        return RejectedCall(name=name, raw=raw, reason="a parameter is never closed")
    args = typed_text_arguments(catalog, name, pairs)
    return make_call(catalog, name, args, raw=raw, coerce=True)


class SeedOssDialect(Dialect):
    """Seed-OSS ``<seed:tool_call>`` XML calls."""

    name = "seed_oss"
    markers = (_OPEN,)
    triggers = (_OPEN,)
    cleans = (
        "<seed:cot_budget_reflect>",
        "</seed:cot_budget_reflect>",
        "<seed:eos>",
        _OPEN,
        _CLOSE,
    )

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            f"You may call these functions:\n{compact_catalog(catalog)}\n\n"
            "To call a function, use this format:\n<seed:tool_call>\n"
            "<function=function_name>\n<parameter=arg>value</parameter>\n"
            "</function>\n</seed:tool_call>\nIf no function is needed, answer normally."
        )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        for start, body_start, body_end, end in tag_blocks(text, _OPEN, _CLOSE):
            if too_many(found, text, start):
                break
            functions = list(_FUNCTION.finditer(text, body_start, body_end))
            if not functions and not text[body_start:body_end].strip():
                found.append(Found(start, end, None))
            for index, func in enumerate(functions):
                if too_many(found, text, func.start()):
                    break
                limit = (
                    functions[index + 1].start()
                    if index + 1 < len(functions)
                    else body_end
                )
                close = text.rfind("</function>", func.end(), limit)
                name = func.group(1)
                raw = text[func.start() : limit]
                if close < 0:
                    call: ToolCall | RejectedCall = RejectedCall(
                        name, raw, "call is truncated"
                    )
                else:
                    call = _function_call(catalog, name, text[func.end() : close], raw)
                found.append(Found(start, end, call))
        found = prefer_outside_reasoning(text, found)
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def sanitize(self, text: str) -> str:
        if "seed:" not in text:  # in every token below (most answers hold none)
            return text
        if "<seed:cot_budget_reflect>" in text:
            text = _BUDGET.sub("", text)
        for token in ("</seed:cot_budget_reflect>", "<seed:eos>", _OPEN, _CLOSE):
            text = text.replace(token, "")
        return text
