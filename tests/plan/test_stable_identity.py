"""Stable identity: a local change (two swapped cables, a ratio change) stays local in ``fabgen diff``.

Addresses come from positions (``fabgen.plan.addressing``), so these tests hold
the blast radius of a change to exactly the devices whose cabling changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabgen.diff import diff_specs
from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric
from tests.helpers import edited

Devices = set[tuple[str, str]]


def _changed(old: str, new: str, tmp_path: Path) -> Devices:
    (tmp_path / "old.yaml").write_text(old)
    (tmp_path / "new.yaml").write_text(new)
    result = diff_specs(load_spec(tmp_path / "old.yaml"), load_spec(tmp_path / "new.yaml"))
    return {(d.kind, d.device) for d in result.devices}


def _moved_hosts(old: str, new: str) -> set[str]:
    """Hosts any of whose NIC addresses or leaf ports differ between the two plans."""
    before, after = plan_fabric(load_spec(old)), plan_fabric(load_spec(new))
    return {h.name for h in after.hosts
            if [(n.address, n.leaf, n.leaf_port) for n in h.nics]
            != [(n.address, n.leaf, n.leaf_port) for n in before.host(h.name).nics]}


def _assert_local(changed: Devices, leaf: str, hosts: set[str]) -> None:
    """The leaf and the cluster files change; host files may (when a host target prints its /31), nothing else."""
    assert {("switch", leaf), ("cluster", "")} <= changed
    assert changed <= {("switch", leaf), ("cluster", ""), *(("host", h) for h in hosts)}


def _swap(a: str, b: str, leaf: str, port_a: str, port_b: str) -> list[dict[str, str]]:
    """Host ``a`` lands on ``port_b`` and host ``b`` on ``port_a``: a technician crossed two cables."""
    return [{"a": a, "b": f"{leaf}:{port_b}"}, {"a": b, "b": f"{leaf}:{port_a}"}]


def _cluster_files(tmp_path: Path, old: str, new: str) -> set[str]:
    (tmp_path / "o.yaml").write_text(old)
    (tmp_path / "n.yaml").write_text(new)
    result = diff_specs(load_spec(tmp_path / "o.yaml"), load_spec(tmp_path / "n.yaml"))
    return {f.path for d in result.devices if d.kind == "cluster" for f in d.files}


def test_lab_two_cable_swap_touches_one_leaf_two_hosts(tmp_path: Path) -> None:
    cables = _swap("lab01:ens1np0", "lab02:ens1np0", "leaf-r0-p00-01", "Ethernet1/1", "Ethernet2/1")
    old = edited(lambda d: None)
    new = edited(lambda d: d["fabric"].update(cabling=cables))
    _assert_local(_changed(old, new, tmp_path), "leaf-r0-p00-01", {"lab01", "lab02"})
    assert _moved_hosts(old, new) == {"lab01", "lab02"}
    # cluster-wide records of the cabling: the CSV, NetBox's interfaces (their peers), cables and addresses
    assert _cluster_files(tmp_path, old, new) <= {"cabling.csv", "manifest.json", "inventory.yml", "inventory.json",
                                                  "netbox/6-interfaces.csv", "netbox/7-cables.csv",
                                                  "netbox/8-ip-addresses.csv"}


def _pod256(d: dict[str, Any]) -> None:
    """llama3-24k cut to 256 hosts on a 2-tier fabric: the size of the issue's measurement."""
    d["hosts"][0]["count"] = 256
    tiers = d["fabric"]["tiers"]
    tiers.pop("super_spine")
    tiers["spine"]["ports"] = 128  # 64 leaves need 64-port-plus spines at 1:1 and 2:1


def test_256_hosts_two_cable_swap_touches_one_leaf_two_hosts(tmp_path: Path) -> None:
    old = edited(_pod256, "llama3-24k")
    plan = plan_fabric(load_spec(old))
    leaf = plan.host("gt00001").nics[3].leaf
    assert leaf is not None
    port_a, port_b = plan.host("gt00001").nics[3].leaf_port, plan.host("gt00002").nics[3].leaf_port
    netdev = plan.host("gt00001").nics[3].netdev
    cables = _swap(f"gt00001:{netdev}", f"gt00002:{netdev}", leaf, str(port_a), str(port_b))

    def swapped(d: dict[str, Any]) -> None:
        _pod256(d)
        d["fabric"]["cabling"] = cables

    new = edited(swapped, "llama3-24k")
    _assert_local(_changed(old, new, tmp_path), leaf, {"gt00001", "gt00002"})
    assert _moved_hosts(old, new) == {"gt00001", "gt00002"}


def test_ratio_change_moves_no_host_management_address() -> None:
    one = plan_fabric(load_spec(edited(_pod256, "llama3-24k")))

    def two_to_one(d: dict[str, Any]) -> None:
        _pod256(d)
        d["fabric"]["oversubscription"] = "2:1"

    two = plan_fabric(load_spec(edited(two_to_one, "llama3-24k")))
    assert len(two.switches) != len(one.switches)  # the change is real: fewer spines
    assert [h.mgmt for h in one.hosts] == [h.mgmt for h in two.hosts]
    assert one.hosts[0].mgmt is not None


def test_addresses_follow_positions_not_order() -> None:
    plan = plan_fabric(load_spec(edited(lambda d: None)))
    # leaf-r1-p00-01 is leaf position 1 (pod 0, leaf 0, rail 1): its block of 32 /31s starts at 10.10.0.64.
    leaf = plan.switch("leaf-r1-p00-01")
    port1 = next(p for p in leaf.ports if p.index == 1)
    assert port1.address == "10.10.0.64/31" and port1.peer_address == "10.10.0.65"
    assert leaf.loopback == "10.255.0.2/32"
    assert plan.switch("spine-01").loopback == "10.255.0.5/32"
    assert plan.host("lab01").mgmt == "192.0.2.1/24"
    assert plan.switch("leaf-r0-p00-01").mgmt == "192.0.2.5/24"


def test_removing_a_host_moves_no_other_address() -> None:
    """lab04 leaves the lab: every other device keeps its loopback, management and link addresses."""
    four = plan_fabric(load_spec(edited(lambda d: None)))

    def three_hosts(d: dict[str, Any]) -> None:
        d["hosts"][0].update(count=3)
        d["hosts"][0].pop("overrides")

    three = plan_fabric(load_spec(edited(three_hosts)))
    for host in three.hosts:
        assert host == four.host(host.name)
    for switch in three.switches:
        assert (switch.loopback, switch.mgmt) == (four.switch(switch.name).loopback, four.switch(switch.name).mgmt)


@pytest.mark.parametrize(("pool", "field", "needs"), [
    ("10.255.0.0/30", "loopbacks", "leaves 4 (block of 4), spines 2 (block of 2)"),
    ("192.0.2.0/29", "mgmt", "hosts 4 (block of 4), leaves 4 (block of 4)"),
])
def test_pool_too_small_for_the_layout_is_refused_at_its_line(pool: str, field: str, needs: str) -> None:
    text = edited(lambda d: d["fabric"]["addressing"].update({field: pool}))
    line = next(n for n, row in enumerate(text.splitlines(), 1) if pool in row)
    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(text))
    (problem,) = info.value.problems
    assert problem.line == line and needs in problem.message and pool in problem.message


def test_cable_outside_the_port_scheme_takes_a_free_31_from_the_top() -> None:
    """The lab's /24 is all leaf-port blocks; a cable on a breakout lane still gets the top /31 no port uses."""
    cables = [{"a": "lab01:ens1np0", "b": "leaf-r0-p00-01:Ethernet1/2"}]
    plan = plan_fabric(load_spec(edited(lambda d: d["fabric"].update(cabling=cables))))
    (link,) = [link for link in plan.links if link.explicit]
    assert (link.b_address, link.a_address) == ("10.10.0.254/31", "10.10.0.255/31")
    other = [link.b_address for link in plan.links if not link.explicit]
    assert len(set(other)) == len(other) and link.b_address not in other
