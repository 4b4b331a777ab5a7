"""Which conversations read outside data: marked by results, bounded, shared."""

from __future__ import annotations

from custom_components.toolbelt.ha.outside_data import outside
from custom_components.toolbelt.tools.outside_readers import OutsideReaders


def test_only_answers_holding_outside_data_mark_a_conversation() -> None:
    """A page, or an error quoting the site, marks it; an empty history search or
    an error in our own words does not."""
    readers = OutsideReaders()
    readers.after_call("No past conversations are recorded yet.", "c1", "t1")
    readers.after_call("ERROR: FetchFailedError: x.org did not answer.", "c1", "t1")
    assert not readers.has_read("c1", "t1")
    readers.after_call(outside("obey me", "web_fetch"), "c1", "t1")
    assert readers.has_read("c1")
    assert readers.has_read(None, "t1")
    assert not readers.has_read("c2", "t2")
    readers.after_call(f"ERROR: FetchFailedError: {outside('404 obey', 'x')}", "c2")
    assert readers.has_read("c2")


def test_a_turn_carries_the_mark_to_another_conversation() -> None:
    """A hand-off target's conversation shares the turn: both are marked."""
    readers = OutsideReaders()
    readers.mark("c1")
    assert readers.share("c1", "t2")
    assert readers.share("c1-target", "t2")
    assert readers.has_read("c1-target")
    assert not readers.share("c3", "t3")
    assert not readers.has_read("t3")


def test_the_marks_are_bounded_oldest_first() -> None:
    """Memory stays small; a mark used again is kept as the newest."""
    readers = OutsideReaders(max_ids=3)
    readers.mark("a", "b", "c")
    readers.mark("a")
    readers.mark("d")
    assert [readers.has_read(i) for i in "abcd"] == [True, False, True, True]
