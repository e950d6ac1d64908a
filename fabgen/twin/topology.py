"""The twin as data: which namespace holds which interface, address and route.

Pure (no I/O): :func:`twin_topology` reads a :class:`~fabgen.plan.FabricPlan`
and decides everything :mod:`fabgen.twin.lifecycle` then creates, so the
decisions are unit-tested without root and ``up`` only executes them.

Hosts: until the host network files of issue 13 exist, a host is configured
from the plan the way those files will configure it: each in-service backend
NIC gets its /31 and MTU, a routing table of its own with the backend
(``fabric.addressing.p2p``) via its leaf peer, and a ``from ADDR`` rule, so a
packet sourced from a NIC leaves by that NIC's rail and no other.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from fabgen.plan import FabricPlan
from fabgen.plan.model import Link, Switch
from fabgen.twin.names import ifname_map, netns_names

HOST_TABLE_BASE = 100
"""Routing table of a host NIC: 100 + its rail (tables 253-255 are the kernel's; 8 rails stay far below)."""
HOST_RULE_PRIORITY_BASE = 1000
"""``from ADDR`` rules sit before the main table's rule (32766), so the source picks the rail."""


@dataclass(frozen=True, slots=True)
class Iface:
    """One end of a cable inside a namespace."""

    name: str
    """Linux name (see :func:`fabgen.twin.names.ifname_map`)."""
    port: str
    """The plan's port or netdev name."""
    address: str | None
    """``10.10.0.0/31``; ``None`` for a host NIC that is out of service (left down, unaddressed)."""
    mtu: int
    up: bool
    """Administratively up: a shut switch port (an out-of-service NIC's leaf port) stays down."""


@dataclass(frozen=True, slots=True)
class HostRoute:
    """A host NIC's own routing table and the rule that selects it by source address."""

    ifname: str
    source: str
    """The NIC's address, no prefix length."""
    gateway: str
    """The leaf end of the NIC's /31."""
    destination: str
    """The backend, ``fabric.addressing.p2p``."""
    table: int
    priority: int


@dataclass(frozen=True, slots=True)
class Node:
    device: str
    kind: Literal["switch", "host"]
    netns: str
    loopback: str | None
    ifaces: tuple[Iface, ...]
    routes: tuple[HostRoute, ...] = ()


@dataclass(frozen=True, slots=True)
class Cable:
    """A veth pair: ``a`` is the lower end (host or lower switch), as in :class:`~fabgen.plan.model.Link`."""

    a_netns: str
    a_ifname: str
    b_netns: str
    b_ifname: str
    a_mtu: int
    b_mtu: int
    link: Link


@dataclass(frozen=True)
class TwinTopology:
    prefix: str
    nodes: tuple[Node, ...]
    cables: tuple[Cable, ...]
    netns: dict[str, str]
    """``{device: namespace}``."""
    ifnames: dict[str, dict[str, str]]
    """``{device: {port: linux name}}``."""

    def node(self, device: str) -> Node:
        for node in self.nodes:
            if node.device == device:
                return node
        raise KeyError(device)

    @property
    def switches(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.kind == "switch")

    @property
    def hosts(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.kind == "host")


def _port_shut(switch: Switch, port: str, nic_in_service: dict[tuple[str, str], bool]) -> bool:
    for p in switch.ports:
        if p.name == port:
            if p.shutdown:
                return True
            return p.peer_kind == "host" and not nic_in_service.get((p.peer_device, p.peer_port), True)
    return False


def twin_topology(fabric: FabricPlan, prefix: str) -> TwinTopology:
    """Namespaces, interfaces, cables and host routes for ``fabric`` under ``prefix``."""
    devices = [s.name for s in fabric.switches] + [h.name for h in fabric.hosts]
    netns = netns_names(prefix, devices)
    ports: dict[str, list[str]] = {d: [] for d in devices}
    for link in fabric.links:
        ports[link.a_device].append(link.a_port)
        ports[link.b_device].append(link.b_port)
    ifnames = {device: ifname_map(names) for device, names in ports.items()}
    in_service = {(h.name, n.netdev): n.in_service for h in fabric.hosts for n in h.nics}
    host_names = {h.name for h in fabric.hosts}
    backend = str(fabric.spec.fabric.addressing.p2p)

    ifaces: dict[str, list[Iface]] = {d: [] for d in devices}
    cables: list[Cable] = []
    for link in fabric.links:
        b_switch = fabric.switch(link.b_device)
        b_mtu = b_switch.qos.mtu
        if link.a_device in host_names:
            a_mtu = b_mtu  # the host NIC's MTU: the switch port's until the host network plan sets its own
            a_up = in_service.get((link.a_device, link.a_port), True)
        else:
            a_mtu = fabric.switch(link.a_device).qos.mtu
            a_up = not _port_shut(fabric.switch(link.a_device), link.a_port, in_service)
        b_up = not _port_shut(b_switch, link.b_port, in_service)
        a_if, b_if = ifnames[link.a_device][link.a_port], ifnames[link.b_device][link.b_port]
        ifaces[link.a_device].append(Iface(a_if, link.a_port, link.a_address if a_up else None, a_mtu, a_up))
        ifaces[link.b_device].append(Iface(b_if, link.b_port, link.b_address, b_mtu, b_up))
        cables.append(Cable(netns[link.a_device], a_if, netns[link.b_device], b_if, a_mtu, b_mtu, link))

    nodes: list[Node] = [
        Node(s.name, "switch", netns[s.name], s.loopback, tuple(ifaces[s.name])) for s in fabric.switches
    ]
    uplink = {(link.a_device, link.a_port): link for link in fabric.links}
    for host in fabric.hosts:
        routes: list[HostRoute] = []
        for nic in host.nics:
            if not nic.in_service or nic.address is None or nic.rail is None or nic.leaf is None:
                continue
            peer = uplink.get((host.name, nic.netdev))
            if peer is None:
                continue
            routes.append(HostRoute(
                ifname=ifnames[host.name][nic.netdev],
                source=str(ipaddress.ip_interface(nic.address).ip),
                gateway=str(ipaddress.ip_interface(peer.b_address).ip),
                destination=backend,
                table=HOST_TABLE_BASE + nic.rail,
                priority=HOST_RULE_PRIORITY_BASE + nic.rail,
            ))
        nodes.append(Node(host.name, "host", netns[host.name], None, tuple(ifaces[host.name]), tuple(routes)))
    return TwinTopology(prefix, tuple(nodes), tuple(cables), netns, ifnames)
