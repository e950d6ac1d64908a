"""One row per figure of the performance issue, and the table they make (text or the README's markdown).

Bench modules expose ``rows() -> list[Row]``; ``bench/run.py`` collects them
from every module it knows that is present, so a new bench adds rows without
touching the table code.
"""

from __future__ import annotations

import os
import platform
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
    return f"{model}, nproc {os.cpu_count()}, load average {load}, Python {platform.python_version()}"


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
