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
from collections.abc import Iterable
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Protocol

from fabgen.errors import Problem, SpecError
from fabgen.plan.layout import Layout
from fabgen.plan.model import BfdIntent, BgpIntent, BgpNeighbor, Switch, SwitchPort, TierName
from fabgen.source import DataPath, SourceDoc, spec_problem
from fabgen.spec import ClusterSpec
from fabgen.spec.routing import PRIVATE_ASN_4BYTE

SPINE_BLOCK = 10_000
"""Offset of the spine ASNs from ``asn_base``; super-spine ASNs live below it."""
LEAF_BLOCK = 100_000
"""Offset of the leaf ASNs from ``asn_base``; spine ASNs live below it."""

_ROUTING: DataPath = ("fabric", "routing")

class Positioned(Protocol):
    """What the ASN scheme reads of a switch: a planned :class:`Switch` or its layout slot alike."""

    @property
    def name(self) -> str: ...
    @property
    def tier(self) -> str: ...
    @property
    def pod(self) -> int | None: ...
    @property
    def rail(self) -> int | None: ...
    @property
    def plane(self) -> int | None: ...
    @property
    def index(self) -> int: ...


@dataclass(frozen=True, slots=True)
class BgpPlan:
    """The underlay decided before any port exists: every BGP speaker's ASN and the spec's session settings.

    Why before the ports: the planner builds each switch's :class:`BgpNeighbor` list in the same pass over the
    links that builds its ports (``fabgen.plan.build``), 98k session ends at 24k GPUs, instead of walking every
    port a second time.
    """

    asns: dict[str, int]
    """Switch name -> ASN, for every switch that runs BGP (excluded ones are absent)."""
    origin: dict[str, int]
    """Switch name -> index of the ``asn_overrides`` entry that set its ASN."""
    bfd: BfdIntent | None
    keepalive: int | None
    hold: int | None
    maximum_paths: int | None
    """The spec's fixed ECMP width; None: derived per switch."""


def bgp_plan(spec: ClusterSpec, switches: Iterable[Positioned], doc: SourceDoc | None) -> BgpPlan | None:
    """The ASNs and session settings of the fabric's switches (None when routing is off).

    Raises :class:`SpecError` at the spec line to change when the ASN scheme overflows the private range or an
    override matches no switch.
    """
    routing = spec.fabric.routing
    if not routing.enabled:
        return None
    switches = tuple(switches)
    excluded = {s.name for s in switches if any(fnmatch.fnmatchcase(s.name, g) for g in routing.exclude)}
    asns, origin = _asns(spec, switches, excluded, doc)
    bfd = BfdIntent(routing.bfd.interval, routing.bfd.multiplier) if routing.bfd and routing.bfd.enabled else None
    timers = routing.timers
    return BgpPlan(asns, origin, bfd, timers.keepalive if timers else None, timers.hold if timers else None,
                   routing.maximum_paths)


def bgp_intent(plan: BgpPlan, asn: int, loopback_interface: str, host_nets: Iterable[str],
               neighbors: Iterable[BgpNeighbor], up_asns: list[int], down_asns: list[int]) -> BgpIntent:
    """One switch's :class:`BgpIntent` from its sessions in port order and their peers' ASNs, up and down.

    ``host_nets``: the interface address of each of its in-service host ports (a shut port's subnet is not
    announced); the leaf's end of a host /31 is its even address (fabgen.plan.addressing), so that address is
    the subnet.
    """
    # Equal-cost next hops: all uplinks for what lies above; for a prefix below, the parallel links to the one
    # peer group (an ASN) that leads to it; most switches have one link per peer ASN below (no Counter needed).
    widest_down = (0 if not down_asns else 1 if len(set(down_asns)) == len(down_asns)
                   else max(Counter(down_asns).values()))
    paths = ecmp_width(plan.maximum_paths, len(up_asns), widest_down)
    loopback = loopback_interface.partition("/")[0]
    networks = {*host_nets, f"{loopback}/32"}
    return BgpIntent(asn=asn, router_id=loopback, neighbors=tuple(neighbors), maximum_paths=paths,
                     multipath_relax=len(set(up_asns)) > 1, networks=_in_address_order(networks),
                     bfd=plan.bfd, keepalive=plan.keepalive, hold=plan.hold)


def ecmp_width(fixed: int | None, uplinks: int, widest_down: int) -> int:
    """One switch's ``maximum-paths``: the spec's fixed width, else room for every uplink and for the parallel
    links to the widest peer group (ASN) below.

    The one rule, shared by :func:`bgp_intent` (from a switch's sessions) and
    :func:`layout_ecmp_widths` (from the layout's numbers, before any link exists).
    """
    return fixed if fixed is not None else max(uplinks, widest_down, 1)


def layout_ecmp_widths(spec: ClusterSpec, layout: Layout) -> dict[TierName, int]:
    """Each tier's ``maximum-paths`` as :func:`bgp_intent` will give its switches, from the layout alone.

    Why: a target's bound on the ECMP width (EOS's 600) is then refused right
    after :func:`~fabgen.plan.layout.size_fabric`, not after the planner has
    built every link (1.6 million at 200k hosts: a minute and 6 GB to say one
    line). The layout gives every switch of a tier the same sessions: a leaf
    has ``spines_per_pod * leaf_spine_links`` uplinks; a spine reaches each leaf
    (its own ASN) over ``leaf_spine_links`` links and, in 3 tiers, has
    ``supers_per_plane * spine_super_links`` uplinks; a super-spine reaches one
    spine per pod (one ASN per pod in either scheme) over ``spine_super_links``.

    Empty (no verdict: the planned switches decide, later) when routing is off
    or when the spec can make the planned widths differ: ``exclude`` drops
    sessions, ``fabric.cabling`` replaces links, ``asn_overrides`` can merge the
    peer groups below a switch. A fixed ``maximum_paths`` is every speaker's
    width whatever the links, so only ``exclude`` (which may leave a tier
    without speakers) withholds it.
    """
    routing = spec.fabric.routing
    if not routing.enabled or routing.exclude:
        return {}
    fixed = routing.maximum_paths
    if fixed is None and (spec.fabric.cabling or routing.asn_overrides):
        return {}
    k1, k2 = layout.leaf_spine_links, layout.spine_super_links
    widths: dict[TierName, int] = {"leaf": ecmp_width(fixed, layout.spines_per_pod * k1, 0)}
    if layout.tiers == 3:
        widths["spine"] = ecmp_width(fixed, layout.supers_per_plane * k2, k1)
        widths["super_spine"] = ecmp_width(fixed, 0, k2)
    else:
        widths["spine"] = ecmp_width(fixed, 0, k1)
    return widths


def widest_layout_ecmp(spec: ClusterSpec, layout: Layout, os: str) -> int:
    """The widest :func:`layout_ecmp_widths` among the tiers that run ``os`` (0: none, or no verdict yet)."""
    tiers = spec.fabric.tiers
    return max((width for tier, width in layout_ecmp_widths(spec, layout).items()
                if (shape := getattr(tiers, tier)) is not None and shape.os == os), default=0)


def same_asn_problems(plan: BgpPlan, switches: Iterable[Switch], doc: SourceDoc | None) -> list[Problem]:
    """Overrides that give both ends of a session one ASN (that session would be iBGP, which this underlay does
    not plan), once per override, at its line; the first such session in switch and port order names it."""
    found: dict[int, Problem] = {}
    if not plan.origin:
        return []  # the scheme itself never gives neighbours one ASN (_same_asn): only an override can
    for switch in switches:
        if switch.bgp is None:
            continue
        for neighbor in switch.bgp.neighbors:
            if neighbor.remote_asn == switch.bgp.asn:
                _same_asn(found, switch.name, neighbor.peer_device, switch.bgp.asn, plan.origin, doc)
    return [found[i] for i in sorted(found)]


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


def scheme_asn(spec: ClusterSpec, switch: Positioned) -> int:
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


def _asns(spec: ClusterSpec, switches: tuple[Positioned, ...], excluded: set[str], doc: SourceDoc | None
          ) -> tuple[dict[str, int], dict[str, int]]:
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


def out_of_service_nics(spec: ClusterSpec) -> set[tuple[str, str]]:
    """(host, netdev) of every host NIC out of service: its leaf port is shut, so a broken NIC cannot flap the
    fabric (and its /31 stays out of the routing table)."""
    down: set[tuple[str, str]] = set()
    for group in spec.hosts:
        profile = spec.host_profiles.get(group.profile)
        if profile is None:
            continue
        for host, override in group.overrides.items():
            netdevs = {n.netdev for n in profile.nics if n.name in set(override.nics_out_of_service)}
            down.update((host, netdev) for netdev in netdevs)
    return down


def shut_ports(ports: tuple[SwitchPort, ...], down: set[tuple[str, str]]) -> tuple[SwitchPort, ...]:
    """A leaf's ``ports`` with every port shut whose name is that of a port cabled to a NIC in ``down``."""
    names = {p.name for p in ports if p.peer_kind == "host" and (p.peer_device, p.peer_port) in down}
    if not names:
        return ports
    return tuple(replace(p, shutdown=True) if p.name in names else p for p in ports)


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
