"""The benchmark harness runs (a smoke check, no timing thresholds: timings belong in bench/, not tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT


def test_bench_lab_scenario_runs(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "run.py"), "--scenario", "lab", "--repeat", "1",
                           "--json", str(out)], capture_output=True, text=True, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "lab: 16 GPUs, 4 hosts, 6 switches" in proc.stdout
    result = json.loads(out.read_text())["results"][0]
    assert {"load", "validate", "plan", "write"} <= set(result["stages_s"])
    assert result["files"] > 0 and result["peak_rss_mb"] > 0
