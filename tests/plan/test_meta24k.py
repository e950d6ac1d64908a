"""examples/meta-24k is Meta's published design: the numbers of the SIGCOMM 2024 paper, from the plan itself."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import cache

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from tests.helpers import example


@cache
def _plan() -> FabricPlan:
    return plan_fabric(load_spec(example("meta-24k")))


def test_eight_zones_of_3072_gpus() -> None:
    plan = _plan()
    gpus = Counter()
    for host in plan.hosts:
        gpus[host.pod] += len(plan.spec.host_profiles[host.profile].gpus)
    assert gpus == {zone: 3072 for zone in range(8)}


def test_rtsw_per_rack_of_two_hosts_with_spare_uplinks() -> None:
    plan = _plan()
    leaves = [s for s in plan.switches if s.tier == "leaf"]
    assert len(leaves) == 1536
    for leaf in leaves[:: 97]:
        down = [p for p in leaf.ports if p.direction == "down"]
        up = [p for p in leaf.ports if p.direction == "up"]
        assert len(down) == 16 and len({p.peer_device for p in down}) == 2
        assert len(up) == 18 and len({p.peer_device for p in up}) == 18  # one to each CTSW of the zone
        assert Fraction(len(down), len(up)) == Fraction(1, Fraction(9, 8))


def test_deep_buffer_ctsw_per_zone_and_atsw_at_7_to_1() -> None:
    plan = _plan()
    spines = [s for s in plan.switches if s.tier == "spine"]
    assert len(spines) == 144 and Counter(s.pod for s in spines) == {zone: 18 for zone in range(8)}
    for spine in spines[:: 13]:
        assert spine.model == "7808R3" and spine.asic == "jericho2"
        down = sum(1 for p in spine.ports if p.direction == "down")
        up = sum(1 for p in spine.ports if p.direction == "up")
        assert (down, up) == (192, 28) and Fraction(down, up) <= 7
        assert spine.ports[0].name == "Ethernet3/1/1"
    supers = [s for s in plan.switches if s.tier == "super_spine"]
    assert len(supers) == 18 and all(sum(1 for _ in s.ports) == 8 * 28 for s in supers)


def test_pfc_only_qp_hashing_and_more_qps() -> None:
    plan = _plan()
    assert plan.qos.cnp is None and plan.qos.roce.lossless and plan.qos.roce.ecn_min is None
    assert all(s.roce_qp_hash for s in plan.switches)
    env = dict(plan.hosts[0].nccl_env)
    assert env["NCCL_IB_QPS_PER_CONNECTION"] == "4"
    assert plan.spec.nic.dcqcn.enabled is False  # Meta: PFC only, no DCQCN
