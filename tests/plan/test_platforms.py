"""The model table: fixed vs modular port names, 2 x 400G breakout on 800G cages, management ports."""

from __future__ import annotations

from typing import Any

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan.ports import model_port_index, model_port_lanes, model_port_name
from fabgen.platforms import management_port, platform
from fabgen.targets.render import render_files
from tests.helpers import edited


@pytest.mark.parametrize(("model", "index", "speed", "name"), [
    ("7060DX5-64S", 1, 400, "Ethernet1/1"),      # fixed, 400G cage: the OS's plain scheme
    ("7060DX5-64S", 64, 400, "Ethernet64/1"),
    ("7060X6-64PE", 1, 400, "Ethernet1/1"),      # 800G cage split 2 x 400G: first lane of each half
    ("7060X6-64PE", 2, 400, "Ethernet1/5"),
    ("7060X6-64PE", 3, 400, "Ethernet2/1"),
    ("7060X6-64PE", 1, 800, "Ethernet1/1"),
    ("7808R3", 1, 400, "Ethernet3/1/1"),         # line cards from slot 3 (two supervisors)
    ("7808R3", 36, 400, "Ethernet3/36/1"),
    ("7808R3", 37, 400, "Ethernet4/1/1"),
    ("DCS-7816R3", 576, 400, "Ethernet18/36/1"),
    ("7700R4", 2, 400, "Ethernet3/1/5"),         # modular with 800G cages, broken out
    ("unknown-9000", 5, 400, "Ethernet5/1"),
])
def test_eos_port_names_round_trip(model: str, index: int, speed: int, name: str) -> None:
    assert model_port_name("eos", model, index, speed) == name
    assert model_port_index("eos", model, name, speed) == index


@pytest.mark.parametrize(("model", "name"), [
    ("7808R3", "Ethernet1/1/1"),      # slot 1 is a supervisor
    ("7808R3", "Ethernet11/1/1"),     # beyond the 8 line cards
    ("7808R3", "Ethernet3/1"),        # fixed form on a modular chassis
    ("7060X6-64PE", "Ethernet1/3"),   # not the first lane of a 400G half
    ("7060X6-64PE", "Ethernet1/1/1"),
])
def test_names_outside_the_model_scheme_are_index_0(model: str, name: str) -> None:
    assert model_port_index("eos", model, name, 400) == 0


def test_table_knows_families_and_management_ports() -> None:
    assert platform("7808R3").asic == "jericho2" and platform("7808R3").deep_buffer  # type: ignore[union-attr]
    assert platform("7808R3").radix(400) == 288  # type: ignore[union-attr]  # Arista: 288 x 400G
    assert platform("7804R3").radix(400) == 144  # type: ignore[union-attr]
    assert platform("7060DX5-64S").asic == "tomahawk4"  # type: ignore[union-attr]
    assert platform("7060X6-64PE").radix(400) == 128  # type: ignore[union-attr]
    assert management_port("7816R3") == "Management0" and management_port("7060DX5-64S") == "Management1"
    assert management_port("nothing-known") == "Management1" and management_port("DCS-7500R9") == "Management0"
    assert model_port_lanes("eos", "7060X6-64PE", 2, 400) == (4, 5, 6, 7)
    assert model_port_lanes("sonic", "7060X6-64PE", 2, 400) == tuple(range(8, 16))  # other OSes: untouched


def _modular(d: dict[str, Any]) -> None:
    tiers = d["fabric"]["tiers"]
    tiers["leaf"].update(model="7060X6-64PE", ports=128)
    tiers["spine"].update(model="7808R3", ports=288, asic="jericho2")
    d["fabric"]["addressing"]["p2p"] = "10.10.0.0/22"


def test_a_modular_spine_and_a_breakout_leaf_render_as_eos_names_them() -> None:
    plan = plan_fabric(load_spec(edited(_modular)))
    spine = plan.switch("spine-01")
    assert [p.name for p in spine.ports][:3] == ["Ethernet3/1/1", "Ethernet3/2/1", "Ethernet3/3/1"]
    assert all(p.index > 0 for s in plan.switches for p in s.ports)
    leaf = plan.switch("leaf-r0-p00-01")
    assert [p.name for p in leaf.ports][:3] == ["Ethernet1/1", "Ethernet1/5", "Ethernet2/1"]
    files, _ = render_files(plan, ["eos"], ["spine-01", "leaf-r0-p00-01"], None)
    spine_cfg = files["switches/spine-01.cfg"]
    assert "interface Ethernet3/1/1\n" in spine_cfg and "interface Management0\n" in spine_cfg
    leaf_cfg = files["switches/leaf-r0-p00-01.cfg"]
    assert "interface Ethernet1/5\n" in leaf_cfg and "   speed 400g-4\n" in leaf_cfg
    assert "interface Management1\n" in leaf_cfg
