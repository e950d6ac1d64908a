"""Every target's bytes-only floor (``bench/floor_<target>.py``) writes that target's bytes on the fabric the bench
measures it on.

The bench refuses a ratio for a floor that drifted ("floor out of date"), but
only when someone runs it; this says so in the suite, the day a target's bytes
change. sonic and nvue are measured on fabrics of their own
(``tests/test_floor_own_fabric.py``); the 24k example has no switch of theirs.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from functools import cache

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.targets.registry import select_targets
from fabgen.targets.render import render_files
from tests.helpers import ROOT, example

sys.path.insert(0, str(ROOT))
from bench.generate import OWN_FABRIC

TARGETS = [t.name for t in select_targets(None)]


@cache
def _plan() -> FabricPlan:
    return plan_fabric(load_spec(example("llama3-24k")))


def test_every_default_target_but_the_own_fabric_ones_has_a_floor() -> None:
    missing = [name for name in TARGETS if importlib.util.find_spec(f"bench.floor_{name.replace('-', '_')}") is None]
    assert missing == []


@pytest.mark.parametrize("target", [name for name in TARGETS if name not in OWN_FABRIC])
def test_the_floor_writes_the_targets_bytes_on_the_24k_fabric(target: str) -> None:
    floor = importlib.import_module(f"bench.floor_{target.replace('-', '_')}").floor_files
    real = render_files(_plan(), [target])[0]
    assert floor(_plan()) == real
