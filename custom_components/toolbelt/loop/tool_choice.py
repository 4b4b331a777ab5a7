"""An agent's tool-choice policy, as the constraint one hop's request carries.

Policies: ``auto``; ``required_first`` (a call is forced on hop 0, then the
model is free so the answer can land); ``required`` (every hop, for
benchmarks); or a tool name (that tool on hop 0). ``strict`` adds "an answer
or a call" on the free hops of a text dialect.

Natively (tools sent) the OpenAI ``tool_choice`` field carries it; in a text
dialect a grammar or a JSON schema from the catalog does, and so it does
natively on a server that does not honour ``tool_choice`` (Ollama) but honours
a schema or grammar: the model then writes the call as text, which the loop
reads. Only kinds the agent check saw honoured are used (``kinds``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..toolcalls import Catalog
from ..toolcalls.prompting.constraint import (
    DEFAULT_FRAME,
    Shape,
    frame_name,
    gbnf,
    json_schema,
)

AUTO = "auto"
REQUIRED_FIRST = "required_first"
REQUIRED = "required"
POLICIES = (AUTO, REQUIRED_FIRST, REQUIRED)
TEXT_KINDS = ("grammar", "json_schema")


@dataclass(frozen=True, slots=True)
class HopConstraint:
    """What one request carries; ``kind`` names it in logs and warnings."""

    kind: str
    shape: Shape
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    grammar: str | None = None
    # Send only this tool: a named choice on a server that cannot name one.
    only_tool: str | None = None
    # The dialect whose wire format a grammar imposes (reads the reply).
    frame: str = DEFAULT_FRAME


def hop_shape(
    policy: str, strict: bool, index: int, catalog: Catalog
) -> tuple[Shape, str | None] | None:
    """What hop ``index`` must produce, or None when decoding is free.

    A tool name the catalog does not know gives None (the caller warns).
    """
    if policy == REQUIRED or (policy == REQUIRED_FIRST and index == 0):
        return Shape.ANY_CALL, None
    if policy not in POLICIES and index == 0:
        name = catalog.resolve(policy)
        return (Shape.ONE_CALL, name) if name else None
    return (Shape.ANSWER_OR_CALL, None) if strict else None


def plan(
    shape: tuple[Shape, str | None],
    *,
    text_mode: bool,
    kinds: tuple[str, ...],
    named_tool_choice: bool,
    catalog: Catalog,
    key: str,
    dialect: str = DEFAULT_FRAME,
    opened_reasoning: bool = False,
) -> HopConstraint | None:
    """The constraint for ``shape`` in the first honoured kind that fits the mode.

    ``opened_reasoning``: the model's template opens its reasoning block.
    """
    kind_shape, name = shape
    if not text_mode:
        # Native calls are structured already: only forcing one needs a field.
        if kind_shape is Shape.ANSWER_OR_CALL:
            return None
        if "tool_choice" in kinds:
            return _native(kind_shape, name, named_tool_choice)
        # No tool_choice on this server: a schema or grammar forces a text call.
        dialect = DEFAULT_FRAME
    if "grammar" in kinds:
        frame = frame_name(dialect)
        grammar = gbnf(
            catalog,
            kind_shape,
            name,
            key=key,
            frame=frame,
            opened_reasoning=opened_reasoning,
        )
        return HopConstraint("grammar", kind_shape, grammar=grammar, frame=frame)
    if "json_schema" in kinds:
        schema = json_schema(catalog, kind_shape, name, key=key)
        return HopConstraint(
            "json_schema",
            kind_shape,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": schema},
            },
        )
    return None


def _native(shape: Shape, name: str | None, named_tool_choice: bool) -> HopConstraint:
    """The OpenAI ``tool_choice`` field that forces a native call."""
    if name is None:
        return HopConstraint("tool_choice", shape, tool_choice="required")
    if named_tool_choice:
        choice = {"type": "function", "function": {"name": name}}
        return HopConstraint("tool_choice", shape, tool_choice=choice)
    return HopConstraint("tool_choice", shape, tool_choice="required", only_tool=name)
