#!/usr/bin/env python3
"""Benchmark ``fabgen twin``: bring-up, BGP convergence, verify and teardown times (a script, not a test).

    sudo python bench/twin.py [--scenario lab|pod32]... [--json OUT]

Each scenario runs ``fabgen twin run`` in a fresh process and reads the times
from its JSON report: ``up`` (namespaces, veth pairs, addresses, FRR started),
``converge`` (until every BGP session is Established, the first verify check),
``verify`` (all checks, the cable cut included) and ``down``. Needs root, Linux
and Debian's frr, like the twin itself.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = {"lab": ROOT / "examples" / "lab" / "spec.yaml", "pod32": ROOT / "tests" / "data" / "twin" / "pod32.yaml"}


def run_scenario(name: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "fabgen.cli", "twin", "run", str(SCENARIOS[name]), "-q",
                               "--prefix", f"fgb-{name}", "--json", str(out)], cwd=ROOT, capture_output=True,
                              text=True, check=False, timeout=900)
        wall = time.perf_counter() - start
        if not out.exists():
            raise SystemExit(f"{name}: {proc.stderr.strip() or 'no report'}")
        report = json.loads(out.read_text())
    checks = {c["name"]: c for c in report.get("checks", [])}
    return {"scenario": name, "ok": report.get("ok", False), "wall_s": round(wall, 2),
            "namespaces": len(report.get("namespaces", {})), "timings_s": report.get("timings_s", {}),
            "pings": checks.get("ping", {}).get("expected", 0)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()
    results = [run_scenario(s) for s in args.scenario or sorted(SCENARIOS)]
    print(f"{'scenario':10} {'netns':>5} {'pings':>6} {'up s':>6} {'converge s':>10} {'verify s':>8} "
          f"{'down s':>6} {'wall s':>6}  ok")
    for r in results:
        t = r["timings_s"]
        print(f"{r['scenario']:10} {r['namespaces']:>5} {r['pings']:>6} {t.get('up', 0):>6.2f} "
              f"{t.get('converge', 0):>10.2f} {t.get('verify', 0):>8.2f} {t.get('down', 0):>6.2f} "
              f"{r['wall_s']:>6.2f}  {'yes' if r['ok'] else 'NO'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results}, indent=2) + "\n")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
