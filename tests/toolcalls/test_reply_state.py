"""What one reply's readers share (``reading/reply.py``), wherever a parse starts."""

from __future__ import annotations

from typing import override

from custom_components.toolbelt.toolcalls.catalog import Catalog
from custom_components.toolbelt.toolcalls.chain import ChainDialect
from custom_components.toolbelt.toolcalls.dialects.base import Dialect
from custom_components.toolbelt.toolcalls.dialects.native import from_openai_tool_calls
from custom_components.toolbelt.toolcalls.guard import unguarded
from custom_components.toolbelt.toolcalls.model import ParseResult
from custom_components.toolbelt.toolcalls.reading.reply import current_reply
from custom_components.toolbelt.toolcalls.registry import get_dialect, resolve_dialect
from tests.toolcalls.dialect_helpers import catalog

CATALOG = catalog()
# A call whose arguments only json5 reads (a comment): ~20 characters of it each.
JSON5_BLOCK = (
    '<tool_call>{"name": "HassTurnOn", "arguments": {"name": "kitchen"}'
    " /* c */}</tool_call>\n"
)


def _budget_spent(result: ParseResult) -> bool:
    return any("json5 budget spent" in r.reason for r in result.rejected)


def test_a_chain_shares_one_json5_budget_among_its_members() -> None:
    """Through ``auto`` as through Hermes alone: the reply's json5 runs out."""
    result = resolve_dialect("auto").parse(JSON5_BLOCK * 60, CATALOG)
    assert 5 < len(result.calls) < 60
    assert _budget_spent(result)
    assert current_reply() is None  # closed with the parse


def test_a_reply_is_read_the_same_whatever_was_read_before() -> None:
    """What a JSON value reads as depends on its reply's json5 budget, so no
    reply reuses another's reads: here a reader called on its own (no reply,
    no budget) read all 60 first, and ``auto`` still runs out after."""
    hermes = get_dialect("hermes")
    alone = unguarded(type(hermes).parse)(hermes, JSON5_BLOCK * 60, CATALOG)
    assert len(alone.calls) == 60
    result = resolve_dialect("auto").parse(JSON5_BLOCK * 60, CATALOG)
    assert 5 < len(result.calls) < 60
    assert _budget_spent(result)
    again = resolve_dialect("auto").parse(JSON5_BLOCK * 60, CATALOG)
    assert len(again.calls) == len(result.calls)
    assert again.rejected == result.rejected


def test_native_calls_share_one_json5_budget() -> None:
    arguments = '{"name": "kitchen" /* c */}'
    result = from_openai_tool_calls(
        [
            {"id": f"c{i}", "function": {"name": "HassTurnOn", "arguments": arguments}}
            for i in range(60)
        ],
        CATALOG,
    )
    assert 5 < len(result.calls) < 60
    assert _budget_spent(result)
    assert current_reply() is None


def test_a_chain_called_unguarded_keeps_the_promise_itself() -> None:
    """A chain's own parse without its guard (as an outer chain calls it)
    opens the reply itself: the same budget, closed when it returns."""
    chain = resolve_dialect("auto")
    assert isinstance(chain, ChainDialect)
    result = unguarded(type(chain).parse)(chain, JSON5_BLOCK * 60, CATALOG)
    assert _budget_spent(result)
    assert current_reply() is None


class _Spy(Dialect):
    """Records what the open reply holds when a chain asks it to read."""

    name = "spy"
    seen: list[tuple[bool, int | None]] = []  # noqa: RUF012

    @override
    def parse(self, text: str, catalog: Catalog) -> ParseResult:
        reply = current_reply()
        assert reply is not None
        self.seen.append(
            (reply.probing, None if reply.memo is None else id(reply.memo))
        )
        return ParseResult(content=text)


def test_a_chain_inside_a_chain_shares_the_outer_reply_and_gives_it_back() -> None:
    """The inner chain probes with the outer one's memo, and leaves the reply
    as it found it: the outer chain's next member sees the same memo."""
    _Spy.seen = []
    inner = ChainDialect([_Spy(), get_dialect("hermes")], name="inner")
    outer = ChainDialect([inner, _Spy(), get_dialect("react")], name="outer")
    result = outer.parse(
        'Action: HassTurnOn\nAction Input: {"name": "kitchen"}', CATALOG
    )
    assert [call.name for call in result.calls] == ["HassTurnOn"]
    assert len(_Spy.seen) == 2
    assert all(probing for probing, _ in _Spy.seen)
    assert _Spy.seen[0][1] == _Spy.seen[1][1] is not None
    assert current_reply() is None
