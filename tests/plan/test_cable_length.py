"""Cable lengths: one for every link, one per link role, or a cable's own; carried on links and switch ports.

The length sizes a lossless port's PFC headroom, so a 3 m host DAC must not be
sized like a 40 m uplink; consumers that take one length per switch keep the
longest (byte-identical output for the scalar form).
"""

from __future__ import annotations

from typing import Any

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.sonic.config_db import config_db
from tests.helpers import edited, example


def test_scalar_applies_to_every_port() -> None:
    fabric = plan_fabric(load_spec(example("lab")))
    lengths = {p.cable_m for s in fabric.switches for p in s.ports}
    assert lengths == {fabric.qos.cable_length_m}
    assert all(link.length_m is None for link in fabric.links)


def test_roles_size_each_port_by_its_link() -> None:
    fabric = plan_fabric(load_spec(example("sonic-pod")))  # {host_leaf: 3m, leaf_spine: 40m}
    assert fabric.qos.cable_length_m == 40  # the longest, for one-length consumers
    for switch in fabric.switches:
        for port in switch.ports:
            expected = 3 if port.peer_kind == "host" else 40
            assert port.cable_m == expected, (switch.name, port.name)


def test_a_cables_own_length_wins_on_both_ends() -> None:
    def cable(data: dict[str, Any]) -> None:
        data["fabric"]["cabling"] = [{"a": "gpu01:ens1np0", "b": "leaf-r0-p00-01:Ethernet0", "length": "7m"},
                                     {"a": "leaf-r1-p00-01:Ethernet256", "b": "spine-01:Ethernet4"}]

    fabric = plan_fabric(load_spec(edited(cable, "sonic-pod")))
    link = next(x for x in fabric.links if x.a_device == "gpu01" and x.a_port == "ens1np0")
    assert link.explicit and link.length_m == 7
    leaf = fabric.switch("leaf-r0-p00-01")
    assert next(p for p in leaf.ports if p.name == "Ethernet0").cable_m == 7
    assert config_db(fabric, leaf)["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "7m"
    # An explicit cable without a length takes its role's.
    spine = fabric.switch("spine-01")
    assert next(p for p in spine.ports if p.name == "Ethernet4").cable_m == 40


def test_switch_override_policy_sets_its_own_lengths() -> None:
    def override(data: dict[str, Any]) -> None:
        qos = dict(data["qos"], cable_length={"host_leaf": "2m", "leaf_spine": "100m"})
        data["fabric"]["switch_overrides"] = [{"match": "spine-*", "qos": qos}]

    fabric = plan_fabric(load_spec(edited(override, "sonic-pod")))
    assert {p.cable_m for p in fabric.switch("spine-01").ports} == {100}
    assert {p.cable_m for p in fabric.switch("leaf-r0-p00-01").ports if p.direction == "up"} == {40}


def test_longest_is_over_the_roles_the_fabric_has() -> None:
    def short(data: dict[str, Any]) -> None:
        data["qos"]["cable_length"] = {"host_leaf": "2m", "leaf_spine": "3m"}  # spine_super_spine: default 5 m

    fabric = plan_fabric(load_spec(edited(short, "sonic-pod")))  # 2 tiers: no spine-super-spine link
    assert fabric.qos.cable_length_m == 3
