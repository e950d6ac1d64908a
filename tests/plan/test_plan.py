"""Planner invariants on every example, the Llama 3 numbers, and specs that cannot be built."""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.plan.ports import model_port_index
from fabgen.plan.summary import summary
from tests.helpers import EXAMPLE_NAMES, edited, example


@cache
def _plan(name: str) -> FabricPlan:
    return plan_fabric(load_spec(example(name)))


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_nic_of_rail_r_lands_on_a_rail_r_leaf(name: str) -> None:
    """Rail-optimized: a leaf per rail. Rack (ToR) layout: a leaf of no rail takes every rail of its hosts."""
    fabric = _plan(name)
    leaves = {s.name: s for s in fabric.switches if s.tier == "leaf"}
    host_links = [link for link in fabric.links if link.role == "host-leaf"]
    assert host_links
    if fabric.layout.rack:
        rails: dict[str, set[int | None]] = {}
        for link in host_links:
            rails.setdefault(link.b_device, set()).add(link.rail)
        assert {leaf.rail for leaf in leaves.values()} == {None}
        assert all(taken == set(range(fabric.spec.fabric.rails)) for taken in rails.values())
        return
    for link in host_links:
        assert leaves[link.b_device].rail == link.rail
    for host in fabric.hosts:
        for nic in host.nics:
            if nic.rail is not None:
                assert nic.leaf is not None and leaves[nic.leaf].rail == nic.rail


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_no_port_used_twice_and_all_within_radix(name: str) -> None:
    fabric = _plan(name)
    ends = Counter()
    for link in fabric.links:
        ends[(link.a_device, link.a_port)] += 1
        ends[(link.b_device, link.b_port)] += 1
    assert max(ends.values()) == 1
    for switch in fabric.switches:
        for port in switch.ports:
            assert 1 <= port.index <= switch.radix
            assert model_port_index(switch.os, switch.model, port.name, switch.speed, switch.port_width) == port.index


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_uplinks_spread_evenly(name: str) -> None:
    fabric = _plan(name)
    for switch in fabric.switches:
        per_peer = Counter(p.peer_device for p in switch.ports if p.direction == "up")
        assert len(set(per_peer.values())) <= 1, (switch.name, per_peer)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_addresses_unique_and_paired(name: str) -> None:
    fabric = _plan(name)
    addresses = [a for link in fabric.links for a in (link.a_address, link.b_address)]
    assert len(addresses) == len(set(addresses))
    for link in fabric.links[:500]:
        a, b = (int(x.split("/")[0].split(".")[-1]) for x in (link.a_address, link.b_address))
        assert a == b + 1 and b % 2 == 0


def test_llama3_24k_numbers() -> None:
    s = summary(_plan("llama3-24k"))
    assert (s["hosts"], s["gpus"], s["pods"], s["leaves_per_pod"], s["leaves_per_rail_per_pod"]) == (3072, 24576, 24, 32, 4)
    assert s["spines_per_pod"] == 32
    assert s["switches"] == {"leaf": 768, "spine": 768, "super-spine": 512}
    assert (s["planes"], s["super_spines_per_plane"], s["links_spine_to_each_super_spine"]) == (32, 16, 2)
    assert s["links_total"] == 73728
    assert s["links"] == {"host-leaf": 24576, "leaf-spine": 24576, "spine-super-spine": 24576}
    tiers = s["per_tier"]
    assert tiers["leaf"]["oversubscription"] == "1:1" and tiers["spine"]["oversubscription"] == "1:1"
    assert tiers["super-spine"]["ports_used_max"] == 48 and tiers["super-spine"]["ports"] == 64


def test_lab_layout() -> None:
    fabric = _plan("lab")
    assert [s.name for s in fabric.switches] == [
        "leaf-r0-p00-01", "leaf-r1-p00-01", "leaf-r2-p00-01", "leaf-r3-p00-01", "spine-01", "spine-02"]
    assert fabric.layout.leaf_spine_links == 2
    lab04 = fabric.host("lab04")
    assert [n.in_service for n in lab04.nics] == [True, True, True, False]
    assert dict(lab04.nccl_env)["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1"
    assert dict(lab04.nccl_env)["NCCL_IB_TC"] == "106"


def test_more_than_a_three_tier_fabric_holds() -> None:
    text = edited(lambda d: d["hosts"][0].update(count=8193), "llama3-24k")
    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(text))
    message = str(info.value)
    assert "65544 NIC ports" in message and "tops out at 65536 NIC ports" in message
    assert "fabric.tiers" in message


def test_two_tier_too_small_for_spines() -> None:
    def grow(d):
        d["hosts"][0]["count"] = 600
        d["fabric"]["tiers"]["spine"].pop("count")
    with pytest.raises(SpecError, match="needs spines with at least"):
        plan_fabric(load_spec(edited(grow)))


def test_pool_too_small() -> None:
    text = edited(lambda d: d["fabric"]["addressing"].update(p2p="10.10.0.0/28"))
    with pytest.raises(SpecError, match=r"p2p pool 10.10.0.0/28 has 16 usable addresses, but the layout needs 256: leaves 4 \(block of 4 x 64"):
        plan_fabric(load_spec(text))


def test_explicit_cabling_replaces_planned_links() -> None:
    # A technician landed lab01's rail-0 and rail-1 cables on each other's leaves.
    cables = [
        {"a": "lab01:ens1np0", "b": "leaf-r1-p00-01:Ethernet1/1"},
        {"a": "lab01:ens2np0", "b": "leaf-r0-p00-01:Ethernet1/1"},
    ]
    fabric = plan_fabric(load_spec(edited(lambda d: d["fabric"].update(cabling=cables))))
    base = _plan("lab")
    assert len(fabric.links) == len(base.links)
    moved = {(link.a_device, link.a_port): link for link in fabric.links if link.explicit}
    assert moved[("lab01", "ens1np0")].b_device == "leaf-r1-p00-01"
    assert moved[("lab01", "ens1np0")].rail == 0  # the NIC's rail, now on a rail-1 leaf: the linter's call
    leaf0 = fabric.switch("leaf-r0-p00-01")
    assert next(p for p in leaf0.ports if p.name == "Ethernet1/1").description == "lab01:ens2np0"


def test_cable_to_unknown_device_is_located() -> None:
    cables = [{"a": "lab01:ens1np0", "b": "leaf-r9-p00-01:Ethernet1/1"}]
    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(edited(lambda d: d["fabric"].update(cabling=cables))))
    assert "neither a host nor a planned switch" in str(info.value)
    assert "(at fabric.cabling[0])" in str(info.value)


def test_plan_does_not_mutate_spec() -> None:
    spec = load_spec(example("lab"))
    before = spec.model_dump_json()
    plan_fabric(spec)
    assert spec.model_dump_json() == before
