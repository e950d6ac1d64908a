"""The twin as data (no root needed): namespaces, cables, addresses, shut ports, host tables."""

from __future__ import annotations

from twin_support import LAB, POD32

import fabgen
from fabgen.twin.lifecycle import neigh_targets
from fabgen.twin.names import is_linux_ifname
from fabgen.twin.topology import twin_topology


def test_lab_topology() -> None:
    fabric = fabgen.plan_fabric(fabgen.load_spec(LAB))
    topo = twin_topology(fabric, "fg-test")
    assert len(topo.nodes) == 10 and len(topo.cables) == len(fabric.links) == 32
    assert topo.netns["leaf-r0-p00-01"] == "fg-test-0" and len(set(topo.netns.values())) == 10
    assert topo.ifnames["leaf-r0-p00-01"]["Ethernet17/1"] == "Ethernet17-1"
    for node in topo.nodes:
        names = [i.name for i in node.ifaces]
        assert len(names) == len(set(names)) and all(is_linux_ifname(n) for n in names)
    host_ns = {h.netns for h in topo.hosts}
    assert all(c.b_mtu == 9214 and c.a_mtu == (1500 if c.a_netns in host_ns else 9214) for c in topo.cables)
    # Host NICs start unaddressed and down: their host network files configure them (tests/twin/test_hostfiles.py).
    assert all(i.address is None and not i.up for h in topo.hosts for i in h.ifaces)
    # lab04's mlx5_3 is out of service: its leaf port is shut.
    leaf_port = next(i for i in topo.node("leaf-r3-p00-01").ifaces if i.port == "Ethernet4/1")
    assert not leaf_port.up


def test_pod32_topology_is_deterministic() -> None:
    fabric = fabgen.plan_fabric(fabgen.load_spec(POD32))
    one, two = twin_topology(fabric, "fg-a"), twin_topology(fabric, "fg-a")
    assert one == two
    assert len(one.switches) == 24 and len(one.hosts) == 32 and len(one.cables) == 512
    assert sum(len(h.ifaces) for h in one.hosts) == 256


def test_neighbour_limits_are_raised_only_when_needed_and_never_lowered() -> None:
    assert neigh_targets(32, (128, 512, 4096)) is None
    assert neigh_targets(512, (128, 512, 1024)) == (384, 1536, 3072)
    assert neigh_targets(512, (1000, 2000, 2048)) == (1000, 2000, 3072)
