"""The spec and ``-j`` arguments of the commands, resolved before anything heavy is imported.

A leaf module (no ruamel, pydantic or Jinja2): the ``--device`` cache-hit path
parses its arguments with it.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def spec_path(value: str) -> str:
    """A command line's spec argument: a directory holding ``spec.yaml`` names that file.

    Every example is a directory with its spec in it, so ``fabgen generate
    examples/lab`` should mean what it says; a directory without one is still
    refused when it is read, naming the directory.
    """
    folder = Path(value)
    if folder.is_dir() and (folder / "spec.yaml").is_file():
        return str(folder / "spec.yaml")
    return value


def jobs_arg(value: str) -> int:
    """``-j N``: a whole number from 1 to :func:`max_jobs` (``-j 300`` once started 302 processes on 2 cores)."""
    from fabgen.bounded import jobs_problem

    try:
        number = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value[:40]!r}") from None
    problem = jobs_problem(number)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return number
