"""bench/twin.py's rows, the form the README's one table of bench figures takes (no twin booted here)."""

from __future__ import annotations

import sys

import pytest
from twin_support import ROOT

sys.path.insert(0, str(ROOT))

from bench import twin
from bench.rows import Row
from bench.twin import figures


def test_figures_are_rows_of_the_one_table_with_the_load_and_a_verdict() -> None:
    result = {"scenario": "pod128", "ok": True, "wall_s": 96.71, "load": [5.7, 15.5], "cpus": 2,
              "timings_s": {"up": 8.97, "converge": 15.23, "verify": 72.59, "down": 2.22}}
    fast = {**result, "scenario": "lab", "wall_s": 6.0}
    assert figures([result, {**result, "scenario": "pod32", "ok": False}, fast]) == [
        Row("twin pod128 (128 hosts x 8 rails, 48 switches): up + verify + down, wall",
            "96.7 s (load 5.7 -> 15.5 on 2 cores)", "< 90 s", ok=False, value=96.71),
        Row("twin pod128 (128 hosts x 8 rails, 48 switches): up / converge / verify (cut included) / down",
            "9.0 / 15.2 / 72.6 / 2.2 s", "-", ok=None),
        Row("twin pod32 (32 hosts x 8 rails, 24 switches): up + verify + down, wall",
            "96.7 s (load 5.7 -> 15.5 on 2 cores), CHECKS FAILED", "-", ok=None, value=96.71),
        Row("twin pod32 (32 hosts x 8 rails, 24 switches): up / converge / verify (cut included) / down",
            "9.0 / 15.2 / 72.6 / 2.2 s", "-", ok=None),
        Row("twin lab (4 hosts, 6 switches): up + verify + down, wall",
            "6.0 s (load 5.7 -> 15.5 on 2 cores)", "< 10 s", ok=True, value=6.0),
        Row("twin lab (4 hosts, 6 switches): up / converge / verify (cut included) / down",
            "9.0 / 15.2 / 72.6 / 2.2 s", "-", ok=None),
    ]


def test_without_root_or_frr_the_table_says_not_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    from fabgen.twin import system

    def refuse(need_frr: bool = True) -> None:
        raise system.TwinError("needs root")

    monkeypatch.setattr(system, "preflight", refuse)
    monkeypatch.setattr(twin, "run_scenario", lambda name: pytest.fail("booted a twin without root"))
    assert twin.rows() == [Row("twin lab, pod128: up + verify + down, wall", "not measured: fabgen twin: needs root",
                               "lab < 10 s, pod128 < 90 s", ok=None)]
