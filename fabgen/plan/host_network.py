"""Each host's backend network: per RoCE NIC its /31, MTU, own routing table and source rule.

OS-neutral: netplan, NetworkManager keyfiles, sysctl.d and the twin print or
apply these objects; none of them decides an address, a table or an MTU.

Why per-NIC tables: every backend NIC of a host is on its own /31 towards a
different leaf (one per rail), and all of them reach the same backend pools.
With one table the kernel would send everything out of whichever NIC's route
it picked first, so rail r's RoCE traffic (whose source address is rail r's)
would leave by another rail or the frontend. A rule ``from ADDR lookup TABLE``
per NIC sends each source out of its own NIC.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

from fabgen.errors import Problem, SpecError
from fabgen.plan._fast import blank, maker
from fabgen.plan.addressing import BARE
from fabgen.plan.model import (
    BackendInterface,
    Host,
    HostNetwork,
    HostRoute,
    HostRule,
    Link,
    Switch,
)
from fabgen.source import SourceDoc, spec_problem

if TYPE_CHECKING:  # annotations only: importing the pydantic models costs the cached one-device path
    from fabgen.spec import ClusterSpec

ROCE_HEADERS = 40 + 8 + 12 + 4 + 28 + 4
"""Bytes the kernel takes off the netdev MTU before choosing the RoCE MTU.

``iboe_get_mtu()`` (include/rdma/ib_addr.h), which ``mlx5_query_port_roce``
applies to the netdev's MTU for ``active_mtu``, subtracts GRH 40, UDP 8, BTH 12,
XRC 4, AtomicETH 28 and ICRC 4: the largest header set any RoCE packet can carry.
"""

IB_MTUS = (4096, 2048, 1024, 512, 256)

TABLE_BASE = 100
"""A NIC's routing table is ``TABLE_BASE + rail``: stable when hosts or NICs are added, clear of
the kernel's reserved ids (253 default, 254 main, 255 local) for every rail (0..63)."""

RULE_PRIORITY_BASE = 1000
"""A NIC's rule priority is ``RULE_PRIORITY_BASE + rail``: after the ``local`` rule (0),
before ``main`` (32766), and apart from the low numbers other tools tend to use."""


def roce_active_mtu(netdev_mtu: int) -> int:
    """The RoCE MTU mlx5 reports for a netdev MTU (0: too small for any RoCE MTU)."""
    room = netdev_mtu - ROCE_HEADERS
    return next((m for m in IB_MTUS if room >= m), 0)


def default_mtu(roce_mtu: int) -> int:
    """The smallest MTU that is a multiple of 100 and gives ``roce_mtu``; never below Ethernet's 1500.

    4200 for RoCE MTU 4096 (the value NVIDIA's RoCE guides use). A larger netdev
    MTU buys RoCE nothing: the kernel caps the RoCE MTU at 4096.
    """
    need = roce_mtu + ROCE_HEADERS
    return max(1500, -(-need // 100) * 100)


def attach_networks(spec: ClusterSpec, doc: SourceDoc | None, hosts: Iterable[Host], switches: Iterable[Switch],
                    host_links: Mapping[tuple[str, str], Link]) -> tuple[Host, ...]:
    """The hosts with :attr:`Host.network` set; refuses an MTU the leaves or the RoCE MTU cannot take."""
    hosts = tuple(hosts)
    leaf_mtu = {s.name: s.qos.mtu for s in switches if s.tier == "leaf"}
    ceiling: dict[str, tuple[int, str]] = {}  # profile -> (lowest leaf MTU, the first leaf that has it)
    for host in hosts:
        low = ceiling.get(host.profile)
        for nic in host.nics:
            leaf = nic.leaf
            if leaf is None or (mtu := leaf_mtu.get(leaf)) is None:
                continue  # not cabled, or cabled to another tier
            if low is None or mtu < low[0]:
                low = ceiling[host.profile] = (mtu, leaf)
    roce_mtu = spec.nic.roce_mtu
    mtus: dict[str, int] = {}
    problems: list[Problem] = []
    for name, profile in spec.host_profiles.items():
        cap = ceiling.get(name)
        wanted = profile.backend_network.mtu
        if wanted is None:
            mtus[name] = min(default_mtu(roce_mtu), cap[0]) if cap else default_mtu(roce_mtu)
            continue  # a leaf MTU too small for RoCE is the linter's FG3xx finding, not a refusal here
        where = ("host_profiles", name, "backend_network", "mtu")
        if cap is not None and wanted > cap[0]:
            problems.append(spec_problem(doc, f"backend MTU {wanted} is above the MTU {cap[0]} of leaf {cap[1]}, "
                                              "which drops the larger frames", where))
        elif roce_active_mtu(wanted) < roce_mtu:
            problems.append(spec_problem(doc, f"backend MTU {wanted} gives a RoCE MTU of {roce_active_mtu(wanted)}, "
                                              f"below nic.roce_mtu {roce_mtu}: it needs at least "
                                              f"{roce_mtu + ROCE_HEADERS} (RoCE MTU plus {ROCE_HEADERS} header bytes)",
                                         where))
        mtus[name] = wanted
    if problems:
        raise SpecError(problems)
    pools = (str(spec.fabric.addressing.p2p), str(spec.fabric.addressing.loopbacks))
    configs = {name: profile.backend_network.config for name, profile in spec.host_profiles.items()}
    twin, host_class = _HOST_TWIN, Host
    out = []
    roce_mtus = {mtu: roce_active_mtu(mtu) for mtu in mtus.values()}  # one per MTU, not one per host
    for h in hosts:
        mtu = mtus[h.profile]
        network = _host_network(configs[h.profile], h, mtu, roce_mtus[mtu], pools, host_links)
        # replace(h, network=network), built in place (fabgen.plan._fast): every field but the network is h's
        item = twin(h.name, h.profile, h.group, h.pod, h.mgmt, h.nics, h.nccl_env, h.nic_intent, h.description, network)
        item.__class__ = host_class
        out.append(item)
    return tuple(out)


def _host_network(config: Literal["netplan", "networkmanager"], host: Host, mtu: int, roce_mtu: int,
                  pools: tuple[str, str], host_links: Mapping[tuple[str, str], Link]) -> HostNetwork:
    """The host's network; each backend NIC's 5 objects built in place (fabgen.plan._fast.blank), inline: 25k NICs
    at 24k GPUs, where a call per NIC cost a tenth of the hosts' share of the plan."""
    interfaces = []
    p2p, loopbacks = pools
    name, links = host.name, host_links.get
    blank_route, route_class, blank_rule, rule_class = _blank_route, HostRoute, _blank_rule, HostRule
    blank_interface, interface_class = _blank_interface, BackendInterface
    for nic in host.nics:
        rail = nic.rail
        link = links((name, nic.netdev))
        if rail is None or not nic.in_service or link is None:
            continue
        address = link.a_address
        source = address[:BARE]
        gateway = link.b_address[:BARE]
        table = TABLE_BASE + rail
        # The /31 on-link, then both backend pools through the leaf. Spelled out rather than a loop over the
        # pools: 75k routes at 24k GPUs. The /31 is its lower end, the leaf's: every link's ``b`` end has the even
        # address (fabgen.plan.addressing.StableAddresses.links; tests/plan/test_fast.py checks every planned link).
        on_link, via_p2p, via_loopbacks = blank_route(), blank_route(), blank_route()
        on_link.to, on_link.via, on_link.source, on_link.table = link.b_address, None, source, table
        via_p2p.to, via_p2p.via, via_p2p.source, via_p2p.table = p2p, gateway, source, table
        via_loopbacks.to, via_loopbacks.via, via_loopbacks.source, via_loopbacks.table = loopbacks, gateway, source, table
        on_link.__class__ = via_p2p.__class__ = via_loopbacks.__class__ = route_class
        rule = blank_rule()
        rule.priority = RULE_PRIORITY_BASE + rail
        rule.source = f"{source}/32"
        rule.table = table
        rule.__class__ = rule_class
        # BackendInterface(...) with every field, set one by one on its slot twin
        interface = blank_interface()
        interface.nic = nic.name
        interface.netdev = nic.netdev
        interface.rail = rail
        interface.address = address
        interface.gateway = gateway
        interface.mtu = mtu
        interface.table = table
        interface.routes = (on_link, via_p2p, via_loopbacks)
        interface.rule = rule
        interface.leaf = link.b_device
        interface.leaf_port = link.b_port
        interface.__class__ = interface_class
        interfaces.append(interface)
    network = _NETWORK_TWIN(config, mtu, roce_mtu, tuple(interfaces))  # HostNetwork(...), in place
    network.__class__ = HostNetwork
    return network  # type: ignore[no-any-return]


_HOST_TWIN = maker(Host)  # the same twin as fabgen.plan.host_intents' (maker is cached)
_NETWORK_TWIN = maker(HostNetwork)
_blank_route = blank(HostRoute)
_blank_rule = blank(HostRule)
_blank_interface = blank(BackendInterface)
