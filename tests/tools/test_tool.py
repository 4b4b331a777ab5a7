"""The Tool object: schema from a signature, coercion, and errors as readable text."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar, Literal

import pytest

from custom_components.toolbelt.tools.errors import ToolError
from custom_components.toolbelt.tools.tool import Tool


@dataclass
class Ctx:
    """Stands in for ToolContext: injected, never in the schema."""

    __tool_injected__: ClassVar[bool] = True
    user: str


class Color(Enum):
    RED = "red"
    BLUE = "blue"


async def paint(
    ctx: Ctx,
    action: Literal["paint", "erase"],
    room: str,
    coats: int = 2,
    ratio: float | None = None,
    glossy: bool = False,
    color: Color = Color.RED,
    walls: list[str] | None = None,
) -> dict[str, object]:
    """Paint or erase walls in a room.

    Use it only when asked.

    Args:
        action: paint adds colour; erase removes it.
        room (str): Which room, e.g. kitchen.
        coats: How many coats
            to apply.
        ratio: Thinning ratio.
        glossy: Whether to use gloss.
        color: The colour.
        walls: Which walls.

    Returns:
        What was done.
    """
    return {
        "user": ctx.user,
        "action": action,
        "room": room,
        "coats": coats,
        "ratio": ratio,
        "glossy": glossy,
        "color": color,
        "walls": walls,
    }


PAINT = Tool(paint, arg_aliases={"where": "room"})


def test_schema_from_signature_and_docstring() -> None:
    """Types, enums, defaults, required and descriptions; the context is hidden."""
    assert PAINT.name == "paint"
    assert (
        PAINT.description == "Paint or erase walls in a room.\nUse it only when asked."
    )
    assert PAINT.schema == {
        "type": "object",
        "properties": {
            "action": {
                "enum": ["paint", "erase"],
                "type": "string",
                "description": "paint adds colour; erase removes it.",
            },
            "room": {"type": "string", "description": "Which room, e.g. kitchen."},
            "coats": {
                "type": "integer",
                "description": "How many coats to apply.",
                "default": 2,
            },
            "ratio": {"type": "number", "description": "Thinning ratio."},
            "glossy": {
                "type": "boolean",
                "description": "Whether to use gloss.",
                "default": False,
            },
            "color": {
                "enum": ["red", "blue"],
                "type": "string",
                "description": "The colour.",
                "default": "red",
            },
            "walls": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Which walls.",
            },
        },
        "required": ["action", "room"],
    }
    assert PAINT.openai_schema["function"]["parameters"] is PAINT.schema


async def test_coercion_aliases_and_injection() -> None:
    """Strings become numbers/bools, enum case is fixed, aliases rename, nulls drop."""
    text = await PAINT.call(
        {
            "action": "Paint",
            "where": "kitchen",
            "coats": "3",
            "ratio": "0.5",
            "glossy": "true",
            "walls": '["north", "east"]',
            "color": "BLUE",
            "invented": "ignored",
        },
        Ctx(user="alice"),
    )
    assert text == (
        '{"user": "alice", "action": "paint", "room": "kitchen", "coats": 3, '
        '"ratio": 0.5, "glossy": true, "color": "Color.BLUE", "walls": ["north", "east"]}'
    )
    defaults = await PAINT.call(
        {"action": "erase", "room": "hall", "coats": None}, Ctx(user="bob")
    )
    assert '"coats": 2' in defaults
    assert '"color": "Color.RED"' in defaults


async def test_bad_arguments_become_readable_text() -> None:
    """Missing or wrong arguments: ERROR text naming the field and what is accepted."""
    missing = await PAINT.invoke({"action": "paint"}, Ctx(user="a"))
    wrong = await PAINT.invoke({"action": "dance", "room": "hall"}, Ctx(user="a"))
    not_object = await PAINT.invoke(["paint"], Ctx(user="a"))  # type: ignore[arg-type]

    hint = (
        ". paint takes: action: paint|erase, room: string, coats?: integer,"
        " ratio?: number, glossy?: boolean, color?: red|blue, walls?: array"
    )
    assert (missing.failed, wrong.failed, not_object.failed) == (True, True, True)
    assert (
        missing.data == "ERROR: ArgumentError: missing required argument: room" + hint
    )
    assert wrong.data == (
        'ERROR: ArgumentError: action: expected one of "paint", "erase", got "dance"'
        + hint
    )
    assert not_object.data == (
        'ERROR: ArgumentError: arguments must be an object, got ["paint"]' + hint
    )


async def test_failures_inside_the_tool_become_text() -> None:
    """Our errors, unexpected errors and timeouts all come back as ERROR text."""

    async def broken(kind: str) -> str:
        """Fails on purpose."""
        if kind == "ours":
            raise ToolError("the backend is not set up")
        if kind == "slow":
            await asyncio.sleep(5)
        raise KeyError("boom")

    tool = Tool(broken, timeout=0.05)

    assert await tool.call({"kind": "ours"}) == (
        "ERROR: ToolError: the backend is not set up"
    )
    assert await tool.call({"kind": "bug"}) == "ERROR: KeyError: 'boom'"
    assert await tool.call({"kind": "slow"}) == (
        "ERROR: TimeoutError: the tool took too long and was stopped"
    )


async def test_results_are_text() -> None:
    """None reads as OK, strings stay, data becomes JSON."""

    async def nothing() -> None:
        """Does nothing."""

    async def text() -> str:
        """Says hi."""
        return "hi"

    assert await Tool(nothing).call(None) == "OK"
    assert await Tool(text, name="greet").call({}) == "hi"
    assert Tool(text, name="greet", description="Custom.").description == "Custom."


async def test_cancellation_is_not_swallowed() -> None:
    """A cancelled turn stays cancelled; it is not turned into ERROR text."""
    started = asyncio.Event()

    async def wait() -> str:
        """Waits."""
        started.set()
        await asyncio.sleep(10)
        return "done"

    task = asyncio.create_task(Tool(wait).call({}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
