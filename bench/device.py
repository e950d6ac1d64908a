#!/usr/bin/env python3
"""Benchmark ``fabgen generate SPEC --device NAME`` as a process: the Ansible per-host path (a script, not a test).

    python bench/device.py [--repeat N] [--spec PATH] [--json OUT]

Rows for a switch and a host of ``examples/llama3-24k``: ``cold`` (``--no-cache``:
load, validate, plan, render that device, compiling its templates, since
``--no-cache`` turns the compiled-template cache off too), ``fill`` (the first cached run: it
plans and renders every device once and stores them) and ``warm`` (a cache hit,
the figure the < 0.3 s target is about). Each run is a fresh process started
the way the ``fabgen`` console script starts; the measured figure is the
child's CPU time (user + sys, from ``resource.getrusage(RUSAGE_CHILDREN)``),
because the machine is shared and wall time mostly says how busy it was; wall
time is in the notes. ``cold`` and ``warm`` are the median of ``--repeat`` runs.
The cache lives in a temporary ``FABGEN_CACHE_DIR``, so the user's is not touched.

:func:`rows` is what ``bench/run.py``'s combined table imports:
``(name, measured seconds, target seconds, notes)``; a row without a target has
``nan`` there.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: bench/ itself is sys.path[0]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rows import Row, text_table

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "llama3-24k" / "spec.yaml"
DEVICES = (("switch", "leaf-r0-p00-01"), ("host", "gt00001"))
TARGET_WARM = 0.3
"""Issue 17: one device under 0.3 s end to end."""


def _run(spec: Path, device: str, out: Path, cache: Path, *extra: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``fabgen generate --device`` process."""
    env = {**os.environ, "FABGEN_CACHE_DIR": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", "from fabgen.cli import main; raise SystemExit(main())",
                           "generate", str(spec), "-o", str(out), "--device", device, "-q", *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=1800)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"fabgen generate --device {device} failed: {proc.stderr.strip()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def rows(repeat: int = 3, spec: Path = SPEC, devices: tuple[tuple[str, str], ...] = DEVICES) -> list[Row]:
    """Cold, fill and warm one-device runs of a switch and a host (see the module docstring).

    ``devices`` is ``((kind, name), ...)``; the fill runs on the first.
    """
    table: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="fabgen-bench-device-") as tmp:
        base = Path(tmp)
        cache = base / "cache"
        for kind, device in devices:
            cold = _median([_run(spec, device, base / f"cold-{device}-{i}", cache, "--no-cache")
                            for i in range(repeat)])
            table.append(_row(f"device {kind} cold (--no-cache)", cold[0], None,
                              f"{device}, median of {repeat}; wall {cold[1]:.2f} s"))
        fill = _run(spec, devices[0][1], base / "fill", cache)
        table.append(_row("device fill (first cached run: every device)", fill[0], None,
                          f"plans and renders all devices once; wall {fill[1]:.2f} s"))
        for kind, device in devices:
            warm = _median([_run(spec, device, base / f"warm-{device}-{i}", cache) for i in range(repeat)])
            table.append(_row(f"device {kind} warm (cache hit)", warm[0], TARGET_WARM,
                              f"{device}, median of {repeat}; wall {warm[1]:.2f} s"))
    return table


def _row(name: str, cpu: float, target: float | None, notes: str) -> Row:
    """One figure of the combined table: CPU seconds measured, the notes beside them (a cold run has no target)."""
    return Row(name=name, measured=f"{cpu:.3f} s CPU ({notes})", target="-" if target is None else f"< {target:g} s",
               ok=None if target is None else cpu < target, value=cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spec", type=Path, default=SPEC)
    parser.add_argument("--json", type=Path, metavar="OUT")
    args = parser.parse_args()
    table = rows(args.repeat, args.spec)
    print(text_table(table))
    if args.json:
        args.json.write_text(json.dumps([vars(r) for r in table], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
