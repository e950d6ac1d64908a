#!/usr/bin/env python3
"""Benchmark ``fabgen lint SPEC --deployed DIR`` on a collected 24k tree, as processes (a script, not a test).

    python bench/lint_deployed.py [--jobs N...]

The tree is ``fabgen generate``'s for ``examples/llama3-24k``, linted first as
it is (every file fabgen's text: no switch file is parsed, each takes the
plan's pictures), then with one comment line appended to every switch file,
which is what a tree collected from the devices looks like to the linter: no
switch file is fabgen's text, so each is parsed and so is fabgen's own render
of it. Each row is one ``fabgen lint`` process: its CPU time (user + sys, from
``os.wait4``) and its wall time, which ``-j`` is about. The findings of every
``-j`` are asserted to be the same.

:func:`rows` is what ``bench/run.py``'s combined table imports.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: bench/ itself is sys.path[0]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rows import Row, discard, text_table

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "llama3-24k" / "spec.yaml"
JOBS = (1, 2)


def generated_tree(spec: Path, tmp: Path) -> Path:
    """``fabgen generate``'s tree for ``spec``, as written (:func:`collect` then makes it a collected one)."""
    out = tmp / "tree"
    subprocess.run([sys.executable, "-m", "fabgen.cli", "generate", str(spec), "-o", str(out), "-q"], cwd=ROOT,
                   check=True, timeout=1800)
    return out


def collect(tree: Path) -> None:
    """Change every switch file of ``tree`` by a comment line: a tree as collected from the devices."""
    for path in (tree / "switches").rglob("*.cfg"):
        with path.open("a") as file:
            file.write("! collected\n")


def lint_process(spec: Path, tree: Path, jobs: int) -> tuple[float, float, str]:
    """(CPU seconds, wall seconds, the JSON findings) of one ``fabgen lint --deployed`` process."""
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as err:
        report = Path(tmp) / "findings.json"
        start = time.perf_counter()
        # stderr to a file, not a pipe nobody reads while the child runs: notes beyond the pipe's 64 KiB would block it
        proc = subprocess.Popen([sys.executable, "-m", "fabgen.cli", "lint", str(spec), "--deployed", str(tree),
                                 "-j", str(jobs), "--format", "json", "-o", str(report)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) not in (0, 1):  # 1: findings
            err.seek(0)
            raise SystemExit(f"fabgen lint --deployed failed: {err.read().decode(errors='replace')}")
        return usage.ru_utime + usage.ru_stime, wall, report.read_text()


def rows(jobs: tuple[int, ...] = JOBS, spec: Path = SPEC) -> list[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="fabgen-bench-lint-", dir=os.environ.get("FABGEN_BENCH_TMP")))
    try:
        tree = generated_tree(spec, tmp)
        cpu, wall, _ = lint_process(spec, tree, 1)
        found = [Row(f"{spec.parent.name} `lint --deployed` of a tree that is fabgen's text (no switch file parsed), "
                     "-j 1", f"{wall:.1f} s wall, {cpu:.1f} s CPU", "", None, wall)]
        collect(tree)
        reports = set()
        for n in jobs:
            cpu, wall, report = lint_process(spec, tree, n)
            reports.add(report)
            found.append(Row(f"{spec.parent.name} `lint --deployed` of a collected tree (every switch file parsed), "
                             f"-j {n}", f"{wall:.1f} s wall, {cpu:.1f} s CPU", "", None, wall))
        if len(reports) != 1:
            raise SystemExit("lint --deployed gave other findings with other -j")
        return found
    finally:
        discard(tmp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=list(JOBS))
    args = parser.parse_args()
    print(text_table(rows(tuple(args.jobs))))


if __name__ == "__main__":
    main()
