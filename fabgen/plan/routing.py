"""The eBGP underlay of the plan, OS-neutral: ASNs, neighbours, ECMP width, what each switch announces.

RFC 7938 style: every switch-to-switch /31 is one eBGP session between the
interface addresses of its two ends; hosts are not BGP speakers. The renderers
(EOS ``router bgp``, SONiC ``BGP_NEIGHBOR``, NVUE ``router bgp``) and the twin's
FRR print :class:`~fabgen.plan.model.BgpIntent` as it is and never compute.

ASNs come from a switch's position (tier, pod, rail, index) and the layout's
fixed shape, never from the order switches are enumerated in, so growing the
fabric by a pod leaves every existing ASN (and so every existing config line)
where it was. The blocks, from ``asn_base``:

===========  ======================  ==========================================
tier         ``rfc7938`` (default)    ``unique``
===========  ======================  ==========================================
super-spine  ``base + plane``         ``base + plane * spine_ports + m``
spine        ``base + 10000 + pod``   ``base + 10000 + pod * leaf_ports + s``
leaf         ``base + 100000 + n``    the same
===========  ======================  ==========================================

with ``n = (pod * rails + rail) * spine_ports + j`` for leaf j of its pod and
rail, and ``*_ports`` the tiers' radix: bounds of the group sizes, which stay
put when hosts are added, where the layout's current counts would not. Why
spines of a pod and super-spines of a plane share an ASN is in
:mod:`fabgen.spec.routing` (no path hunting).
"""

from __future__ import annotations

import fnmatch
import socket
from collections import Counter
from dataclasses import replace
from operator import itemgetter

from fabgen.errors import Problem, SpecError
from fabgen.plan._fast import blank
from fabgen.plan.model import BfdIntent, BgpIntent, BgpNeighbor, Switch, SwitchPort
from fabgen.source import DataPath, SourceDoc, spec_problem
from fabgen.spec import ClusterSpec
from fabgen.spec.routing import PRIVATE_ASN_4BYTE

SPINE_BLOCK = 10_000
"""Offset of the spine ASNs from ``asn_base``; super-spine ASNs live below it."""
LEAF_BLOCK = 100_000
"""Offset of the leaf ASNs from ``asn_base``; spine ASNs live below it."""

_ROUTING: DataPath = ("fabric", "routing")

_BLANK_NEIGHBOR = blank(BgpNeighbor)
"""The 24k fabric has 98,304 session ends: each :class:`BgpNeighbor` is built in place
(:mod:`fabgen.plan._fast`), equal and still frozen, in a fraction of its ``__init__``'s time
(``tests/plan/test_routing.py`` compares every field with the dataclass's own constructor)."""


def shut_host_ports(spec: ClusterSpec, switches: tuple[Switch, ...]) -> tuple[Switch, ...]:
    """``switches`` with the leaf port of every out-of-service host NIC shut (``SwitchPort.shutdown``).

    A NIC taken out of service is often a broken one; a shut port keeps its flaps
    and errors out of the leaf, and its /31 out of the routing table.
    """
    shut = _out_of_service_ports(spec, switches)
    return tuple(_shut(s, shut) for s in switches) if shut else switches


def bgp_intents(spec: ClusterSpec, switches: tuple[Switch, ...], doc: SourceDoc | None) -> dict[str, BgpIntent]:
    """The :class:`BgpIntent` of every switch that runs BGP, by name (none when routing is off).

    Raises :class:`SpecError` at the spec line to change when the ASN scheme
    overflows the private range, an override matches no switch, or an override
    gives both ends of a session the same ASN (that session would be iBGP, which
    this underlay does not plan). Call after :func:`shut_host_ports`: a shut
    port's subnet is not announced.
    """
    routing = spec.fabric.routing
    if not routing.enabled:
        return {}
    excluded = {s.name for s in switches if any(fnmatch.fnmatchcase(s.name, g) for g in routing.exclude)}
    asns, origin = _asns(spec, switches, excluded, doc)

    bfd = BfdIntent(routing.bfd.interval, routing.bfd.multiplier) if routing.bfd and routing.bfd.enabled else None
    keepalive = routing.timers.keepalive if routing.timers else None
    hold = routing.timers.hold if routing.timers else None
    fixed_paths = routing.maximum_paths
    asn_of = asns.get
    blank_neighbor, neighbor_class = _BLANK_NEIGHBOR, BgpNeighbor
    same_asn: dict[int, Problem] = {}
    intents: dict[str, BgpIntent] = {}
    for switch in switches:
        asn = asn_of(switch.name)
        if asn is None:
            continue
        neighbors: list[BgpNeighbor] = []
        up_asns: list[int] = []
        down_asns: list[int] = []
        host_nets: list[str] = []
        for port in switch.ports:
            peer = port.peer_device
            remote = asn_of(peer)  # None for a host, and for a switch without BGP
            if remote is None:
                if port.peer_kind == "host" and not port.shutdown:
                    # The leaf's end of a host /31 is its even address (fabgen.plan.build._address),
                    # so its interface address is the subnet.
                    host_nets.append(port.address)
                continue  # a switch without BGP: lint FG602 reports the link
            # BgpNeighbor(...) with every field, set one by one on its slot twin (fabgen.plan._fast.blank)
            item = blank_neighbor()
            item.address = port.peer_address
            item.remote_asn = remote
            item.port = port.name
            item.peer_device = peer
            item.description = port.description
            item.__class__ = neighbor_class
            neighbors.append(item)
            if port.direction == "up":
                up_asns.append(remote)
            else:
                down_asns.append(remote)
            if remote == asn:
                _same_asn(same_asn, switch.name, peer, asn, origin, doc)
        # Equal-cost next hops: all uplinks for what lies above; for a prefix below, the
        # parallel links to the one peer group (an ASN) that leads to it.
        widest_down = max(Counter(down_asns).values(), default=0)
        paths = fixed_paths if fixed_paths is not None else max(len(up_asns), widest_down, 1)
        loopback = switch.loopback.partition("/")[0]
        host_nets.append(f"{loopback}/32")
        intents[switch.name] = BgpIntent(
            asn=asn, router_id=loopback, neighbors=tuple(neighbors), maximum_paths=paths,
            multipath_relax=len(set(up_asns)) > 1,
            networks=_in_address_order(set(host_nets)),
            bfd=bfd, keepalive=keepalive, hold=hold,
        )
    if same_asn:
        raise SpecError([same_asn[i] for i in sorted(same_asn)])
    return intents


def _in_address_order(prefixes: set[str]) -> tuple[str, ...]:
    """``prefixes`` (distinct host /31s and a /32) by address: network-order bytes compare as the numbers do.

    The keys are made by ``map`` (C loops), not a Python key function called 26k times at 24k GPUs; every
    prefix here ends in ``/31`` or ``/32``, so ``[:-3]`` is its address.
    """
    keyed = sorted(zip(map(socket.inet_aton, map(_ADDRESS_PART, prefixes)), prefixes, strict=True))
    return tuple(map(_PREFIX_PART, keyed))  # keys are distinct: the prefixes themselves are never compared


_ADDRESS_PART = itemgetter(slice(None, -3))
_PREFIX_PART = itemgetter(1)


def _same_asn(found: dict[int, Problem], a: str, b: str, asn: int, origin: dict[str, int],
              doc: SourceDoc | None) -> None:
    """An override that puts both ends of a cable in one ASN, reported once at the override's line."""
    index = origin.get(a, origin.get(b))
    if index is None or index in found:
        return  # the scheme itself never gives neighbours one ASN
    found[index] = spec_problem(
        doc, f"ASN {asn} is given to both {a} and its BGP neighbour {b}; the two ends of an eBGP session "
             "need different ASNs", (*_ROUTING, "asn_overrides", index, "asn"))


def scheme_asn(spec: ClusterSpec, switch: Switch) -> int:
    """The ASN the scheme gives ``switch`` from its position (before overrides)."""
    routing = spec.fabric.routing
    tiers = spec.fabric.tiers
    base = routing.asn_base
    unique = routing.asn_scheme == "unique"
    # Strides are bounds the tiers' port counts set, not the current layout's counts, which
    # change as hosts are added: a pod has at most spine-ports leaves (each takes a port
    # of every spine of its pod), at most leaf-ports spines, a plane at most spine-ports
    # super-spines.
    if switch.tier == "leaf":
        pod, rail = switch.pod or 0, switch.rail or 0
        return base + LEAF_BLOCK + (pod * spec.fabric.rails + rail) * tiers.spine.ports + switch.index
    if switch.tier == "spine":
        pod = switch.pod or 0
        return base + SPINE_BLOCK + (pod * tiers.leaf.ports + switch.index if unique else pod)
    plane = switch.plane or 0
    return base + (plane * tiers.spine.ports + switch.index if unique else plane)


def _asns(spec: ClusterSpec, switches: tuple[Switch, ...], excluded: set[str], doc: SourceDoc | None) -> tuple[dict[str, int], dict[str, int]]:
    """Every BGP speaker's ASN, and for overridden ones the index of the override that set it."""
    routing = spec.fabric.routing
    overrides = routing.asn_overrides
    asns: dict[str, int] = {}
    origin: dict[str, int] = {}
    used = [False] * len(overrides)
    problems: list[Problem] = []
    # The first ASN past each tier's block.
    ends = {"super_spine": routing.asn_base + SPINE_BLOCK, "spine": routing.asn_base + LEAF_BLOCK,
            "leaf": PRIVATE_ASN_4BYTE[1] + 1}
    overflow: dict[str, int] = {}
    for switch in switches:
        if switch.name in excluded:
            continue
        for index, override in enumerate(overrides):
            if fnmatch.fnmatchcase(switch.name, override.match):
                asns[switch.name], used[index] = override.asn, True
                origin[switch.name] = index
                break
        else:
            asn = asns[switch.name] = scheme_asn(spec, switch)
            if asn >= ends[switch.tier]:
                overflow[switch.tier] = max(overflow.get(switch.tier, 0), asn)
    for tier, highest in sorted(overflow.items()):
        where, fix = ("asn_base", "lower asn_base") if tier == "leaf" else ("asn_scheme", "use asn_scheme rfc7938")
        problems.append(spec_problem(doc, f"the {tier.replace('_', '-')} ASNs of this fabric run to {highest}, past "
                                          f"their block of the private range (see fabgen.plan.routing); {fix}",
                                     (*_ROUTING, where)))
    for index, hit in enumerate(used):
        if not hit:
            problems.append(spec_problem(doc, f"ASN override {overrides[index].match!r} matches no switch that runs "
                                              "BGP", (*_ROUTING, "asn_overrides", index, "match")))
    if problems:
        raise SpecError(problems)
    return asns, origin


def _out_of_service_ports(spec: ClusterSpec, switches: tuple[Switch, ...]) -> set[tuple[str, str]]:
    """(leaf, port) of every host NIC out of service: the port is shut, so a broken NIC cannot flap the fabric."""
    down: set[tuple[str, str]] = set()
    for group in spec.hosts:
        profile = spec.host_profiles.get(group.profile)
        if profile is None:
            continue
        for host, override in group.overrides.items():
            netdevs = {n.netdev for n in profile.nics if n.name in set(override.nics_out_of_service)}
            down.update((host, netdev) for netdev in netdevs)
    if not down:
        return set()
    return {(s.name, p.name) for s in switches if s.tier == "leaf" for p in s.ports
            if p.peer_kind == "host" and (p.peer_device, p.peer_port) in down}


def _shut(switch: Switch, shut: set[tuple[str, str]]) -> Switch:
    if not shut or not any((switch.name, p.name) in shut for p in switch.ports):
        return switch
    ports: tuple[SwitchPort, ...] = tuple(
        replace(p, shutdown=True) if (switch.name, p.name) in shut else p for p in switch.ports)
    return replace(switch, ports=ports)


_TIER_LABEL = {"leaf": "leaf", "spine": "spine", "super_spine": "super-spine"}


def routing_summary(switches: tuple[Switch, ...], scheme: str) -> dict[str, object] | None:
    """What ``fabgen plan`` says about the underlay: ASNs per tier (how many, lowest, highest) and sessions.

    None when no switch runs BGP.
    """
    per_tier: dict[str, set[int]] = {}
    ends = 0
    for switch in switches:
        if switch.bgp is not None:
            per_tier.setdefault(switch.tier, set()).add(switch.bgp.asn)
            ends += len(switch.bgp.neighbors)
    if not per_tier:
        return None
    return {
        "asn_scheme": scheme,
        "asns": {_TIER_LABEL[t]: {"count": len(a), "first": min(a), "last": max(a)}
                 for t in ("leaf", "spine", "super_spine") if (a := per_tier.get(t))},
        "sessions": ends // 2,
        "bgp_speakers": sum(1 for s in switches if s.bgp is not None),
    }


def routing_table(summary: dict[str, object]) -> list[str]:
    """The lines ``fabgen plan`` prints for :func:`routing_summary`."""
    lines = [f"{'eBGP ' + str(summary['asn_scheme']):<18} {'ASNs':>9} {'first':>11} {'last':>11}"]
    for tier, row in summary["asns"].items():  # type: ignore[attr-defined]
        lines.append(f"{tier:<18} {row['count']:>9,} {row['first']:>11} {row['last']:>11}")
    lines.append(f"{'sessions':<18} {summary['sessions']:>9,}")
    return lines
