"""The benchmark harness runs (a smoke check, no timing thresholds: timings belong in bench/, not tests)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_device_rows_are_rows_of_the_one_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """bench/device.py's figures without running generate: CPU seconds, notes and a verdict only where a target is."""
    sys.path.insert(0, str(ROOT))
    from bench import device
    from bench.rows import Row

    monkeypatch.setattr(device, "_run", lambda spec, name, out, cache, *extra: (0.5 if "--no-cache" in extra else 0.1, 0.7))
    table = device.rows(repeat=1, devices=(("switch", "leaf"), ("host", "h1")))
    assert [r.name for r in table] == ["device switch cold (--no-cache)", "device host cold (--no-cache)",
                                       "device fill (first cached run: every device)", "device switch warm (cache hit)",
                                       "device host warm (cache hit)"]
    assert all(isinstance(r, Row) for r in table)
    assert table[0] == Row("device switch cold (--no-cache)", "0.500 s CPU (leaf, median of 1; wall 0.70 s)", "-",
                           ok=None, value=0.5)
    assert table[3].target == "< 0.3 s" and table[3].ok is True and table[3].value == 0.1


def test_lint_deployed_rows_run_every_jobs_count_on_one_tree() -> None:
    """bench/lint_deployed.py on the lab: the generated tree as it is, then collected (every switch file changed),
    one row per -j, the findings of each asserted equal inside."""
    sys.path.insert(0, str(ROOT))
    from bench import lint_deployed

    table = lint_deployed.rows(jobs=(1, 2), spec=ROOT / "examples" / "lab" / "spec.yaml")
    assert [r.name.split(" (")[0].split(" of ")[1] for r in table] == [
        "a tree that is fabgen's text", "a collected tree", "a collected tree"]
    assert [r.name.split("), ")[1] for r in table] == ["-j 1", "-j 1", "-j 2"]
    assert all(r.value is not None and r.value > 0 and " s wall, " in r.measured for r in table)


def test_24k_headline_is_the_median_warm_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """One process moved by a fifth between runs: the row is judged by the median of three, its own sys and wall
    beside it, every run's CPU listed, and the peak RSS the most any of them took."""
    sys.path.insert(0, str(ROOT))
    from bench import generate

    runs = iter([generate.Run(3.4, 3.5, 200.0, 1.1), generate.Run(2.9, 3.0, 230.0, 0.8),
                 generate.Run(3.1, 3.2, 210.0, 0.9)])
    outs: list[Path] = []

    def process(spec: Path, out: Path, *extra: str) -> generate.Run:
        outs.append(out)
        return next(runs)

    monkeypatch.setattr(generate, "fabgen_process", process)
    (headline, rss), full = generate._warm_rows(tmp_path / "spec.yaml", tmp_path)
    assert full.cpu_s == 3.1
    assert headline.measured == "3.10 s CPU, of which 0.90 s system (3.20 s wall)"
    assert "median of 3 processes: 3.40, 2.90, 3.10 s CPU" in headline.name
    assert headline.ok is False and headline.value == 3.1
    assert rss.measured == "230 MB" and rss.ok is True
    assert len(set(outs)) == 3  # each into its own directory: none creates files where another's were just freed


def test_device_script_still_prints_its_table() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "device.py"), "--help"], capture_output=True,
                          text=True, check=False, cwd=ROOT / "bench")
    assert proc.returncode == 0, proc.stderr


def test_output_trees_are_removed_after_the_last_row_not_between_rows(tmp_path: Path) -> None:
    """bench/run.py defers every row's tree removal to the end (a removal would slow the next row's writes)."""
    sys.path.insert(0, str(ROOT))
    from bench.rows import discard, removals_deferred

    now = tmp_path / "now"
    (now / "hosts" / "h1").mkdir(parents=True)
    discard(now)  # outside the block: at once
    assert not now.exists()

    trees = [tmp_path / "first", tmp_path / "second"]
    for tree in trees:
        (tree / "hosts").mkdir(parents=True)
        (tree / "hosts" / "file").write_text("x\n")
    with pytest.raises(RuntimeError), removals_deferred():
        for tree in trees:
            discard(tree)
        assert all(tree.exists() for tree in trees)  # a later row would still find them in place
        raise RuntimeError("a row failed")
    assert not any(tree.exists() for tree in trees)  # removed on the way out, even after a failure
    later = tmp_path / "later"
    later.mkdir()
    discard(later)  # the block left: at once again
    assert not later.exists()


@pytest.mark.skipif(not Path("/proc/self/maps").exists() or shutil.which("ldd") is None,
                    reason="needs Linux's /proc and ldd")
def test_machine_line_names_how_the_interpreter_is_linked() -> None:
    """The header says whether this Python runs from a shared libpython, as the dynamic linker sees it."""
    sys.path.insert(0, str(ROOT))
    from bench.rows import interpreter_build, machine

    linked = subprocess.run(["ldd", sys.executable], capture_output=True, text=True, check=False).stdout
    build = interpreter_build()
    if "libpython" in linked:
        assert build.startswith("shared libpython") and build.split()[1] in linked
    else:
        assert build == "libpython linked in"
    assert machine().endswith(f"({build})")
