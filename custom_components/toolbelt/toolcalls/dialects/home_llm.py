"""acon96/home-llm: ```` ```homeassistant ```` blocks.

``{"service": "light.turn_on", "target_device": "light.kitchen", ...}`` maps
to the ``HassCallService`` tool (when exposed); ``{name, arguments}`` and
``{tool: ..}`` objects are calls to that tool; the older
``light.turn_on(light.kitchen)`` line form is read too.
"""

from __future__ import annotations

import re
from typing import ClassVar, override

from ..catalog import Catalog
from ..model import ParseResult, RejectedCall, ToolCall
from ..prompting.render import compact_catalog
from ..reading.calls import (
    Found,
    build_result,
    call_from_object,
    make_call,
)
from ..reading.jsonrepair import (
    LooseJSONError,
    find_json_end,
    loads_loose,
)
from ..reading.scan import TRUNCATED, find_fences, json_error_at, skip_ws
from .base import Dialect

__all__ = ["HomeLlmDialect"]

_LANGS = frozenset({"homeassistant", "home_assistant", "home-assistant", "hass"})
_SERVICE_LINE = re.compile(
    r"^\s*([a-z_]+\.[a-z_]+)\(\s*([a-z_]+\.[\w]+)\s*(?:,\s*(.*?))?\)\s*$", re.M
)
SERVICE_TOOL = "HassCallService"


def _object_call(
    obj: object, catalog: Catalog, raw: str
) -> ToolCall | RejectedCall | None:
    if (
        isinstance(obj, dict)
        and isinstance(obj.get("service"), str)
        and "name" not in obj
    ):
        return make_call(catalog, SERVICE_TOOL, dict(obj), raw=raw)
    return call_from_object(obj, catalog, raw=raw)


class HomeLlmDialect(Dialect):
    """home-llm service-call blocks."""

    name: ClassVar[str] = "home_llm"
    markers: ClassVar[tuple[str, ...]] = ("```homeassistant",)
    triggers: ClassVar[tuple[str, ...]] = (
        "```homeassistant",
        "```home_assistant",
        "```hass",
    )

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        found: list[Found] = []
        for fence in find_fences(text):
            if fence.lang.split()[0].lower() not in _LANGS if fence.lang else True:
                continue
            calls: list[ToolCall | RejectedCall] = []
            pos = skip_ws(text, fence.body_start)
            while pos < fence.body_end and text[pos] == "{":
                if json_error_at(text, pos, fence.body_end) == TRUNCATED:
                    # Generation stopped inside the call: refuse it, show none of it.
                    raw = text[pos : fence.body_end][:2000]
                    calls.append(RejectedCall("", raw, "call is truncated"))
                    break
                end = find_json_end(text, pos, fence.body_end)
                if end < 0:
                    end = fence.body_end
                raw = text[pos:end]
                try:
                    call = _object_call(loads_loose(raw), catalog, raw)
                except LooseJSONError:
                    call = None
                if call is None:
                    break
                calls.append(call)
                pos = skip_ws(text, end)
            if not calls:
                body = text[fence.body_start : fence.body_end]
                for match in _SERVICE_LINE.finditer(body):
                    args = {"service": match.group(1), "target_device": match.group(2)}
                    calls.append(
                        make_call(catalog, SERVICE_TOOL, args, raw=match.group(0))
                    )
            found += [Found(fence.start, fence.end, call) for call in calls]
        return build_result(text, found, self.name, sanitize=self.sanitize)

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            f"Tools:\n{compact_catalog(catalog)}\n\n"
            "To use a tool, write a block:\n"
            '```homeassistant\n{"name": "tool_name", "arguments": {"arg": "value"}}\n```'
        )
