"""FG3xx capacity: the fabric as planned must carry what the spec promises.

The planner sizes the Clos to the oversubscription target and the radix of
each tier; explicit cabling and forced switch counts can still take a switch
past either. These rules compare the plan, switch by switch, with the spec.
"""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from fabgen.lint.context import LintContext, preview
from fabgen.lint.finding import Hit
from fabgen.plan.model import Switch
from fabgen.source import DataPath

_TIER_LABEL = {"leaf": "leaf", "spine": "spine", "super_spine": "super-spine"}
_TIER_PLURAL = {"leaf": "leaves", "spine": "spines", "super_spine": "super-spines"}


def _switches_phrase(tier: str, names: list[str]) -> str:
    """``leaf leaf-r0-p00-01 exceeds`` / ``3 leaves (a, b, c) exceed``."""
    if len(names) == 1:
        return f"{_TIER_LABEL[tier]} {names[0]} exceeds"
    return f"{len(names)} {_TIER_PLURAL[tier]} ({preview(names)}) exceed"


def _ratio(value: Fraction) -> str:
    return f"{float(value):.2f}:1".replace(".00:", ":")


def _explicit_near(ctx: LintContext, names: set[str]) -> tuple[DataPath, ...]:
    """``fabric.cabling`` entries touching any of ``names``, in spec order."""
    found = [path for ends, path in ctx.cable_paths.items() if any(d in names for d, _ in ends)]
    return tuple(sorted(found, key=lambda p: p[2]))


def oversubscription_exceeded(ctx: LintContext) -> Iterator[Hit]:
    """A switch's downlink bandwidth exceeds its uplinks by more than the target.

    What it checks:
        For every leaf, and every spine below a super-spine tier: the sum of the
        speeds of its down ports divided by the sum of its up ports must not exceed
        its tier's ``oversubscription`` (default ``fabric.oversubscription``). A switch with downlinks and no uplinks below
        the top tier counts as infinitely oversubscribed.

    Why it matters:
        Collective traffic is all-to-all at full rate: at 2:1, half of it queues on
        the uplinks, PFC pauses spread back to the GPUs, and every job runs at the
        speed of its most oversubscribed leaf.

    Example:
        fabric:
          cabling:
            - {a: "lab01:ens1np0", b: "leaf-r0-p00-01:Ethernet17/1"}   # an uplink port

    Fix:
        Restore the uplinks (or add some), or move hosts to leaves with spare
        uplink capacity; raise the target only if the design really is oversubscribed.
    """
    fabric = ctx.spec.fabric
    top = "super_spine" if ctx.plan.layout.tiers == 3 else "spine"
    worst: dict[str, list[tuple[Fraction | None, Switch]]] = {}
    for switch in ctx.plan.switches:
        if switch.tier == top:
            continue
        down = sum(p.speed for p in switch.ports if p.direction == "down")
        up = sum(p.speed for p in switch.ports if p.direction == "up")
        if not down:
            continue
        ratio = Fraction(down, up) if up else None
        if ratio is None or ratio > fabric.tier_ratio(switch.tier):
            worst.setdefault(switch.tier, []).append((ratio, switch))
    for tier in ("leaf", "spine"):
        bad = worst.get(tier)
        if not bad:
            continue
        bad.sort(key=lambda item: (item[0] is not None, -(item[0] or 0), item[1].name))
        ratio, first = bad[0]
        shown = "no uplinks" if ratio is None else _ratio(ratio)
        names = [s.name for _, s in bad]
        yield Hit(
            f"{_switches_phrase(tier, names)} the {fabric.tier_ratio_text(tier)} oversubscription target"
            + (f": {shown}" if len(names) == 1 else f"; worst: {first.name} at {shown}"),
            ctx.at(ctx.first_written(("fabric", "tiers", tier, "oversubscription"), ("fabric", "oversubscription"),
                                     ("fabric",))),
            "restore or add uplinks, or move hosts off these switches",
            tuple(ctx.at(p, note="explicit cable on one of them") for p in _explicit_near(ctx, set(names))[:3]),
        )


def radix_exceeded(ctx: LintContext) -> Iterator[Hit]:
    """A switch has more cables than ports.

    What it checks:
        The number of planned links on every switch must not exceed its tier's
        ``ports``.

    Why it matters:
        Links that do not fit are not cabled: hosts lose rails, uplinks vanish and
        the fabric is not the one the plan describes.

    Example:
        fabric:
          tiers:
            leaf: {os: eos, model: 7060DX5-32, ports: 4, speed: 400G}
          cabling:
            - {a: "leaf-r0-p00-01:Ethernet5/1", b: "spine-01:Ethernet9/1"}

    Fix:
        Use switches with more ports, or take links off the switch.
    """
    for switch in ctx.plan.switches:
        count = len(switch.ports)
        if count > switch.radix:
            yield Hit(
                f"{switch.name} has {count} cables for {switch.radix} ports",
                ctx.at(ctx.first_written(ctx.tier_path(switch.tier, "ports"), ctx.tier_path(switch.tier))),
                "use a larger switch or remove links",
                tuple(ctx.at(p, note="explicit cable") for p in _explicit_near(ctx, {switch.name})[:3]),
            )


def top_tier_too_small(ctx: LintContext) -> Iterator[Hit]:
    """The fabric has more pods than the given top tier can hold.

    What it checks:
        When ``fabric.tiers.super_spine.count`` says how many super-spines exist, the
        plan's pods must fit them: each pod needs ``planes x super-spines per plane``
        switch ports times the links from each spine.

    Why it matters:
        The planner sizes the top tier to fit the hosts; a site that owns fewer
        top-tier switches than that cannot connect every pod, and the pods left out
        reach each other only through fewer planes, or not at all.

    Example:
        fabric:
          tiers:
            super_spine: {os: eos, model: 7060DX5-64S, ports: 64, speed: 400G, count: 256}

    Fix:
        Buy the switches the plan needs (``fabgen plan`` prints them), use larger
        ones, or plan fewer hosts.
    """
    tiers = ctx.spec.fabric.tiers
    layout = ctx.plan.layout
    sup = tiers.super_spine
    if sup is None or sup.count is None or layout.tiers != 3:
        return
    planned = layout.planes * layout.supers_per_plane
    if sup.count >= planned:
        return
    per_plane = sup.count // layout.planes if layout.planes else 0
    per_pod = max(layout.spine_super_links, 1)
    holds = per_plane * sup.ports // (layout.supers_per_plane * per_pod) if layout.supers_per_plane else 0
    yield Hit(
        f"the fabric needs {layout.pods} pods, which take {planned} super-spines ({layout.planes} planes x "
        f"{layout.supers_per_plane}); {sup.count} super-spines hold at most {min(holds, layout.pods)} pods",
        ctx.at(ctx.first_written(ctx.tier_path("super_spine", "count"), ctx.tier_path("super_spine"))),
        f"provide {planned} super-spines, larger ones, or fewer hosts",
    )
