"""fabgen.forked: the slices cover the work once, in order, and run in other processes that inherit the inputs."""

from __future__ import annotations

import os

import pytest

from fabgen.forked import can_fork, forked_slices, slices


@pytest.mark.parametrize(("total", "jobs", "most"), [(1, 2, None), (64, 2, None), (1000, 2, 256), (1000, 3, 7), (5, 8, None)])
def test_slices_cover_the_range_once_in_order(total: int, jobs: int, most: int | None) -> None:
    bounds = slices(total, jobs, most)
    assert [i for low, high in bounds for i in range(low, high)] == list(range(total))
    assert all(high > low for low, high in bounds)
    if most is not None:
        assert max(high - low for low, high in bounds) <= most
    assert len(bounds) <= max(total, jobs * 4)


def test_no_work_is_no_slice() -> None:
    assert slices(0, 2) == []


def _squares_and_pid(inputs: list[int], low: int, high: int) -> tuple[list[int], int]:
    return [n * n for n in inputs[low:high]], os.getpid()


@pytest.mark.skipif(not can_fork(), reason="no fork on this platform")
def test_workers_inherit_the_inputs_and_answer_in_order() -> None:
    numbers = list(range(100))  # never pickled: a worker reads its forked copy
    results = list(forked_slices(_squares_and_pid, numbers, slices(len(numbers), 2), 2))
    assert [n for part, _ in results for n in part] == [n * n for n in numbers]
    assert os.getpid() not in {pid for _, pid in results}
