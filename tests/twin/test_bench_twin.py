"""bench/twin.py's rows, the form the README's one table of bench figures takes (no twin booted here)."""

from __future__ import annotations

import sys

from twin_support import ROOT

sys.path.insert(0, str(ROOT))

from bench.twin import figures


def test_figures_are_figure_value_target_rows_with_the_load() -> None:
    result = {"scenario": "pod128", "ok": True, "wall_s": 96.71, "load": [5.7, 15.5], "cpus": 2,
              "timings_s": {"up": 8.97, "converge": 15.23, "verify": 72.59, "down": 2.22}}
    assert figures([result, {**result, "scenario": "pod32", "ok": False}]) == [
        ("twin pod128 (128 hosts x 8 rails, 48 switches): up + verify + down, wall",
         "96.7 s (load 5.7 -> 15.5 on 2 cores)", "< 90 s"),
        ("twin pod128 (128 hosts x 8 rails, 48 switches): up / converge / verify (cut included) / down",
         "9.0 / 15.2 / 72.6 / 2.2 s", "-"),
        ("twin pod32 (32 hosts x 8 rails, 24 switches): up + verify + down, wall",
         "96.7 s (load 5.7 -> 15.5 on 2 cores), CHECKS FAILED", "-"),
        ("twin pod32 (32 hosts x 8 rails, 24 switches): up / converge / verify (cut included) / down",
         "9.0 / 15.2 / 72.6 / 2.2 s", "-"),
    ]
