"""K2 Horizon (IFM): ``<ifm|tool_calls><ifm|tool_call>…</ifm|tool_call></ifm|tool_calls>``.

Each call inside the group is LongCat's two bodies with IFM tokens: a JSON call
object (``{"name": .., "arguments": {..}}``), or ``NAME<ifm|arg_key>k
</ifm|arg_key><ifm|arg_value>v</ifm|arg_value>``, with or without an
``<ifm|arg_type>T</ifm|arg_type>`` before each value; values are typed from the
tool's schema. The group tokens are never spoken. Reasoning is
``<ifm|think>``, ``<ifm|think_fast>`` or ``<ifm|think_faster>`` (by effort),
opened by the template, so a lone closer ends it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, override

from ..prompting.render import json_catalog
from ..text.sanitize import register_reasoning_delimiters
from .glm import ArgTags
from .longcat import LongCatDialect

if TYPE_CHECKING:
    from ..catalog import Catalog

__all__ = ["K2HorizonDialect"]

_GROUP = "<ifm|tool_calls>"
_GROUP_END = "</ifm|tool_calls>"
_OPEN = "<ifm|tool_call>"
_CLOSE = "</ifm|tool_call>"
# One think token per reasoning effort; the template writes the opener into the
# prompt, and the model may close one effort's block with another's closer.
_THINK_END = ("</ifm|think>", "</ifm|think_fast>", "</ifm|think_faster>")
for _think in ("<ifm|think>", "<ifm|think_fast>", "<ifm|think_faster>"):
    register_reasoning_delimiters(_think, _THINK_END, lone_closer=True)


class K2HorizonDialect(LongCatDialect):
    """K2 Horizon ``<ifm|tool_call>`` calls, JSON or key/value."""

    name = "k2_horizon"
    markers = (_GROUP, _OPEN)
    triggers = (_OPEN,)
    dropped = (_GROUP, _GROUP_END)
    call_tags = (_OPEN, _CLOSE)
    arg_tags = ArgTags.named(
        "ifm|tool_call", "ifm|arg_key", "ifm|arg_value", kind="ifm|arg_type"
    )

    @override
    def stop_sequences(self) -> list[str]:
        """Stop after the call group; the parser needs no closer."""
        return [_GROUP_END]

    @override
    def system_prompt(self, catalog: Catalog) -> str:
        return (
            "You can call these functions, given as JSON signatures:\n"
            f"{json_catalog(catalog)}\n\n"
            "To call functions, write each call's name and arguments as a JSON"
            f" object inside {_OPEN}{_CLOSE} tags, all calls inside"
            f" {_GROUP}{_GROUP_END}:\n"
            f'{_GROUP}{_OPEN}{{"name": "function_name", "arguments": {{"arg": "value"}}}}'
            f"{_CLOSE}{_GROUP_END}\n"
            "If no function is needed, answer normally."
        )
