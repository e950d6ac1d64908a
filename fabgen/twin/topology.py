"""The twin as data: which namespace holds which interface, address and route.

Pure (no I/O): :func:`twin_topology` reads a :class:`~fabgen.plan.FabricPlan`
and decides everything :mod:`fabgen.twin.lifecycle` then creates, so the
decisions are unit-tested without root and ``up`` only executes them.

Hosts are not configured from here: each host's interfaces are created
unaddressed and down, and :mod:`fabgen.twin.hostfiles` then applies what the
host's rendered network files say (addresses, MTU, tables, rules, sysctls), so
a bug in those files is a twin that does not route.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabgen.plan import FabricPlan
from fabgen.plan.model import Link, Switch
from fabgen.twin.names import ifname_map, netns_names

HOST_NIC_MTU = 1500
"""A host end's MTU at creation, a real NIC's default: a host file that sets no MTU leaves it there."""


@dataclass(frozen=True, slots=True)
class Iface:
    """One end of a cable inside a namespace."""

    name: str
    """Linux name (see :func:`fabgen.twin.names.ifname_map`)."""
    port: str
    """The plan's port or netdev name."""
    address: str | None
    """``10.10.0.0/31``; ``None`` on a host (its files address it)."""
    mtu: int
    up: bool
    """Administratively up at creation: a shut switch port (an out-of-service NIC's leaf port) stays down,
    and a host NIC waits for its files."""


@dataclass(frozen=True, slots=True)
class Node:
    device: str
    kind: Literal["switch", "host"]
    netns: str
    loopback: str | None
    ifaces: tuple[Iface, ...]


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
    """Namespaces, interfaces and cables for ``fabric`` under ``prefix``."""
    devices = [s.name for s in fabric.switches] + [h.name for h in fabric.hosts]
    netns = netns_names(prefix, devices)
    ports: dict[str, list[str]] = {d: [] for d in devices}
    for link in fabric.links:
        ports[link.a_device].append(link.a_port)
        ports[link.b_device].append(link.b_port)
    ifnames = {device: ifname_map(names) for device, names in ports.items()}
    in_service = {(h.name, n.netdev): n.in_service for h in fabric.hosts for n in h.nics}
    host_names = {h.name for h in fabric.hosts}

    ifaces: dict[str, list[Iface]] = {d: [] for d in devices}
    cables: list[Cable] = []
    for link in fabric.links:
        b_switch = fabric.switch(link.b_device)
        b_mtu = b_switch.qos.mtu
        a_if, b_if = ifnames[link.a_device][link.a_port], ifnames[link.b_device][link.b_port]
        if link.a_device in host_names:
            a_mtu, a_up, a_address = HOST_NIC_MTU, False, None
        else:
            a_mtu = fabric.switch(link.a_device).qos.mtu
            a_up = not _port_shut(fabric.switch(link.a_device), link.a_port, in_service)
            a_address = link.a_address
        b_up = not _port_shut(b_switch, link.b_port, in_service)
        ifaces[link.a_device].append(Iface(a_if, link.a_port, a_address, a_mtu, a_up))
        ifaces[link.b_device].append(Iface(b_if, link.b_port, link.b_address, b_mtu, b_up))
        cables.append(Cable(netns[link.a_device], a_if, netns[link.b_device], b_if, a_mtu, b_mtu, link))

    nodes: list[Node] = [
        Node(s.name, "switch", netns[s.name], s.loopback, tuple(ifaces[s.name])) for s in fabric.switches
    ]
    nodes += [Node(h.name, "host", netns[h.name], None, tuple(ifaces[h.name])) for h in fabric.hosts]
    return TwinTopology(prefix, tuple(nodes), tuple(cables), netns, ifnames)
