"""``paused_gc`` pauses the collector and puts back the state it found, as a context manager or a decorator."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from fabgen._gc import paused_gc


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_nested_uses_restore_what_each_found(collector_on: None) -> None:
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc(promote=True):
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner one found it off and leaves it off
    assert gc.isenabled()


def test_an_exception_still_restores_and_propagates(collector_on: None) -> None:
    with pytest.raises(ZeroDivisionError), paused_gc(promote=True):
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_a_decorated_function_pauses_each_call_even_when_it_recurses(collector_on: None) -> None:
    seen: list[bool] = []

    @paused_gc(promote=True)
    def down(depth: int) -> int:
        seen.append(gc.isenabled())
        return depth if depth == 0 else down(depth - 1)

    assert down(3) == 0 and seen == [False] * 4
    assert gc.isenabled()
    assert down(0) == 0 and gc.isenabled()


def test_promoting_moves_young_objects_to_the_oldest_generation(collector_on: None) -> None:
    with paused_gc(promote=True):
        kept = [[] for _ in range(1000)]
        assert gc.get_count()[0] > 500
    assert gc.get_count()[0] < 50 and len(kept) == 1000
