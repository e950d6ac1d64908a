"""Topology families: even leaf fill, per-tier (under)subscription, rack/ToR leaves, AI zones."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

import pytest

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.plan.summary import summary, summary_table
from tests.helpers import edited


def _plan(edit: Any, name: str = "lab") -> FabricPlan:
    return plan_fabric(load_spec(edited(edit, name)))


def _ratio(plan: FabricPlan, name: str) -> Fraction:
    switch = plan.switch(name)
    down = sum(p.speed for p in switch.ports if p.direction == "down")
    up = sum(p.speed for p in switch.ports if p.direction == "up")
    return Fraction(down, up)


def _pod256(ratio: str) -> Any:
    def edit(d: dict[str, Any]) -> None:
        d["hosts"][0]["count"] = 256
        tiers = d["fabric"]["tiers"]
        tiers.pop("super_spine")
        tiers["spine"]["ports"] = 128
        d["fabric"]["oversubscription"] = ratio
    return edit


def test_oversubscribed_leaves_fill_evenly() -> None:
    """256 hosts at 2:1 on 64-port leaves: 7 leaves per rail of 37 or 34 hosts, not six of 42 and one of 4."""
    plan = _plan(_pod256("2:1"), "llama3-24k")
    hosts_on = Counter(link.b_device for link in plan.links if link.role == "host-leaf")
    per_rail0 = sorted(n for leaf, n in hosts_on.items() if leaf.startswith("leaf-r0-"))
    assert per_rail0 == [34, 37, 37, 37, 37, 37, 37]
    assert summary(plan)["hosts_per_leaf"] == {"min": 34, "max": 37}
    assert "rail-optimized leaves: 34..37 hosts per leaf" in summary_table(plan)
    assert all(_ratio(plan, s.name) <= 2 for s in plan.switches if s.tier == "leaf")


def test_undersubscribed_leaf_has_spare_uplinks() -> None:
    """Meta's 1:1.125: every leaf has at least 9 units of uplink per 8 of hosts; the spine keeps the fabric's 1:1."""
    plan = _plan(lambda d: d["fabric"]["tiers"]["leaf"].update(oversubscription="1:1.125"))
    leaves = [s for s in plan.switches if s.tier == "leaf"]
    for leaf in leaves:
        assert _ratio(plan, leaf.name) <= Fraction(8, 9)
    assert "oversubscription" in load_spec(edited(
        lambda d: d["fabric"]["tiers"]["leaf"].update(oversubscription="1:1.125"))).fabric.tiers.leaf.model_fields_set


def test_per_tier_ratio_on_the_spines_of_a_three_tier_fabric() -> None:
    """Spines at 7:1 to their super-spines (an aggregation tier like Meta's ATSW), leaves at 1:1."""
    def edit(d: dict[str, Any]) -> None:
        d["hosts"][0]["count"] = 512
        d["fabric"]["tiers"]["spine"]["oversubscription"] = "7:1"

    plan = _plan(edit, "llama3-24k")
    spines = [s for s in plan.switches if s.tier == "spine"]
    assert spines and all(_ratio(plan, s.name) <= 7 for s in spines)
    assert max(_ratio(plan, s.name) for s in spines) > 3  # really oversubscribed, not 1:1
    assert all(_ratio(plan, s.name) <= 1 for s in plan.switches if s.tier == "leaf")


def test_rack_topology_puts_every_nic_of_a_host_on_its_racks_leaf() -> None:
    plan = _plan(lambda d: d["fabric"].update(topology="rack", hosts_per_rack=2))
    leaves = sorted(s.name for s in plan.switches if s.tier == "leaf")
    assert leaves == ["leaf-p00-rack001", "leaf-p00-rack002"]
    for host in plan.hosts:
        assert len({n.leaf for n in host.nics if n.rail is not None}) == 1
    rack1 = plan.switch("leaf-p00-rack001")
    assert rack1.rail is None
    assert [p.description for p in rack1.ports if p.direction == "down"][:5] == [
        "lab01:ens1np0", "lab01:ens2np0", "lab01:ens3np0", "lab01:ens4np0", "lab02:ens1np0"]
    assert summary(plan)["topology"] == "rack"
    assert "2 leaves (racks of 2 hosts)" in summary_table(plan)


def test_rack_too_big_for_the_leaf_is_refused_with_numbers() -> None:
    with pytest.raises(SpecError, match=r"a rack of 8 hosts x 4 NICs needs 32 leaf ports down and 32 up at 1:1"):
        _plan(lambda d: d["fabric"].update(topology="rack", hosts_per_rack=8))


def test_zones_fix_the_pod_size() -> None:
    """hosts_per_zone: 1,024 hosts in zones of 64 are 16 pods, where the fewest switches would take 8 pods of 128."""
    def edit(d: dict[str, Any]) -> None:
        d["hosts"][0]["count"] = 1024
        d["fabric"]["hosts_per_zone"] = 64

    plan = _plan(edit, "llama3-24k")
    assert plan.layout.pods == 16 and plan.layout.hosts_per_pod == 64
    assert Counter(h.pod for h in plan.hosts) == {pod: 64 for pod in range(16)}


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["fabric"].update(topology="rack"), "topology 'rack' needs hosts_per_rack"),
    (lambda d: d["fabric"].update(hosts_per_rack=2), "hosts_per_rack applies to topology 'rack' only"),
    (lambda d: d["fabric"].update(hosts_per_zone=2), "hosts_per_zone sizes the pods of a 3-tier fabric"),
    (lambda d: d["fabric"]["tiers"]["spine"].update(oversubscription="2:1"), "the top tier has no uplinks"),
    (lambda d: d["fabric"].update(oversubscription="0:1"), "both > 0"),
])
def test_bad_topology_fields_are_refused_at_their_line(edit: Any, message: str) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(edited(edit))
    (problem,) = info.value.problems
    assert message in problem.message and problem.line > 0
