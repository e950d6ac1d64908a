"""Size a rail-optimized Clos from port counts and the oversubscription target.

Rail r of every host goes to a leaf of rail r. A pod holds ``leaves_per_rail``
leaves of every rail and its own spines; every leaf reaches every spine of its
pod over ``leaf_spine_links`` links. In a 3-tier fabric spine j of every pod
belongs to plane j, and reaches each of the plane's super-spines over
``spine_super_links`` links. Even spread (every switch reaches each upstream
peer over the same number of links) keeps ECMP balanced; among the layouts that
allow it we pick the fewest switches, then the fewest pods.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from fabgen.errors import Problem, SpecError


@dataclass(frozen=True, slots=True)
class TierShape:
    ports: int
    speed: int
    count: int | None = None


@dataclass(frozen=True, slots=True)
class Layout:
    tiers: int
    hosts: int
    rails: int
    hosts_per_leaf: int
    """Host links on the fullest leaf."""
    leaf_uplink_start: int
    """First leaf port (1-based) used for uplinks."""
    pods: int
    leaves_per_rail: int
    """Per pod."""
    spines_per_pod: int
    leaf_spine_links: int
    supers_per_plane: int = 0
    spine_super_links: int = 0
    spine_uplink_start: int = 0

    @property
    def planes(self) -> int:
        return self.spines_per_pod if self.tiers == 3 else 0

    @property
    def hosts_per_pod(self) -> int:
        return self.leaves_per_rail * self.hosts_per_leaf


def _down_capacity(ports: int, down_speed: int, up_speed: int, ratio: Fraction) -> int:
    """Most downlinks a switch can take while keeping down:up bandwidth <= ratio."""
    for down in range(ports - 1, 0, -1):
        up = _uplinks_for(down, down_speed, up_speed, ratio)
        if down + up <= ports:
            return down
    return 0


def _uplinks_for(down: int, down_speed: int, up_speed: int, ratio: Fraction) -> int:
    return math.ceil(Fraction(down * down_speed) / (ratio * up_speed))


def _fail(message: str) -> SpecError:
    return SpecError([Problem(message, file="fabric")])


def size_fabric(
    hosts: int, rails: int, nic_speed: int, leaf: TierShape, spine: TierShape,
    super_spine: TierShape | None, ratio: Fraction,
) -> Layout:
    """The layout for ``hosts`` hosts, or a :class:`SpecError` naming the numbers that do not fit."""
    capacity = _down_capacity(leaf.ports, nic_speed, spine.speed, ratio)
    if capacity == 0:
        raise _fail(f"a {leaf.ports}-port leaf cannot take any host at {ratio}:1 oversubscription")
    per_leaf = min(capacity, hosts)
    leaves_per_rail_total = math.ceil(hosts / capacity)
    uplinks = _uplinks_for(per_leaf, nic_speed, spine.speed, ratio)
    uplink_room = leaf.ports - per_leaf

    if super_spine is None:
        return _two_tier(hosts, rails, per_leaf, capacity, leaves_per_rail_total, uplinks, uplink_room, leaf, spine)
    return _three_tier(hosts, rails, per_leaf, capacity, leaves_per_rail_total, uplinks, uplink_room,
                       leaf, spine, super_spine, ratio)


def _uplink_start(capacity: int, used_down: int, uplinks: int, ports: int) -> int:
    """Uplinks go to the upper half (after the full downlink capacity) when they fit there."""
    return capacity + 1 if capacity + uplinks <= ports else used_down + 1


def _two_tier(hosts: int, rails: int, per_leaf: int, capacity: int, lpr: int, uplinks: int, room: int,
              leaf: TierShape, spine: TierShape) -> Layout:
    leaves = rails * lpr
    candidates = [spine.count] if spine.count else range(1, uplinks + 1)
    for count in candidates:
        links = math.ceil(uplinks / count)
        if count * links <= room and leaves * links <= spine.ports:
            return Layout(tiers=2, hosts=hosts, rails=rails, hosts_per_leaf=per_leaf,
                          leaf_uplink_start=_uplink_start(capacity, per_leaf, count * links, leaf.ports),
                          pods=1, leaves_per_rail=lpr, spines_per_pod=count, leaf_spine_links=links)
    if spine.count:
        raise _fail(f"{spine.count} spines cannot take {leaves} leaves with {uplinks} uplinks each evenly "
                    f"({spine.ports}-port spines, {room} free ports per leaf)")
    raise _fail(f"a 2-tier fabric of {leaves} leaves ({rails} rails x {lpr}) needs spines with at least {leaves} "
                f"ports, have {spine.ports}; add a super_spine tier or use larger spines")


def _three_tier(hosts: int, rails: int, per_leaf: int, capacity: int, lpr_total: int, uplinks: int, room: int,
                leaf: TierShape, spine: TierShape, sup: TierShape, ratio: Fraction) -> Layout:
    best: tuple[tuple[int, int, int], Layout] | None = None
    spine_down_cap = _down_capacity(spine.ports, spine.speed, sup.speed, ratio)
    for lpr in range(min(lpr_total, spine.ports), 0, -1):
        pods = math.ceil(lpr_total / lpr)
        if pods > sup.ports:
            break
        leaves_in_pod = rails * lpr
        spine_counts = [spine.count] if spine.count else sorted({math.ceil(uplinks / k) for k in range(1, uplinks + 1)})
        for spines in spine_counts:
            k1 = math.ceil(uplinks / spines)
            if spines * k1 > room:
                continue
            spine_down = leaves_in_pod * k1
            spine_up = _uplinks_for(spine_down, spine.speed, sup.speed, ratio)
            if spine_down + spine_up > spine.ports:
                continue
            k2_max = sup.ports // pods
            supers = math.ceil(spine_up / k2_max)
            k2 = math.ceil(spine_up / supers)
            if spine_down + supers * k2 > spine.ports:
                continue
            layout = Layout(
                tiers=3, hosts=hosts, rails=rails, hosts_per_leaf=per_leaf,
                leaf_uplink_start=_uplink_start(capacity, per_leaf, spines * k1, leaf.ports),
                pods=pods, leaves_per_rail=lpr, spines_per_pod=spines, leaf_spine_links=k1,
                supers_per_plane=supers, spine_super_links=k2,
                spine_uplink_start=_uplink_start(spine_down_cap, spine_down, supers * k2, spine.ports),
            )
            key = (pods * spines + spines * supers, pods, spines)
            if best is None or key < best[0]:
                best = (key, layout)
    if best is None:
        lpr_max = max(spine_down_cap // rails, 0)
        most = rails * lpr_max * capacity * sup.ports
        raise _fail(
            f"{hosts * rails} NIC ports ({hosts} hosts x {rails} rails) do not fit a 3-tier fabric of "
            f"{leaf.ports}/{spine.ports}/{sup.ports}-port switches at {ratio}:1: it tops out at {most} NIC ports "
            f"({capacity} hosts per leaf, {lpr_max} leaves per rail per pod, {sup.ports} pods)")
    return best[1]
