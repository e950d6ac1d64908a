"""Spec -> plan: expand hosts, lay out the Clos, cable it, address it, derive intents.

Pure: no I/O, the spec is never changed. The only module that knows topology.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
import struct
from dataclasses import dataclass, replace
from functools import cache

from fabgen._gc import paused_gc
from fabgen.errors import Problem, SpecError
from fabgen.plan.cabling import ExplicitCabling
from fabgen.plan.host_intents import host_plan
from fabgen.plan.host_network import attach_networks
from fabgen.plan.layout import Layout, TierShape, size_fabric
from fabgen.plan.model import (
    BgpIntent,
    FabricPlan,
    Link,
    QosIntent,
    Switch,
    SwitchPort,
)
from fabgen.plan.nic import firmware_intents
from fabgen.plan.ports import port_index, port_lanes, port_name
from fabgen.plan.qos import ROLES, qos_intent
from fabgen.plan.routing import bgp_intents, shut_host_ports
from fabgen.plan.slots import HostSlot, PlannedLink, SwitchSlot
from fabgen.source import SourceDoc, spec_problem
from fabgen.spec import ClusterSpec
from fabgen.spec.fabric import Tier
from fabgen.targets.sonic.sku import SKUS, lanes_per_port, resolve_hwsku


@paused_gc()
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
            spec.fabric.ratio,
        )
    except SpecError as exc:
        raise _relocate(exc, doc, ("fabric", "tiers")) from None

    switch_slots, raw = _layout_links(spec, hosts, layout)
    names = {s.name for s in switch_slots}
    clash = sorted(names & {h.name for h in hosts})
    if clash:
        raise _relocate(SpecError([Problem(f"host name {clash[0]} is also the name of a switch", file="hosts")]),
                        doc, ("hosts",))
    cabling = ExplicitCabling(spec, doc, {h.name: h.profile for h in hosts}, {s.name: s for s in switch_slots})
    raw = cabling.apply(raw)
    lengths = {(end.split(":", 1)[0], end.split(":", 1)[1]): c.length
               for c in spec.fabric.cabling if c.length is not None for end in (c.a, c.b)}
    links = _address(raw, spec.fabric.addressing.p2p, doc, lengths)

    roles = ROLES if spec.fabric.tiers.super_spine else ROLES[:2]
    default_qos = qos_intent(spec.qos, roles)
    switches = shut_host_ports(spec, tuple(_switches(spec, switch_slots, links, default_qos, doc)))
    mgmt = _mgmt_addresses(spec, len(switches) + len(hosts), doc)
    bgp = bgp_intents(spec, switches, doc)
    switches = tuple(
        _finish(s, mgmt[i] if mgmt else None, bgp.get(s.name)) for i, s in enumerate(switches)
    )
    host_links = {}
    for link in links:
        if link.role == "host-leaf":
            host_links[(link.a_device, link.a_port)] = link
    pods = {h.name: i // layout.hosts_per_pod for i, h in enumerate(hosts)} if layout.hosts_per_pod else {}
    nic_memo: dict[object, object] = {}
    try:
        planned_hosts = tuple(
            host_plan(spec, slot.name, slot.profile, slot.group, slot.override, pods.get(slot.name, 0),
                      mgmt[len(switches) + i] if mgmt else None, host_links, default_qos, nic_memo)
            for i, slot in enumerate(hosts)
        )
        firmware = firmware_intents(spec, default_qos)
    except ValueError as exc:  # a NIC setting the driver cannot take (the intents refuse it)
        raise _relocate(SpecError([Problem(f"NIC policy cannot be applied: {exc}", file="nic")]), doc, ("nic",)) from None
    planned_hosts = attach_networks(spec, doc, planned_hosts, switches, host_links)
    return FabricPlan(spec=spec, source=doc, layout=layout, hosts=planned_hosts, switches=switches,
                      links=tuple(links), qos=default_qos, firmware=firmware)


def _relocate(exc: SpecError, doc: SourceDoc | None, path: tuple[str | int, ...]) -> SpecError:
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


def _layout_links(spec: ClusterSpec, hosts: list[HostSlot], layout: Layout) -> tuple[list[SwitchSlot], list[PlannedLink]]:
    tiers = spec.fabric.tiers
    leaf_w, spine_w = tier_sku(tiers.leaf).width, tier_sku(tiers.spine).width
    leaf_os, spine_os = tiers.leaf.os, tiers.spine.os
    rails = spec.fabric.rails
    three = layout.tiers == 3
    per_pod = layout.hosts_per_pod
    per_leaf = layout.hosts_per_leaf

    # Leaves that carry at least one host, per pod.
    leaves_in_pod: dict[int, int] = {}
    for i in range(len(hosts)):
        pod, slot = divmod(i, per_pod)
        leaves_in_pod[pod] = max(leaves_in_pod.get(pod, 0), slot // per_leaf + 1)

    slots: list[SwitchSlot] = []
    for pod in range(layout.pods):
        for rail in range(rails):
            for j in range(leaves_in_pod.get(pod, 0)):
                slots.append(SwitchSlot(_leaf_name(pod, rail, j), "leaf", pod, rail, None, j))
    for pod in range(layout.pods):
        for s in range(layout.spines_per_pod):
            slots.append(SwitchSlot(_spine_name(pod, s, three), "spine", pod if three else None, None, s if three else None,
                                    s))
    if three:
        for plane in range(layout.planes):
            for m in range(layout.supers_per_plane):
                slots.append(SwitchSlot(_super_name(plane, m), "super_spine", None, None, plane, m))

    raw: list[PlannedLink] = []
    profiles = {name: p.backend_nics() for name, p in spec.host_profiles.items()}
    for i, host in enumerate(hosts):
        pod, slot = divmod(i, per_pod)
        leaf_index, port = divmod(slot, per_leaf)
        for nic in profiles[host.profile]:
            assert nic.rail is not None
            leaf = _leaf_name(pod, nic.rail, leaf_index)
            raw.append(PlannedLink(host.name, nic.netdev, leaf, port_name(leaf_os, port + 1, tiers.leaf.speed, leaf_w),
                        "host-leaf", nic.rail, min(nic.speed, tiers.leaf.speed), False))

    k1 = layout.leaf_spine_links
    ls_speed = min(tiers.leaf.speed, tiers.spine.speed)
    for pod in range(layout.pods):
        count = leaves_in_pod.get(pod, 0)
        for rail in range(rails):
            for j in range(count):
                leaf = _leaf_name(pod, rail, j)
                position = rail * layout.leaves_per_rail + j
                for s in range(layout.spines_per_pod):
                    spine = _spine_name(pod, s, three)
                    for t in range(k1):
                        leaf_port = layout.leaf_uplink_start + s * k1 + t
                        spine_port = 1 + position * k1 + t
                        raw.append(PlannedLink(leaf, port_name(leaf_os, leaf_port, tiers.leaf.speed, leaf_w),
                                    spine, port_name(spine_os, spine_port, tiers.spine.speed, spine_w),
                                    "leaf-spine", rail, ls_speed, False))
    if three:
        sup = tiers.super_spine
        assert sup is not None
        k2 = layout.spine_super_links
        ss_speed = min(tiers.spine.speed, sup.speed)
        for pod in range(layout.pods):
            for s in range(layout.spines_per_pod):
                spine = _spine_name(pod, s, True)
                for m in range(layout.supers_per_plane):
                    for t in range(k2):
                        spine_port = layout.spine_uplink_start + m * k2 + t
                        super_port = 1 + pod * k2 + t
                        raw.append(PlannedLink(spine, port_name(spine_os, spine_port, tiers.spine.speed, spine_w),
                                    _super_name(s, m), port_name(sup.os, super_port, sup.speed, tier_sku(sup).width),
                                    "spine-superspine", None, ss_speed, False))
    return slots, raw


def _address(raw: list[PlannedLink], pool: ipaddress.IPv4Network, doc: SourceDoc | None,
             lengths: dict[tuple[str, str], int]) -> list[Link]:
    need = 2 * len(raw)
    if need > pool.num_addresses:
        raise _relocate(SpecError([Problem(
            f"{len(raw)} links need {need} addresses (/31 each), but the p2p pool {pool} has {pool.num_addresses}",
            file="fabric")]), doc, ("fabric", "addressing", "p2p"))
    base = int(pool.network_address)
    pack, ntoa = struct.Struct("!I").pack, socket.inet_ntoa  # ipaddress objects are too slow for 150k addresses
    links = []
    for i, (a, ap, b, bp, role, rail, speed, explicit) in enumerate(raw):
        upper = base + 2 * i
        length = (lengths.get((a, ap)) or lengths.get((b, bp))) if explicit and lengths else None
        links.append(Link(a, ap, b, bp, role, rail, speed,
                          f"{ntoa(pack(upper + 1))}/31", f"{ntoa(pack(upper))}/31", explicit, length))
    return links


def _switches(spec: ClusterSpec, slots: list[SwitchSlot], links: list[Link], default_qos: QosIntent,
              doc: SourceDoc | None) -> list[Switch]:
    tiers = spec.fabric.tiers
    by_tier: dict[str, Tier] = {"leaf": tiers.leaf, "spine": tiers.spine}
    if tiers.super_spine:
        by_tier["super_spine"] = tiers.super_spine
    ends: dict[str, list[tuple[str, str, str, str, str, str, Link]]] = {s.name: [] for s in slots}
    for link in links:
        mine = ends.get(link.a_device)
        if mine is not None:
            mine.append((link.a_port, link.a_address, link.b_device, link.b_port, link.b_address, "up", link))
        mine = ends.get(link.b_device)
        if mine is not None:
            mine.append((link.b_port, link.b_address, link.a_device, link.a_port, link.a_address, "down", link))
    qos_cache: dict[int, QosIntent] = {}
    roles = ROLES if spec.fabric.tiers.super_spine else ROLES[:2]
    overrides = spec.fabric.switch_overrides
    lb = spec.fabric.load_balancing
    loop_base = int(spec.fabric.addressing.loopbacks.network_address) + 1
    if len(slots) > spec.fabric.addressing.loopbacks.num_addresses - 2:
        raise _relocate(SpecError([Problem(
            f"{len(slots)} switches need loopbacks, but the pool {spec.fabric.addressing.loopbacks} has "
            f"{spec.fabric.addressing.loopbacks.num_addresses - 2} usable addresses", file="fabric")]),
            doc, ("fabric", "addressing", "loopbacks"))
    skus = {name: tier_sku(tier) for name, tier in by_tier.items()}
    result = []
    for i, slot in enumerate(slots):
        tier = by_tier[slot.tier]
        qos = default_qos
        qos_path: tuple[str | int, ...] = ("qos",)
        for index, override in enumerate(overrides):
            if fnmatch.fnmatchcase(slot.name, override.match):
                qos = qos_cache.setdefault(id(override), qos_intent(override.qos, roles))
                qos_path = ("fabric", "switch_overrides", index, "qos")
                break
        entries = []
        os_name, speed = tier.os, tier.speed
        sku = skus[slot.tier]
        role_length = dict(qos.cable_by_role)
        for my_port, my_addr, peer, peer_port, peer_addr, direction, link in ends[slot.name]:
            index = port_index(os_name, my_port, speed, sku.width)
            entries.append(SwitchPort(
                my_port, index, port_lanes(os_name, index, speed, sku.width) if index else (), link.speed,
                direction,  # type: ignore[arg-type]
                peer, peer_port, "switch" if peer in ends else "host", my_addr, peer_addr.partition("/")[0],
                link.rail, f"{peer}:{peer_port}",
                cable_m=link.length_m or role_length.get(link.role, qos.cable_length_m),
            ))
        entries.sort(key=lambda p: (p.index == 0, p.index, p.name))
        result.append(Switch(
            name=slot.name, tier=slot.tier, os=tier.os, model=tier.model, asic=tier.asic, radix=tier.ports,
            speed=tier.speed, pod=slot.pod, rail=slot.rail, plane=slot.plane,
            loopback=f"{ipaddress.IPv4Address(loop_base + i)}/32", mgmt=None, ports=tuple(entries), qos=qos,
            qos_path=qos_path,
            load_balancing=lb.mode, roce_qp_hash=lb.roce_qp_hash, index=slot.index,
            hwsku=sku.hwsku, platform=sku.platform, port_width=sku.width,
        ))
    return result


def _mgmt_addresses(spec: ClusterSpec, count: int, doc: SourceDoc | None) -> list[str] | None:
    pool = spec.fabric.addressing.mgmt
    if pool is None:
        return None
    usable = pool.num_addresses - 2
    if count > usable:
        raise _relocate(SpecError([Problem(
            f"{count} devices need management addresses, but {pool} has {usable}", file="fabric")]),
            doc, ("fabric", "addressing", "mgmt"))
    base = int(pool.network_address) + 1
    return [f"{ipaddress.IPv4Address(base + i)}/{pool.prefixlen}" for i in range(count)]


def _finish(switch: Switch, mgmt: str | None, bgp: BgpIntent | None) -> Switch:
    return replace(switch, mgmt=mgmt, bgp=bgp)
