""":func:`fabgen.targets.render.render_files` runs whole with the collector paused, sort included, and promotes.

After a paused render the youngest generation holds every object the render
allocated; the first tracked allocation with the collector back on (the
sort's tuples, when the sort ran outside the pause) starts a collection that
walks them and, now and then, the whole plan: noise in the per-target floor
rows, and real time at 24k. Promoting (``paused_gc(promote=True)``) moves them
to the oldest generation, so the caller's next allocations do not start one either.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.render import render_files
from tests.helpers import example


@pytest.fixture
def collections() -> Iterator[list[int]]:
    seen: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.collect()
    was_enabled = gc.isenabled()
    gc.enable()
    gc.callbacks.append(count)
    try:
        yield seen
    finally:
        gc.callbacks.remove(count)
        if not was_enabled:
            gc.disable()


def test_no_collection_during_render_files(collections: list[int]) -> None:
    plan = plan_fabric(load_spec(example("lab")))
    collections.clear()
    files, owners = render_files(plan)
    during = len(collections)  # read before any allocation of ours can start one
    probe = [[] for _ in range(100)]  # fewer new objects than the youngest generation's threshold (700)
    after = len(collections)
    assert (during, after, len(probe)) == (0, 0, 100)
    assert list(files) == sorted(files) and set(owners) == set(files)
