"""FG6xx routing: the eBGP underlay as planned must reach every leaf over every path.

The planner refuses what cannot be an eBGP session at all (both ends of a
cable in one ASN, an ASN outside the private ranges). What it lets through and
these rules judge: ASNs that break routing further away (BGP's AS-path loop
check drops a route through a second device of the same ASN), links that carry
no session, and an ECMP width that leaves uplinks idle.
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Iterator

from fabgen.lint.context import LintContext, plural, preview
from fabgen.lint.finding import Hit
from fabgen.plan.model import Switch
from fabgen.source import DataPath

_ROUTING: DataPath = ("fabric", "routing")
_TIER_PLURAL = {"leaf": "leaves", "spine": "spines", "super_spine": "super-spines"}


def _asn_group(switch: Switch) -> tuple[str, int | None] | tuple[str, str]:
    """Switches with the same key may share an ASN without losing routes; any others may not.

    Spines of one pod (all spines of a 2-tier fabric) never carry a path between
    each other, nor do super-spines of any plane: a shared ASN only rejects
    valley paths. Two leaves, or a leaf and a spine, or spines of two pods, do
    exchange routes through the fabric, and the loop check would drop them.
    """
    if switch.tier == "leaf":
        return ("leaf", switch.name)
    if switch.tier == "spine":
        return ("spine", switch.pod)
    return ("super_spine", None)


def _override_index(ctx: LintContext, name: str) -> int | None:
    for index, override in enumerate(ctx.spec.fabric.routing.asn_overrides):
        if fnmatch.fnmatchcase(name, override.match):
            return index
    return None


def _asn_path(ctx: LintContext, name: str) -> DataPath:
    index = _override_index(ctx, name)
    if index is not None:
        return (*_ROUTING, "asn_overrides", index, "asn")
    return ctx.first_written((*_ROUTING, "asn_base"), (*_ROUTING, "asn_scheme"), _ROUTING, ("fabric",))


def asn_collision(ctx: LintContext) -> Iterator[Hit]:
    """Two switches that must have different ASNs share one.

    What it checks:
        Every BGP speaker's ASN against every other's. Leaves must all differ;
        spines of one pod (every spine of a 2-tier fabric) may share an ASN, as
        may super-spines, but spines of different pods, and switches of different
        tiers, must not. Reported at the ``asn_overrides`` entry that gave the ASN.

    Why it matters:
        BGP drops any route whose AS path already holds its own ASN. Two leaves
        with one ASN never learn each other's host subnets (the path leaf ->
        spine -> leaf carries it), so their GPUs cannot reach each other over the
        fabric at all; spines of two pods with one ASN cut the pods apart.

    Example:
        fabric:
          routing:
            asn_overrides:
              - {match: "leaf-r*", asn: 4200100000}

    Fix:
        Give each leaf its own ASN (drop the override, or make its glob match one
        switch), and each pod's spines an ASN no other pod uses.
    """
    by_asn: dict[int, dict[object, list[str]]] = defaultdict(lambda: defaultdict(list))
    for switch in ctx.plan.switches:
        if switch.bgp is not None:
            by_asn[switch.bgp.asn][_asn_group(switch)].append(switch.name)
    for asn, groups in sorted(by_asn.items()):
        if len(groups) < 2:
            continue
        names = sorted(n for members in groups.values() for n in members)
        overridden = [n for n in names if _override_index(ctx, n) is not None]
        first = overridden[0] if overridden else names[0]
        related = sorted({_asn_path(ctx, n) for n in overridden if _asn_path(ctx, n) != _asn_path(ctx, first)},
                         key=str)
        yield Hit(
            f"ASN {asn} is shared by {len(names)} switches that exchange routes ({preview(names)}); "
            "BGP's loop check drops every route between them",
            ctx.at(_asn_path(ctx, first)),
            "give each leaf, and each pod's spine group, an ASN of its own",
            tuple(ctx.at(p, note="also sets it") for p in related[:3]),
        )


def neighbor_missing(ctx: LintContext) -> Iterator[Hit]:
    """A switch-to-switch link carries no BGP session.

    What it checks:
        Every planned switch-to-switch cable must have a BGP neighbour on both of
        its ends, with the other end's address. A switch that runs no BGP (routing
        off, or the switch in ``fabric.routing.exclude``) leaves all its links
        without one.

    Why it matters:
        A link without a session carries no routes, so no traffic: the leaves
        behind it lose that uplink from ECMP (or every path, if it was the last),
        while the cable, the port and the link light all look healthy.

    Example:
        fabric:
          routing:
            exclude: [spine-02]

    Fix:
        Run BGP on the switch (remove it from ``exclude``), or take its cables
        out of the plan if it is not part of the routed fabric.
    """
    routing = ctx.spec.fabric.routing
    if not routing.enabled:
        count = sum(1 for link in ctx.plan.links if link.role != "host-leaf")
        if count:
            yield Hit(
                f"routing is off: none of the {plural(count, 'switch-to-switch link')} carries a BGP session, "
                "so no leaf reaches another",
                ctx.at(ctx.first_written((*_ROUTING, "enabled"), _ROUTING)),
                "turn fabric.routing on, or configure the switches' routing another way and suppress this",
            )
        return
    switches = ctx.switches
    unrouted: dict[str, list[str]] = {}
    for switch in ctx.plan.switches:
        expected = sum(1 for p in switch.ports if p.peer_kind == "switch")
        if switch.bgp is None:
            if expected:
                unrouted[switch.name] = sorted({p.peer_device for p in switch.ports if p.peer_kind == "switch"})
            continue
        if len(switch.bgp.neighbors) == expected and all(
                n.port == p.name and n.peer_device == p.peer_device and n.address == p.peer_address
                for n, p in zip(switch.bgp.neighbors, (q for q in switch.ports if q.peer_kind == "switch"), strict=False)):
            continue
        sessions = {(n.port, n.peer_device, n.address) for n in switch.bgp.neighbors}
        for port in switch.ports:
            if port.peer_kind != "switch" or (port.name, port.peer_device, port.peer_address) in sessions:
                continue
            if switches.get(port.peer_device) is not None and switches[port.peer_device].bgp is None:
                continue  # reported once, for the switch without BGP
            link = ctx.link_at.get((switch.name, port.name))
            yield Hit(
                f"{switch.name} {port.name} (to {port.peer_device}:{port.peer_port}) has no BGP session with "
                f"{port.peer_address}",
                ctx.at(ctx.link_path(link) if link else _ROUTING),
                "plan a session on every switch-to-switch link",
            )
    for name, peers in sorted(unrouted.items()):
        glob = next((i for i, g in enumerate(routing.exclude) if fnmatch.fnmatchcase(name, g)), None)
        path = (*_ROUTING, "exclude", glob) if glob is not None else _ROUTING
        explicit = sorted({p for ends, p in ctx.cable_paths.items() if any(d == name for d, _ in ends)},
                          key=lambda p: p[2])
        yield Hit(
            f"{name} runs no BGP, so its links to {len(peers)} {'switch' if len(peers) == 1 else 'switches'} "
            f"({preview(peers)}) "
            "carry no session",
            ctx.at(path),
            f"run BGP on {name}, or take its links out of the plan",
            tuple(ctx.at(p, note="explicit cable to it") for p in explicit[:3]),
        )


def maximum_paths_below_uplinks(ctx: LintContext) -> Iterator[Hit]:
    """A switch's BGP maximum-paths is below its number of uplinks.

    What it checks:
        ``maximum_paths`` of every BGP speaker must be at least the number of its
        sessions on up ports (to the tier above).

    Why it matters:
        BGP installs at most maximum-paths equal-cost next hops; the uplinks
        beyond them carry nothing towards the rest of the fabric, so the switch
        runs oversubscribed by uplinks / maximum-paths however it was cabled, and
        RoCE flows collide on the uplinks left.

    Example:
        fabric:
          routing:
            maximum_paths: 2

    Fix:
        Remove ``maximum_paths`` (fabgen sizes it from the uplinks) or raise it to
        at least the uplink count.
    """
    short: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for switch in ctx.plan.switches:
        bgp = switch.bgp
        if bgp is None:
            continue
        up = {p.name for p in switch.ports if p.direction == "up"}
        uplinks = sum(1 for n in bgp.neighbors if n.port in up)
        if bgp.maximum_paths < uplinks:
            short[switch.tier].append((switch.name, bgp.maximum_paths, uplinks))
    for tier in ("leaf", "spine", "super_spine"):
        bad = short.get(tier)
        if not bad:
            continue
        name, paths, uplinks = bad[0]
        subject = name if len(bad) == 1 else f"{len(bad)} {_TIER_PLURAL[tier]} ({preview([b[0] for b in bad])})"
        yield Hit(
            f"maximum-paths {paths} on {subject} uses {paths} of {uplinks} uplinks; "
            f"{uplinks - paths} carry no traffic to the rest of the fabric",
            ctx.at(ctx.first_written((*_ROUTING, "maximum_paths"), _ROUTING)),
            f"remove maximum_paths or set it to at least {max(b[2] for b in bad)}",
        )
