"""One row per figure of the performance issue, and the table they make (text or the README's markdown).

Bench modules expose ``rows() -> list[Row]``; ``bench/run.py`` collects them
from every module it knows that is present, so a new bench adds rows without
touching the table code.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Row:
    """A measured figure beside its target. ``ok`` is None when there is no target to hold it to (or no way to
    measure it here, said in ``measured``)."""

    name: str
    measured: str
    target: str
    ok: bool | None
    value: float | None = None
    """The figure as a number (seconds, MB, a ratio), for ``--json``."""


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else "pass" if ok else "FAIL"


def machine() -> str:
    """CPU model, cores and load: the figures only compare within one run on one machine."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"{model}, nproc {os.cpu_count()}, load average {load}, "
            f"Python {platform.python_version()} ({interpreter_build()})")


def interpreter_build() -> str:
    """Whether this interpreter runs from a shared ``libpython``: a Python built that way (pyenv's default)
    took about a quarter more user time for the same 24k ``generate`` than Debian's statically linked,
    PGO- and LTO-built one on the same machine (README, Performance), so the figures name it."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return "libpython unknown"
    shared = next((line.split()[-1] for line in maps.splitlines() if "/libpython" in line), None)
    return f"shared {Path(shared).name}" if shared else "libpython linked in"


def text_table(rows: list[Row]) -> str:
    widths = [max(len(h), *(len(c) for c in col)) for h, col in zip(
        ("figure", "measured", "target", ""),
        zip(*((r.name, r.measured, r.target, verdict(r.ok)) for r in rows), strict=True), strict=True)] if rows \
        else [6, 8, 6, 0]
    lines = []
    for cells in [("figure", "measured", "target", ""), *((r.name, r.measured, r.target, verdict(r.ok)) for r in rows)]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    return "\n".join(lines)


def markdown_table(rows: list[Row]) -> str:
    lines = ["| figure | measured | target | |", "|---|---|---|---|"]
    lines += [f"| {r.name} | {r.measured} | {r.target} | {verdict(r.ok)} |" for r in rows]
    return "\n".join(lines)


_deferred: list[Path] | None = None
"""Output trees whose removal waits for the end of the run (:func:`removals_deferred`); None: remove at once."""


def discard(tree: Path) -> None:
    """Remove a bench's output tree: at once, or at the end of the run inside :func:`removals_deferred`.

    Why: on a journal-less ext4 (the bench VMs) every inode created in the
    minute after many were removed rescans the freed ones of its block group
    (see ``fabgen.dir_placement``). The generate rows leave about
    400,000 inodes (24k, 131k and 262k trees); removed before the write row, they
    made that row measure the kernel's scan (its floor took 4.85 s against the
    writer's 1.81 s: "0.4x").
    """
    from fabgen.writer import remove_tree

    if _deferred is None:
        remove_tree(tree)
    else:
        _deferred.append(tree)


@contextmanager
def removals_deferred() -> Iterator[None]:
    """Every :func:`discard` inside waits until the block is left (``bench/run.py``: after the last row)."""
    global _deferred
    _deferred = []
    try:
        yield
    finally:
        trees, _deferred = _deferred, None
        for tree in trees:
            discard(tree)
