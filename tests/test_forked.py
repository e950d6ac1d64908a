"""fabgen.forked: the slices cover the work once, in order, and run in other processes that inherit the inputs."""

from __future__ import annotations

import os
import subprocess
import sys

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


_KILLER = """
import os, signal, sys
from fabgen.errors import FabgenError
from fabgen.forked import forked_slices, slices

def job(inputs, low, high):
    if low == 0:
        os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
    return list(range(low, high))

try:
    list(forked_slices(job, None, slices(100, 2), 2))
except FabgenError as exc:
    print(exc.lines()[0])
    sys.exit(3)
"""


@pytest.mark.skipif(not can_fork(), reason="no fork on this platform")
def test_a_killed_worker_ends_the_run_with_one_line_not_a_hang() -> None:
    """multiprocessing.Pool waits forever for a killed worker's slice; the executor says so and the run ends."""
    proc = subprocess.run([sys.executable, "-c", _KILLER], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.startswith("fabgen: a worker process of -j 2 ended without its result"), proc.stdout


def _fails_on_second(inputs: None, low: int, high: int) -> list[int]:
    if low > 0:
        raise ValueError(f"slice {low}-{high} cannot be done")
    return [low]


@pytest.mark.skipif(not can_fork(), reason="no fork on this platform")
def test_a_jobs_exception_reaches_the_caller_as_raised() -> None:
    """The first failing slice in order (13-26 of eight slices of 13), its own type and message."""
    with pytest.raises(ValueError, match="slice 13-26 cannot be done"):
        list(forked_slices(_fails_on_second, None, slices(100, 2), 2))
