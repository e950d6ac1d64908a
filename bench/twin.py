#!/usr/bin/env python3
"""Benchmark ``fabgen twin``: bring-up, BGP convergence, verify and teardown times (a script, not a test).

    sudo python bench/twin.py [--scenario lab|pod32|pod128]... [--json OUT]

Each scenario runs ``fabgen twin run`` (up, every verify check with the cable
cut, down) in a fresh process and reads the times from its JSON report: ``up``
(namespaces, veth pairs, switch addresses, hosts from their host network
files, FRR started), ``converge`` (until every BGP session is Established, the
first verify check), ``verify`` (all checks) and ``down``. ``wall`` is the whole
process, Python start and planning included: the figure issue 17's targets are
about (lab under 10 s; 128 hosts x 8 rails under 90 s on 2 cores).

The machine is shared: the 1-minute load average is recorded before and after
each scenario and printed with it, since a twin's times (FRR, the kernel's
forwarding of the ping mesh) stretch with whatever else runs. :func:`rows`
gives the figures as ``(figure, value, target)`` for the README's table.
Needs root, Linux and Debian's frr, like the twin itself.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: bench/ itself is sys.path[0]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rows import Row, markdown_table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "twin"
SCENARIOS = {"lab": ROOT / "examples" / "lab" / "spec.yaml", "pod32": DATA / "pod32.yaml",
             "pod128": DATA / "pod128.yaml"}
LABELS = {"lab": "lab (4 hosts, 6 switches)", "pod32": "pod32 (32 hosts x 8 rails, 24 switches)",
          "pod128": "pod128 (128 hosts x 8 rails, 48 switches)"}
TARGETS_S = {"lab": 10.0, "pod128": 90.0}
"""Issue 17's twin targets, wall seconds of up + verify + down."""
DEFAULT = ("lab", "pod128")


def run_scenario(name: str, prefix: str | None = None) -> dict[str, Any]:
    """One ``fabgen twin run`` of a scenario: its report's times, its wall time and the load around it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        load_before = os.getloadavg()[0]
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "fabgen.cli", "twin", "run", str(SCENARIOS[name]), "-q",
                               "--prefix", prefix or f"fgb-{name}", "--json", str(out)], cwd=ROOT,
                              capture_output=True, text=True, check=False, timeout=900)
        wall = time.perf_counter() - start
        load_after = os.getloadavg()[0]
        if not out.exists():
            raise SystemExit(f"{name}: {proc.stderr.strip() or 'no report'}")
        report = json.loads(out.read_text())
    checks = {c["name"]: c for c in report.get("checks", [])}
    return {"scenario": name, "ok": report.get("ok", False), "wall_s": round(wall, 2),
            "namespaces": len(report.get("namespaces", {})), "timings_s": report.get("timings_s", {}),
            "pings": checks.get("ping", {}).get("expected", 0),
            "checks_s": {n: c.get("seconds", 0) for n, c in checks.items()}, "load": [round(load_before, 1), round(load_after, 1)],
            "cpus": os.cpu_count() or 0}


def figures(results: list[dict[str, Any]]) -> list[Row]:
    """Rows of measured scenarios for ``bench/run.py``'s one table: a missed target or a failed check is ``ok`` False."""
    table: list[Row] = []
    for r in results:
        t = r["timings_s"]
        label = LABELS[r["scenario"]]
        target = TARGETS_S.get(r["scenario"])
        load = f"load {r['load'][0]:g} -> {r['load'][1]:g} on {r['cpus']} cores"
        table.append(Row(f"twin {label}: up + verify + down, wall", f"{r['wall_s']:.1f} s ({load})"
                         + ("" if r["ok"] else ", CHECKS FAILED"), f"< {target:g} s" if target else "-",
                         ok=bool(r["ok"]) and r["wall_s"] < target if target else None, value=r["wall_s"]))
        table.append(Row(f"twin {label}: up / converge / verify (cut included) / down",
                         " / ".join(f"{t.get(k, 0):.1f}" for k in ("up", "converge", "verify", "down")) + " s", "-",
                         ok=None))
    return table


def rows(scenarios: tuple[str, ...] = DEFAULT) -> list[Row]:
    """Measure ``scenarios`` one after the other and return their :func:`figures`.

    Without root or FRR the twin cannot boot: one row says why rather than the table losing the twin silently.
    """
    from fabgen.twin.system import TwinError, preflight

    try:
        preflight()
    except TwinError as exc:
        return [not_measured(scenarios, str(exc))]
    return figures([run_scenario(s) for s in scenarios])


def not_measured(scenarios: tuple[str, ...], why: str) -> Row:
    targets = ", ".join(f"{s} < {TARGETS_S[s]:g} s" for s in scenarios if s in TARGETS_S) or "-"
    return Row(f"twin {', '.join(scenarios)}: up + verify + down, wall", f"not measured: {why}", targets, ok=None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()
    results = [run_scenario(s) for s in args.scenario or DEFAULT]
    print(f"{'scenario':10} {'netns':>5} {'pings':>7} {'up s':>6} {'converge s':>10} {'verify s':>8} "
          f"{'down s':>6} {'wall s':>7} {'load':>12}  ok")
    for r in results:
        t = r["timings_s"]
        print(f"{r['scenario']:10} {r['namespaces']:>5} {r['pings']:>7} {t.get('up', 0):>6.2f} "
              f"{t.get('converge', 0):>10.2f} {t.get('verify', 0):>8.2f} {t.get('down', 0):>6.2f} "
              f"{r['wall_s']:>7.2f} {r['load'][0]:>5} -> {r['load'][1]:<5} {'yes' if r['ok'] else 'NO'}")
    print()
    print(markdown_table(figures(results)))
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "rows": [vars(r) for r in figures(results)]},
                                              indent=2) + "\n")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
