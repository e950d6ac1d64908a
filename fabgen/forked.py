"""Slices of one big job in forked workers that inherit its inputs: the shape ``generate -j`` and ``lint -j`` share.

Why fork: the inputs are a plan of half a million objects (and, for the
linter, fabgen's own renders); pickling them to each worker would cost more
than the work. A forked worker has them already, so only the slice's bounds
travel to it and only its results travel back, in slice order.

Why :class:`~concurrent.futures.ProcessPoolExecutor` and not
:class:`multiprocessing.pool.Pool`: a Pool whose worker is killed (the OOM
killer, at 262k GPUs a forked copy grows as its pages are touched) replaces the
worker and waits forever for the lost slice's result. The executor marks itself
broken instead, and the run ends with one line saying so.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from fabgen.errors import FabgenError, Problem

Result = TypeVar("Result")

_FORKED: tuple[Callable[[Any, int, int], Any], Any] | None = None
"""The job and its inputs while a pool runs: set before the fork, so each worker reads its own copy."""


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def slices(total: int, jobs: int, most: int | None = None) -> list[tuple[int, int]]:
    """``(low, high)`` bounds cutting ``range(total)`` into about four slices per worker (a slow slice then holds up
    a quarter of a worker, not all of it), none longer than ``most``."""
    size = max(1, -(-total // (jobs * 4)))
    if most is not None:
        size = min(size, most)
    return [(low, min(low + size, total)) for low in range(0, total, size)]


def forked_slices(job: Callable[[Any, int, int], Result], inputs: Any, bounds: list[tuple[int, int]],
                  jobs: int) -> Iterator[Result]:
    """``job(inputs, low, high)`` for each of ``bounds`` in ``jobs`` forked workers; results in the order of
    ``bounds``, each as soon as it and those before it are done. The caller checks :func:`can_fork` first.

    A job's exception is raised here, as the job raised it. A worker that dies without an answer raises
    :class:`~fabgen.errors.FabgenError`. Closing the iterator early cancels the slices no worker has started.
    """
    global _FORKED
    _FORKED = (job, inputs)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        yield from pool.map(_run_slice, bounds)
    except BrokenProcessPool:
        raise FabgenError([Problem(f"a worker process of -j {jobs} ended without its result (killed, or out of "
                                   "memory?); run with fewer jobs", file="fabgen")]) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _FORKED = None


def _run_slice(bounds: tuple[int, int]) -> Any:
    assert _FORKED is not None
    job, inputs = _FORKED
    return job(inputs, *bounds)
