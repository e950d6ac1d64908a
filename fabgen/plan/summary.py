"""What ``fabgen plan`` prints: the fabric in numbers, computed from the plan itself."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from fabgen.plan.model import FabricPlan
from fabgen.plan.routing import routing_summary, routing_table

_TIER_LABEL = {"leaf": "leaf", "spine": "spine", "super_spine": "super-spine"}
_ROLE_LABEL = {"host-leaf": "host-leaf", "leaf-spine": "leaf-spine", "spine-superspine": "spine-super-spine"}


def _ratio(value: Fraction) -> str:
    return f"{value.numerator}:{value.denominator}" if value.denominator != 1 else f"{value.numerator}:1"


def summary(plan: FabricPlan) -> dict[str, object]:
    spec = plan.spec
    layout = plan.layout
    gpus = sum(len(spec.host_profiles[h.profile].gpus) for h in plan.hosts)
    switches = Counter(s.tier for s in plan.switches)
    links = Counter(link.role for link in plan.links)
    tiers: dict[str, dict[str, object]] = {}
    for tier in ("leaf", "spine", "super_spine"):
        members = [s for s in plan.switches if s.tier == tier]
        if not members:
            continue
        worst: Fraction | None = None
        most_used = 0
        for switch in members:
            down = sum(p.speed for p in switch.ports if p.direction == "down")
            up = sum(p.speed for p in switch.ports if p.direction == "up")
            most_used = max(most_used, len(switch.ports))
            if up:
                ratio = Fraction(down, up)
                worst = ratio if worst is None or ratio > worst else worst
        tiers[_TIER_LABEL[tier]] = {
            "switches": len(members),
            "ports": members[0].radix,
            "ports_used_max": most_used,
            "oversubscription": _ratio(worst) if worst is not None else "top tier",
        }
    out: dict[str, object] = {
        "cluster": spec.cluster.name,
        "hosts": len(plan.hosts),
        "gpus": gpus,
        "rails": spec.fabric.rails,
        "tiers": layout.tiers,
        "pods": layout.pods,
        "leaves_per_rail_per_pod": layout.leaves_per_rail,
        "leaves_per_pod": layout.leaves_per_rail * layout.groups,
        "spines_per_pod" if layout.tiers == 3 else "spines": layout.spines_per_pod,
        "switches": {_TIER_LABEL[t]: n for t, n in sorted(switches.items())},
        "switches_total": len(plan.switches),
        "links": {_ROLE_LABEL[r]: n for r, n in sorted(links.items())},
        "links_total": len(plan.links),
        "per_tier": tiers,
    }
    if layout.tiers == 3:
        out["planes"] = layout.planes
        out["super_spines_per_plane"] = layout.supers_per_plane
        out["links_spine_to_each_super_spine"] = layout.spine_super_links
    out["links_leaf_to_each_spine"] = layout.leaf_spine_links
    out["topology"] = "rack" if layout.rack else "rail"
    out["hosts_per_leaf"] = _hosts_per_leaf(plan)
    routing = routing_summary(plan.switches, spec.fabric.routing.asn_scheme)
    if routing is not None:
        out["routing"] = routing
    return out


def _hosts_per_leaf(plan: FabricPlan) -> dict[str, int]:
    """Fewest and most hosts on a leaf that has any: an uneven fill hides behind "ports used"."""
    hosts: dict[str, set[str]] = {}
    for link in plan.links:
        if link.role == "host-leaf":
            hosts.setdefault(link.b_device, set()).add(link.a_device)
    counts = [len(v) for v in hosts.values()] or [0]
    return {"min": min(counts), "max": max(counts)}


def summary_table(plan: FabricPlan) -> str:
    s = summary(plan)
    layout = plan.layout
    lines = [
        f"cluster {s['cluster']}: {s['hosts']:,} hosts, {s['gpus']:,} GPUs, {s['rails']} rails, {s['tiers']}-tier",
    ]
    per = f"racks of {layout.hosts_per_leaf} hosts" if layout.rack else f"{layout.leaves_per_rail} per rail"
    if layout.tiers == 3:
        lines.append(f"{layout.pods} pods of {s['leaves_per_pod']} leaves ({per}) "
                     f"and {layout.spines_per_pod} spines; {layout.planes} planes of {layout.supers_per_plane} "
                     f"super-spines, {layout.spine_super_links} link(s) from each spine to each")
    else:
        lines.append(f"{s['leaves_per_pod']} leaves ({per}), "
                     f"{layout.spines_per_pod} spines, {layout.leaf_spine_links} link(s) from each leaf to each spine")
    fill = s["hosts_per_leaf"]
    lines.append(f"{'rack (ToR)' if layout.rack else 'rail-optimized'} leaves: {fill['min']}"  # type: ignore[index]
                 + (f"..{fill['max']}" if fill["min"] != fill["max"] else "")  # type: ignore[index]
                 + " hosts per leaf")
    lines.append("")
    lines.append(f"{'tier':<12} {'switches':>9} {'ports used':>11} {'oversub':>9}")
    for name, row in s["per_tier"].items():  # type: ignore[attr-defined]
        used = f"{row['ports_used_max']}/{row['ports']}"
        lines.append(f"{name:<12} {row['switches']:>9,} {used:>11} {row['oversubscription']:>9}")
    lines.append(f"{'total':<12} {s['switches_total']:>9,}")
    lines.append("")
    lines.append(f"{'links':<18} {'count':>9}")
    for name, count in s["links"].items():  # type: ignore[attr-defined]
        lines.append(f"{name:<18} {count:>9,}")
    lines.append(f"{'total':<18} {s['links_total']:>9,}")
    if "routing" in s:
        lines.append("")
        lines.extend(routing_table(s["routing"]))  # type: ignore[arg-type]
    return "\n".join(lines) + "\n"
