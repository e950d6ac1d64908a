"""EOS PFC headroom: sized from each port's own cable, a Trident MMU profile on Tomahawk, EOS's own on Jericho.

The pyavd round trip (tests/targets/avd/test_pyavd.py) proves the lines are the
ones AVD renders; these tests prove the number follows the per-link inputs.
"""

from __future__ import annotations

from typing import Any

import pytest

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.eos.headroom import headroom_bytes, mmu_profile
from fabgen.targets.eos.syntax import check_text
from tests.helpers import edited


def _lab(change: Any = None) -> str:
    def edit(data: dict[str, Any]) -> None:
        data["qos"]["cable_length"] = {"host_leaf": "3m", "leaf_spine": "40m"}
        if change:
            change(data)
    return edited(edit, "lab")


def test_the_formula_by_hand() -> None:
    # 400G, 40 m, MTU 9214: frames 2*(9214+38)*8 = 148032, PAUSE 672, interface 2*491520 (100G's 1228.8 ns),
    # cable 2*40*5*400 = 160000, response 463360 -> 1755104 bits = 219388 bytes.
    assert headroom_bytes(400, 40, 9214) == 219388
    assert headroom_bytes(400, 3, 9214) == 219388 - 2 * 37 * 5 * 400 // 8  # 37 m less cable, both ways
    assert headroom_bytes(100, 0, 1500) == -(-(2 * 1538 * 8 + 672 + 2 * 122880 + 201728) // 8)
    assert headroom_bytes(200, 5, 9214) < headroom_bytes(400, 5, 9214)


def test_a_leaf_is_sized_by_its_longest_cable_not_its_host_dacs() -> None:
    plan = plan_fabric(load_spec(_lab()))
    leaf = plan.switch("leaf-r0-p00-01")
    profile, note = mmu_profile(leaf, 9214)
    assert profile is not None and profile.cable_m == 40
    assert profile.headroom_bytes == headroom_bytes(400, 40, 9214)
    assert next(p for p in leaf.ports if p.name == profile.port).peer_kind == "switch"
    assert "40 m" in note


def test_a_cables_own_length_sizes_the_profile() -> None:
    def long_host_cable(data: dict[str, Any]) -> None:
        data["fabric"]["cabling"] = [{"a": "lab01:ens1np0", "b": "leaf-r0-p00-01:Ethernet1/1", "length": "70m"}]

    plan = plan_fabric(load_spec(_lab(long_host_cable)))
    profile, _ = mmu_profile(plan.switch("leaf-r0-p00-01"), 9214)
    assert profile is not None and (profile.port, profile.cable_m) == ("Ethernet1/1", 70)
    cfg = render_fabric(plan, ["eos"], ["leaf-r0-p00-01"])["switches/leaf-r0-p00-01.cfg"]
    assert f"   ingress headroom bytes {headroom_bytes(400, 70, 9214)}\n" in cfg
    assert "platform trident mmu queue profile FABGEN-HEADROOM apply\n" in cfg
    assert check_text(cfg) == []


@pytest.mark.parametrize("model, asic", [("7804R3", None), ("7280R3", None), ("9999X", None), ("7060DX5-32", "jericho2")])
def test_jericho_and_unknown_chips_keep_eos_defaults_and_say_why(model: str, asic: str | None) -> None:
    def spine(data: dict[str, Any]) -> None:
        data["fabric"]["tiers"]["spine"]["model"] = model
        if asic:
            data["fabric"]["tiers"]["spine"]["asic"] = asic

    plan = plan_fabric(load_spec(_lab(spine)))
    cfg = render_fabric(plan, ["eos"], ["spine-01"])["switches/spine-01.cfg"]
    assert "platform trident" not in cfg
    assert "! PFC headroom left to EOS defaults: " in cfg
    sand = model.startswith(("78", "72")) or asic == "jericho2"
    assert ("deep off-chip memory" in cfg) is sand
    assert check_text(cfg) == []
