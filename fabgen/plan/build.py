"""Spec -> plan: expand hosts, lay out the Clos, cable it, address it, derive intents.

Pure: no I/O, the spec is never changed. The only module that knows topology.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import repeat

from fabgen._gc import paused_gc
from fabgen.errors import Problem, SpecError
from fabgen.plan._fast import blank
from fabgen.plan.addressing import BARE, StableAddresses
from fabgen.plan.cabling import ExplicitCabling
from fabgen.plan.host_intents import HostMemo, host_plan, profile_nccl_environment
from fabgen.plan.host_network import attach_networks
from fabgen.plan.layout import Layout, TierShape, size_fabric
from fabgen.plan.model import (
    BgpNeighbor,
    FabricPlan,
    Link,
    QosIntent,
    Switch,
    SwitchPort,
)
from fabgen.plan.nic import firmware_intents
from fabgen.plan.pins import apply_pins, renames
from fabgen.plan.ports import model_port_index, model_port_lanes, model_port_name
from fabgen.plan.qos import ROLES, qos_intent
from fabgen.plan.routing import BgpPlan, bgp_intent, bgp_plan, out_of_service_nics, same_asn_problems, shut_ports
from fabgen.plan.slots import HostSlot, RawLink, SwitchSlot
from fabgen.source import DataPath, SourceDoc, spec_problem
from fabgen.spec import ClusterSpec
from fabgen.spec.fabric import Tier
from fabgen.targets.sonic.sku import SKUS, lanes_per_port, resolve_hwsku


@paused_gc(promote=True)
def build_plan(spec: ClusterSpec, doc: SourceDoc | None = None) -> FabricPlan:
    hosts = _expand_hosts(spec)
    tiers = spec.fabric.tiers
    nic_speed = max(n.speed for p in spec.host_profiles.values() for n in p.nics if n.rail is not None)
    try:
        layout = size_fabric(
            len(hosts), spec.fabric.rails, nic_speed,
            TierShape(tiers.leaf.ports, tiers.leaf.speed, tiers.leaf.count),
            TierShape(tiers.spine.ports, tiers.spine.speed, tiers.spine.count),
            TierShape(tiers.super_spine.ports, tiers.super_spine.speed) if tiers.super_spine else None,
            spec.fabric.tier_ratio("leaf"), spec.fabric.tier_ratio("spine"),
            hosts_per_rack=spec.fabric.hosts_per_rack, hosts_per_zone=spec.fabric.hosts_per_zone,
        )
    except SpecError as exc:
        raise _relocate(exc, doc, ("fabric", "tiers")) from None
    _refuse_by_size(spec, layout, doc)

    switch_slots, raw = _layout_links(spec, hosts, layout)
    host_names = [h.name for h in hosts]
    renamed = renames(spec, doc, (s.name for s in switch_slots), host_names) if spec.fabric.devices else {}
    if renamed:
        switch_slots, raw = _rename(switch_slots, raw, renamed)
    names = {s.name for s in switch_slots}
    clash = sorted(names & {h.name for h in hosts})
    if clash:
        raise _relocate(SpecError([Problem(f"host name {clash[0]} is also the name of a switch", file="hosts")]),
                        doc, ("hosts",))
    cabling = ExplicitCabling(spec, doc, {h.name: h.profile for h in hosts}, {s.name: s for s in switch_slots})
    raw = cabling.apply(raw)
    lengths = {(end.split(":", 1)[0], end.split(":", 1)[1]): c.length
               for c in spec.fabric.cabling if c.length is not None for end in (c.a, c.b)}
    addresses = StableAddresses(spec, layout, switch_slots, doc)
    if spec.fabric.devices or spec.ipam_rows:
        apply_pins(spec, doc, addresses, renamed, host_names)
    links = addresses.links(raw, lengths)
    del raw  # 74k tuples at 24k GPUs, dead now: their memory takes the switch ports instead of fresh pages

    roles = ROLES if spec.fabric.tiers.super_spine else ROLES[:2]
    default_qos = qos_intent(spec.qos, roles)
    bgp = bgp_plan(spec, switch_slots, doc)
    switches = tuple(_switches(spec, switch_slots, links, default_qos, addresses, bgp))
    if bgp is not None and (problems := same_asn_problems(bgp, switches, doc)):
        raise SpecError(problems)
    host_links = {}
    for link in links:
        if link.role == "host-leaf":
            host_links[(link.a_device, link.a_port)] = link
    pods = {h.name: i // layout.hosts_per_pod for i, h in enumerate(hosts)} if layout.hosts_per_pod else {}
    host_memo = HostMemo()
    try:
        planned_hosts = tuple(
            host_plan(spec, slot.name, slot.profile, slot.group, slot.override, pods.get(slot.name, 0),
                      addresses.host_mgmt(i, slot.name), host_links, default_qos, host_memo)
            for i, slot in enumerate(hosts)
        )
        firmware = firmware_intents(spec, default_qos)
    except ValueError as exc:  # a NIC setting the driver cannot take (the intents refuse it)
        raise _relocate(SpecError([Problem(f"NIC policy cannot be applied: {exc}", file="nic")]), doc, ("nic",)) from None
    planned_hosts = attach_networks(spec, doc, planned_hosts, switches, host_links)
    nccl_env = {p: profile_nccl_environment(spec, p, default_qos, host_memo) for p in sorted({h.profile for h in hosts})}
    return FabricPlan(spec=spec, source=doc, layout=layout, hosts=planned_hosts, switches=switches,
                      links=tuple(links), qos=default_qos, firmware=firmware, nccl_env=nccl_env)


def _refuse_by_size(spec: ClusterSpec, layout: Layout, doc: SourceDoc | None) -> None:
    """Refuse now what the layout's numbers alone decide, before the links are built.

    Why: at 200k hosts the links are 1.6 million objects, a minute and gigabytes,
    and a pool too small for the layout or an ECMP width the switch OS cannot
    configure was certain from the sizes. Both checks are the very ones the
    built plan would meet, with the same message at the same spec line: the
    pools are carved by :class:`StableAddresses` itself (its blocks depend on
    the layout, not on the switches, and the carving is thrown away: the one
    kept is made below once the switches exist), and the targets' early limits
    (:func:`fabgen.targets.registry.layout_limit_problems`) share their rule with
    the targets' plan limits.
    """
    StableAddresses(spec, layout, (), doc)
    from fabgen.targets.registry import layout_limit_problems  # not at import: the registry imports the plan

    problems = layout_limit_problems(spec, layout, doc)
    if problems:
        raise SpecError(problems)


def _rename(slots: list[SwitchSlot], raw: list[RawLink], renamed: dict[str, str]
            ) -> tuple[list[SwitchSlot], list[RawLink]]:
    """Pinned switch names in place of the planner's; positions (and so addresses and ASNs) stay."""
    get = renamed.get
    slots = [replace(s, name=get(s.name, s.name)) for s in slots]
    raw = [(get(a, a), ap, get(b, b), bp, role, rail, speed, explicit)
           for a, ap, b, bp, role, rail, speed, explicit in raw]
    return slots, raw


def _relocate(exc: SpecError, doc: SourceDoc | None, path: DataPath) -> SpecError:
    """The planner's refusal, at the spec line an operator has to change."""
    return SpecError([spec_problem(doc, p.message, path) for p in exc.problems]) if doc else exc


def _expand_hosts(spec: ClusterSpec) -> list[HostSlot]:
    hosts: list[HostSlot] = []
    for index, group in enumerate(spec.hosts):
        hosts.extend(HostSlot(name, group.profile, index, group.overrides.get(name)) for name in group.host_names())
    return hosts


@cache
def _leaf_name(pod: int, rail: int, index: int) -> str:
    return f"leaf-r{rail}-p{pod:02d}-{index + 1:02d}"


@cache
def _rack_leaf_name(pod: int, rack: int) -> str:
    return f"leaf-p{pod:02d}-rack{rack + 1:03d}"


@cache
def _spine_name(pod: int, index: int, three_tier: bool) -> str:
    return f"spine-p{pod:02d}-{index + 1:02d}" if three_tier else f"spine-{index + 1:02d}"


@cache
def _super_name(plane: int, index: int) -> str:
    return f"super-pl{plane:02d}-{index + 1:02d}"


@dataclass(frozen=True, slots=True)
class TierSku:
    """What a tier's SONiC SKU fixes in the plan (all None on other OSes)."""

    hwsku: str | None = None
    platform: str | None = None
    width: int | None = None


def tier_sku(tier: Tier) -> TierSku:
    """The tier's SONiC SKU; an unknown one plans with the default port rule and is refused by the target's limits."""
    if tier.os != "sonic":
        return TierSku()
    name = resolve_hwsku(tier.model, tier.hwsku)
    sku = SKUS.get(name)
    if sku is None:
        return TierSku(name)
    return TierSku(name, sku.platform, lanes_per_port(sku, tier.speed))


def _layout_links(spec: ClusterSpec, hosts: list[HostSlot], layout: Layout) -> tuple[list[SwitchSlot], list[RawLink]]:
    tiers = spec.fabric.tiers
    leaf_w, spine_w = tier_sku(tiers.leaf).width, tier_sku(tiers.spine).width
    rails = spec.fabric.rails
    three = layout.tiers == 3
    per_pod = layout.hosts_per_pod
    per_leaf = layout.hosts_per_leaf

    # Leaves that carry at least one host, per pod.
    leaves_in_pod: dict[int, int] = {}
    for i in range(len(hosts)):
        pod, slot = divmod(i, per_pod)
        leaves_in_pod[pod] = max(leaves_in_pod.get(pod, 0), slot // per_leaf + 1)

    rack = layout.rack
    groups = layout.groups

    def leaf_name(pod: int, rail: int, j: int) -> str:
        return _rack_leaf_name(pod, j) if rack else _leaf_name(pod, rail, j)

    slots: list[SwitchSlot] = []
    for pod in range(layout.pods):
        for group in range(groups):
            for j in range(leaves_in_pod.get(pod, 0)):
                slots.append(SwitchSlot(leaf_name(pod, group, j), "leaf", pod, None if rack else group, None, j))
    for pod in range(layout.pods):
        for s in range(layout.spines_per_pod):
            slots.append(SwitchSlot(_spine_name(pod, s, three), "spine", pod if three else None, None, s if three else None,
                                    s))
    if three:
        for plane in range(layout.planes):
            for m in range(layout.supers_per_plane):
                slots.append(SwitchSlot(_super_name(plane, m), "super_spine", None, None, plane, m))

    # Hot loops (74k links at 24k GPUs, 800k at 262k): port names come from per-tier tables, and each host's,
    # leaf's and spine's links are made at once by one ``zip`` over slices of those tables and ``repeat``s of
    # what the links share (RawLink): C iterators, no Python bytecode per link.
    leaf_names = _port_names(tiers.leaf, leaf_w, max(layout.leaf_downlinks,
                                                     layout.leaf_uplink_start + layout.spines_per_pod * layout.leaf_spine_links - 1))
    raw: list[RawLink] = []
    extend = raw.extend
    # Per profile its backend NICs' netdevs, rails and speeds, as the columns of its hosts' links.
    profiles: dict[str, tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]] = {}
    for profile_name, profile in spec.host_profiles.items():
        nics = profile.backend_nics()
        nic_rails = tuple(nic.rail for nic in nics if nic.rail is not None)
        assert len(nic_rails) == len(nics)
        profiles[profile_name] = (tuple(nic.netdev for nic in nics), nic_rails,
                                  tuple(min(nic.speed, tiers.leaf.speed) for nic in nics))
    where: tuple[int, int] | None = None
    leaves: list[str] = []
    for i, host in enumerate(hosts):
        pod, slot = divmod(i, per_pod)
        leaf_index, port = divmod(slot, per_leaf)
        if where != (pod, leaf_index):
            where = (pod, leaf_index)
            leaves = [leaf_name(pod, rail, leaf_index) for rail in range(rails)]
        netdevs, nic_rails, speeds = profiles[host.profile]
        count = len(netdevs)
        # A rack's leaf takes its hosts one after the other, each host's NICs in rail order; a rail's leaf
        # takes each host on one port.
        ports = ([leaf_names[port * rails + nic_rail + 1] for nic_rail in nic_rails] if rack
                 else repeat(leaf_names[port + 1], count))
        extend(zip(repeat(host.name, count), netdevs, map(leaves.__getitem__, nic_rails), ports,
                   repeat("host-leaf", count), nic_rails, speeds, repeat(False, count), strict=True))

    k1 = layout.leaf_spine_links
    ls_speed = min(tiers.leaf.speed, tiers.spine.speed)
    spine_names = _port_names(tiers.spine, spine_w, max(
        groups * layout.leaves_per_rail * k1,
        layout.spine_uplink_start + layout.supers_per_plane * layout.spine_super_links - 1))
    # A leaf's uplinks, spine by spine and k1 per spine: its ports from leaf_uplink_start on, the spines each
    # k1 times, and on every spine the k1 ports of the leaf's position.
    uplinks = layout.spines_per_pod * k1
    leaf_ups = leaf_names[layout.leaf_uplink_start:layout.leaf_uplink_start + uplinks]
    for pod in range(layout.pods):
        count = leaves_in_pod.get(pod, 0)
        spines = tuple(_spine_name(pod, s, three) for s in range(layout.spines_per_pod) for _ in range(k1))
        for rail in range(groups):
            link_rail = None if rack else rail
            for j in range(count):
                first = 1 + (rail * layout.leaves_per_rail + j) * k1
                extend(zip(repeat(leaf_name(pod, rail, j), uplinks), leaf_ups, spines,
                           spine_names[first:first + k1] * layout.spines_per_pod, repeat("leaf-spine", uplinks),
                           repeat(link_rail, uplinks), repeat(ls_speed, uplinks), repeat(False, uplinks), strict=True))
    if three:
        sup = tiers.super_spine
        assert sup is not None
        k2 = layout.spine_super_links
        ss_speed = min(tiers.spine.speed, sup.speed)
        super_names = _port_names(sup, tier_sku(sup).width, layout.pods * k2)
        uplinks = layout.supers_per_plane * k2
        spine_ups = spine_names[layout.spine_uplink_start:layout.spine_uplink_start + uplinks]
        # Spine s of every pod is in plane s: its uplinks go to that plane's super-spines, each k2 times.
        planes = [tuple(_super_name(s, m) for m in range(layout.supers_per_plane) for _ in range(k2))
                  for s in range(layout.spines_per_pod)]
        for pod in range(layout.pods):
            downs = super_names[1 + pod * k2:1 + pod * k2 + k2] * layout.supers_per_plane
            for s, uppers in enumerate(planes):
                extend(zip(repeat(_spine_name(pod, s, True), uplinks), spine_ups, uppers, downs,
                           repeat("spine-superspine", uplinks), repeat(None, uplinks), repeat(ss_speed, uplinks),
                           repeat(False, uplinks), strict=True))
    return slots, raw


def _port_names(tier: Tier, width: int | None, count: int) -> tuple[str, ...]:
    """Names of front-panel ports 1..``count`` of ``tier`` (index 0 unused), at least its radix."""
    return ("", *(model_port_name(tier.os, tier.model, n, tier.speed, width) for n in range(1, max(count, tier.ports) + 1)))


def _switches(spec: ClusterSpec, slots: list[SwitchSlot], links: list[Link], default_qos: QosIntent,
              addresses: StableAddresses, bgp: BgpPlan | None) -> list[Switch]:
    """Every switch with its ports in front-panel order, the leaf port of each out-of-service NIC shut, and its
    BGP sessions (``bgp``: None when routing is off), all from one pass over the links."""
    tiers = spec.fabric.tiers
    by_tier: dict[str, Tier] = {"leaf": tiers.leaf, "spine": tiers.spine}
    if tiers.super_spine:
        by_tier["super_spine"] = tiers.super_spine
    qos_cache: dict[int, QosIntent] = {}
    roles = ROLES if spec.fabric.tiers.super_spine else ROLES[:2]
    overrides = spec.fabric.switch_overrides
    lb = spec.fabric.load_balancing
    skus = {name: tier_sku(tier) for name, tier in by_tier.items()}
    port_memo: dict[str, dict[str, tuple[int, tuple[int, ...]]]] = {name: {} for name in by_tier}
    policies: list[tuple[QosIntent, DataPath]] = []
    ends: dict[str, _Ends] = {}
    for slot in slots:
        qos: QosIntent = default_qos
        qos_path: DataPath = ("qos",)
        for index, override in enumerate(overrides):
            if fnmatch.fnmatchcase(slot.name, override.match):
                qos = qos_cache.get(id(override)) or qos_cache.setdefault(id(override), qos_intent(override.qos, roles))
                qos_path = ("fabric", "switch_overrides", index, "qos")
                break
        policies.append((qos, qos_path))
        ends[slot.name] = _Ends(by_tier[slot.tier], skus[slot.tier].width, port_memo[slot.tier], dict(qos.cable_by_role),
                                bgp.asns.get(slot.name) if bgp else None)
    # One pass over the links (74k at 24k GPUs) builds both ends' ports in place, in link order per switch. The
    # two ends go through one inline body (a method call per port cost a sixth of the plan): each end is
    # (its switch, or None for a host; the peer's; its port, its address; the peer, its port, its address; which
    # way). A session between two BGP speakers gets its two BgpNeighbors here too, in port order per switch.
    mine = ends.get
    blank_port, port_class = _blank_port, SwitchPort
    blank_neighbor, neighbor_class = _blank_neighbor, BgpNeighbor
    for link in links:
        a, ap, b, bp, a_address, b_address = (link.a_device, link.a_port, link.b_device, link.b_port, link.a_address,
                                              link.b_address)
        lower, upper = mine(a), mine(b)  # None: not a switch (a host)
        for end, other, port, address, peer, peer_port, peer_address, direction in (
                (lower, upper, ap, a_address, b, bp, b_address, "up"),
                (upper, lower, bp, b_address, a, ap, a_address, "down")):
            if end is None:
                continue
            if other is None:  # a host's port: its /31 is announced, unless the NIC is out of service (below)
                end.host_nets.append(address)
            try:
                index, lanes = end.memo[port]
            except KeyError:  # the first port of this name on the tier
                index, lanes = end.memo[port] = _port_facts(end.tier, end.width, port)
            # SwitchPort(...) with every field, set one by one on its slot twin (fabgen.plan._fast.blank)
            entry = blank_port()
            entry.name = port
            entry.index = index
            entry.lanes = lanes
            entry.speed = link.speed
            entry.direction = direction
            entry.peer_device = peer
            entry.peer_port = peer_port
            entry.peer_kind = "host" if other is None else "switch"
            entry.address = address
            entry.peer_address = bare = peer_address[:BARE]
            entry.rail = link.rail
            entry.description = description = f"{peer}:{peer_port}"
            entry.shutdown = False
            entry.cable_m = link.length_m or end.cable[link.role]
            entry.__class__ = port_class
            end.ports.append(entry)
            # The automatic layout cables every switch's ports in front-panel order, so most switches need no sort.
            if index > end.last:
                end.last = index
            else:
                end.in_order = False
            if end.asn is not None and other is not None and (remote := other.asn) is not None:
                # BgpNeighbor(...) with every field, set one by one on its slot twin
                session = blank_neighbor()
                session.address, session.remote_asn, session.port = bare, remote, port
                session.peer_device, session.description = peer, description
                session.__class__ = neighbor_class
                end.neighbors.append(session)
                (end.up_asns if direction == "up" else end.down_asns).append(remote)
    result = []
    down = out_of_service_nics(spec)
    for slot, (qos, qos_path) in zip(slots, policies, strict=True):
        tier, sku, end = by_tier[slot.tier], skus[slot.tier], ends[slot.name]
        ports = end.in_panel_order()
        host_nets = end.host_nets
        if down and slot.tier == "leaf":
            ports = shut_ports(ports, down)
            host_nets = [p.address for p in ports if p.peer_kind == "host" and not p.shutdown]
        loopback = addresses.loopback(slot.name)
        intent = None
        if bgp is not None and end.asn is not None:
            intent = bgp_intent(bgp, end.asn, loopback, host_nets, end.sessions_in_panel_order(), end.up_asns,
                                end.down_asns)
        result.append(Switch(
            name=slot.name, tier=slot.tier, os=tier.os, model=tier.model, asic=tier.asic, radix=tier.ports,
            speed=tier.speed, pod=slot.pod, rail=slot.rail, plane=slot.plane,
            loopback=loopback, mgmt=addresses.switch_mgmt(slot.name), ports=ports, qos=qos, qos_path=qos_path,
            load_balancing=lb.mode, roce_qp_hash=lb.roce_qp_hash, index=slot.index, bgp=intent,
            hwsku=sku.hwsku, platform=sku.platform, port_width=sku.width,
        ))
    return result


@dataclass(slots=True)
class _Ends:
    """One switch while its ports are built: its tier's port facts, its QoS policy's cable lengths, its ports so far."""

    tier: Tier
    width: int | None
    memo: dict[str, tuple[int, tuple[int, ...]]]
    """Port name -> (front-panel index, lanes), shared by the tier's switches."""
    cable: dict[str, int]
    """Link role -> metres: the policy's ``cable_by_role``, which has every role."""
    asn: int | None
    """The switch's ASN; None: it runs no BGP."""
    ports: list[SwitchPort] = field(default_factory=list)
    last: int = 0
    """Front-panel index of the last port added; ``in_order`` stays True while each index is above it."""
    in_order: bool = True
    neighbors: list[BgpNeighbor] = field(default_factory=list)
    """A BgpNeighbor per session, in the order of its port in ``ports``."""
    up_asns: list[int] = field(default_factory=list)
    down_asns: list[int] = field(default_factory=list)
    host_nets: list[str] = field(default_factory=list)
    """The address of every port cabled to a host (the leaf's end of its /31), in service or not."""

    def in_panel_order(self) -> tuple[SwitchPort, ...]:
        """Front-panel order, names outside the OS's scheme last; ties (two cables on one port) in cabling order."""
        if self.in_order:
            return tuple(self.ports)
        return tuple(sorted(self.ports, key=_panel_key))  # sorted() is stable: ties keep cabling order

    def sessions_in_panel_order(self) -> list[BgpNeighbor]:
        """The neighbours in the order of their ports in :meth:`in_panel_order`.

        The same stable sort on the same keys (a neighbour's port name gives its port's key): a subsequence of
        the ports sorted stably lands in the order it has in the sorted ports, ties in cabling order.
        """
        if self.in_order:
            return self.neighbors
        memo = self.memo
        return sorted(self.neighbors, key=lambda n: (memo[n.port][0] == 0, memo[n.port][0], n.port))


def _panel_key(port: SwitchPort) -> tuple[bool, int, str]:
    return port.index == 0, port.index, port.name


_blank_port = blank(SwitchPort)
_blank_neighbor = blank(BgpNeighbor)


def _port_facts(tier: Tier, width: int | None, name: str) -> tuple[int, tuple[int, ...]]:
    """A port name's front-panel index on ``tier`` (0: outside its scheme) and its SerDes lanes."""
    index = model_port_index(tier.os, tier.model, name, tier.speed, width)
    return index, model_port_lanes(tier.os, tier.model, index, tier.speed, width) if index else ()
