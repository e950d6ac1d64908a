"""The host network plan: per backend NIC its /31, gateway, MTU, table, routes and rule."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.plan.host_network import ROCE_HEADERS, default_mtu, roce_active_mtu
from tests.helpers import EXAMPLE_NAMES, edited, example


def _plan(edit: Any = None, name: str = "lab") -> FabricPlan:
    return plan_fabric(load_spec(edited(edit or (lambda d: None), name)))


def test_kernel_mtu_arithmetic() -> None:
    # iboe_get_mtu: netdev MTU minus 96 header bytes, rounded down to an IB MTU.
    assert ROCE_HEADERS == 96
    assert roce_active_mtu(1500) == 1024  # the measured default
    assert roce_active_mtu(4191) == 2048 and roce_active_mtu(4192) == 4096
    assert roce_active_mtu(9000) == 4096 and roce_active_mtu(300) == 0
    assert default_mtu(4096) == 4200 and default_mtu(1024) == 1500


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_in_service_backend_nic_is_planned(name: str) -> None:
    plan = plan_fabric(load_spec(example(name)))
    links = {(link.a_device, link.a_port): link for link in plan.links if link.role == "host-leaf"}
    for host in plan.hosts[:64]:
        assert host.network is not None
        wanted = [n for n in host.nics if n.rail is not None and n.in_service]
        assert [i.nic for i in host.network.interfaces] == [n.name for n in wanted]
        for iface, nic in zip(host.network.interfaces, wanted, strict=True):
            link = links[(host.name, nic.netdev)]
            leaf_port = next(p for p in plan.switch(link.b_device).ports if p.name == link.b_port)
            assert iface.address == nic.address == leaf_port.peer_address + "/31"
            assert iface.gateway == leaf_port.address.partition("/")[0]
            net = ipaddress.ip_interface(iface.address).network
            assert ipaddress.ip_address(iface.gateway) in net
            assert iface.table == 100 + nic.rail and iface.rule.priority == 1000 + nic.rail
            assert iface.rule.source == iface.address.replace("/31", "/32") and iface.rule.table == iface.table
            assert [r.to for r in iface.routes] == [str(net), str(plan.spec.fabric.addressing.p2p),
                                                    str(plan.spec.fabric.addressing.loopbacks)]
            assert iface.routes[0].via is None and all(r.via == iface.gateway for r in iface.routes[1:])
            assert {r.table for r in iface.routes} == {iface.table}
            assert iface.mtu <= plan.switch(iface.leaf).qos.mtu
        assert host.network.roce_mtu == plan.spec.nic.roce_mtu


def test_out_of_service_nic_is_not_configured() -> None:
    lab04 = _plan().host("lab04")
    assert lab04.network is not None
    assert [i.nic for i in lab04.network.interfaces] == ["mlx5_0", "mlx5_1", "mlx5_2"]


def test_table_follows_the_rail_not_the_order() -> None:
    def reverse(data: dict[str, Any]) -> None:
        data["host_profiles"]["lab-node"]["nics"].reverse()

    before, after = _plan().host("lab01").network, _plan(reverse).host("lab01").network
    assert before is not None and after is not None
    assert [(i.netdev, i.table) for i in before.interfaces] == [(i.netdev, i.table) for i in after.interfaces]


def test_default_mtu_gives_roce_4096_and_stays_under_the_switch() -> None:
    network = _plan().host("lab01").network
    assert network is not None and network.mtu == 4200 and network.roce_mtu == 4096

    def small_switch(data: dict[str, Any]) -> None:
        data["qos"]["mtu"] = 1500

    capped = _plan(small_switch).host("lab01").network
    assert capped is not None and capped.mtu == 1500  # the linter reports the switch MTU (FG3xx)


def test_explicit_mtu_is_used() -> None:
    def jumbo(data: dict[str, Any]) -> None:
        data["host_profiles"]["lab-node"]["backend_network"] = {"mtu": 9000, "config": "networkmanager"}

    network = _plan(jumbo).host("lab02").network
    assert network is not None and network.mtu == 9000 and network.config == "networkmanager"
    assert {i.mtu for i in network.interfaces} == {9000}


@pytest.mark.parametrize(("mtu", "message"), [
    (9216, "backend MTU 9216 is above the MTU 9214 of leaf leaf-r0-p00-01"),
    (4000, "backend MTU 4000 gives a RoCE MTU of 2048, below nic.roce_mtu 4096: it needs at least 4192"),
])
def test_bad_mtu_is_refused_at_its_line(mtu: int, message: str) -> None:
    text = edited(lambda d: d["host_profiles"]["lab-node"].__setitem__("backend_network", {"mtu": mtu}))
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip() == f"mtu: {mtu}")
    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(text))
    [problem] = info.value.problems
    assert message in problem.message and problem.line == line
