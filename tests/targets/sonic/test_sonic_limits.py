"""What SONiC cannot take is refused by ``fabgen validate``, at the spec's line."""

from __future__ import annotations

from typing import Any

import pytest

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric
from tests.helpers import edited


def _refusals(edit: Any) -> list[str]:
    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(edited(edit, "sonic-pod")))
    return [str(p) for p in info.value.problems]


def test_unknown_hwsku_with_did_you_mean() -> None:
    def o64(data: dict[str, Any]) -> None:
        data["fabric"]["tiers"]["leaf"]["hwsku"] = "Mellanox-SN5600-O64"

    (message,) = _refusals(o64)
    assert "no hwsku 'Mellanox-SN5600-O64'" in message and "did you mean 'Mellanox-SN5600-O128'?" in message
    assert message.startswith("<string>:") and message.endswith("(at fabric.tiers.leaf.hwsku)")


def test_model_without_hwsku_takes_its_default_sku() -> None:
    def acs(data: dict[str, Any]) -> None:
        for tier in ("leaf", "spine"):
            del data["fabric"]["tiers"][tier]["hwsku"]
            data["fabric"]["tiers"][tier]["ports"] = 64

    fabric = plan_fabric(load_spec(edited(acs, "sonic-pod")))
    leaf = fabric.switches[0]
    assert (leaf.hwsku, leaf.port_width, leaf.ports[1].name) == ("ACS-SN5600", 8, "Ethernet8")

    def unknown_model(data: dict[str, Any]) -> None:
        del data["fabric"]["tiers"]["leaf"]["hwsku"]
        data["fabric"]["tiers"]["leaf"]["model"] = "Z9664F"

    assert any("no hwsku 'Z9664F'" in m and "(at fabric.tiers.leaf.model)" in m for m in _refusals(unknown_model))


def test_asic_must_be_the_platforms() -> None:
    def spectrum2(data: dict[str, Any]) -> None:
        data["fabric"]["tiers"]["leaf"]["asic"] = "spectrum2"
        data["fabric"]["tiers"]["spine"]["asic"] = "Spectrum-4"  # the SKU's, spelled otherwise: fine

    (message,) = _refusals(spectrum2)
    assert "Mellanox-SN5600-O128 is a spectrum4 platform" in message and "(at fabric.tiers.leaf.asic)" in message


def test_asic_constants_are_the_platforms() -> None:
    def cells(data: dict[str, Any]) -> None:
        data["fabric"]["tiers"]["spine"]["buffers"]["cell_size"] = 144

    (message,) = _refusals(cells)
    assert "takes cell_size from x86_64-nvidia_sn5600-r0's ASIC_TABLE" in message
    assert message.endswith("(at fabric.tiers.spine.buffers.cell_size)")


def test_more_ports_or_a_speed_the_sku_lacks() -> None:
    def big(data: dict[str, Any]) -> None:
        data["fabric"]["tiers"]["leaf"]["ports"] = 130
        data["fabric"]["tiers"]["spine"]["speed"] = "800G"
        data["fabric"]["addressing"]["p2p"] = "10.20.0.0/20"  # room for 130 ports per leaf: the SKU refuses first

    messages = _refusals(big)
    assert any("has 128 ports at 400G, not 130" in m and "fabric.tiers.leaf.ports" in m for m in messages)
    assert any("no port of Mellanox-SN5600-O128 runs at 800G" in m for m in messages)


def test_cabled_port_the_sku_lacks_points_at_the_cable() -> None:
    def odd(data: dict[str, Any]) -> None:
        data["fabric"]["cabling"] = [{"a": "gpu01:ens1np0", "b": "leaf-r0-p00-01:Ethernet2"}]

    (message,) = _refusals(odd)
    assert "'Ethernet2' is not a port of Mellanox-SN5600-O128" in message and "(at fabric.cabling[0])" in message


def test_hwsku_only_on_sonic_tiers() -> None:
    def eos(data: dict[str, Any]) -> None:
        data["fabric"]["tiers"]["leaf"]["os"] = "eos"

    with pytest.raises(SpecError) as info:
        load_spec(edited(eos, "sonic-pod"))
    assert any("hwsku names a SONiC SKU; this tier runs eos" in str(p) for p in info.value.problems)
