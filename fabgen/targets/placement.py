"""Where a host sits for a scheduler: its leaf group, its pod, the fabric (shared by the Slurm and Kubernetes exports).

A scheduler's topology is a tree: every node has one parent switch. A
rail-optimized host has none: its eight NICs go to eight leaves, one per rail.
What a scheduler needs to know is which hosts are one switch hop apart on
*every* rail, and in the planned layout that is exact: leaf ``j`` of pod ``p``
on rail 0 serves the same hosts as leaf ``j`` of pod ``p`` on each other rail.
So the tree's lowest level is a **leaf group** (pod ``p``, index ``j``: the
rail-0..R-1 leaves of that index), named ``p00-lg01``; above it the **pod**
(its spines), ``p00``; above the pods, in a 3-tier fabric, the super-spine
planes, ``fabric``. In a 2-tier fabric the leaf groups hang straight under
``fabric`` (the spines).

A host's group is read from the leaf of its lowest-rail NIC that is cabled and in service
(explicit cabling may put a host's rails on leaves of different indexes; the
lowest rail decides, so the answer stays one parent per host). A host with no
cabled NIC in service has no place in the fabric and is reported apart.

Group names use only ``[a-z0-9-]`` and numbers of one width per level, so they
are valid Slurm hostlist names (which compress to ``p00-lg[01-04]``) and
Kubernetes label values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabgen.plan import FabricPlan

if TYPE_CHECKING:
    from fabgen.targets.base import RenderContext

FABRIC = "fabric"


@dataclass(frozen=True, slots=True)
class Placement:
    """The scheduler tree of a plan, every list in plan order."""

    tiers: int
    groups: dict[str, tuple[str, ...]]
    """Leaf group name -> its hosts."""
    group_leaves: dict[str, tuple[str, ...]]
    """Leaf group name -> the real leaves it stands for, by rail."""
    pods: dict[str, tuple[str, ...]]
    """Pod name -> its leaf groups (3-tier only; empty for 2-tier)."""
    host_group: dict[str, str]
    """Host name -> its leaf group."""
    unplaced: tuple[str, ...]
    """Hosts without a cabled NIC in service."""

    def pod_of(self, group: str) -> str:
        return group.split("-", 1)[0]


def _width(count: int) -> int:
    return max(2, len(str(count)))


def placement(plan: FabricPlan) -> Placement:
    """The leaf-group tree of ``plan`` (linear in hosts and switches)."""
    layout = plan.layout
    pod_w = _width(max(layout.pods - 1, 0))
    leaves = [s for s in plan.switches if s.tier == "leaf"]
    index_w = _width(max((s.index + 1 for s in leaves), default=1))

    def group_name(pod: int, index: int) -> str:
        return f"p{pod:0{pod_w}d}-lg{index + 1:0{index_w}d}"

    by_name = {s.name: s for s in leaves}
    group_leaves: dict[str, list[str]] = {}
    for leaf in leaves:
        group_leaves.setdefault(group_name(leaf.pod or 0, leaf.index), []).append(leaf.name)
    groups: dict[str, list[str]] = {}
    host_group: dict[str, str] = {}
    unplaced: list[str] = []
    for host in plan.hosts:
        cabled = sorted((nic.rail, nic.leaf) for nic in host.nics
                        if nic.in_service and nic.rail is not None and nic.leaf is not None and nic.leaf in by_name)
        if not cabled:
            unplaced.append(host.name)
            continue
        leaf = by_name[cabled[0][1]]
        name = group_name(leaf.pod or 0, leaf.index)
        groups.setdefault(name, []).append(host.name)
        host_group[host.name] = name
    ordered = sorted(groups)
    pods: dict[str, list[str]] = {}
    if layout.tiers == 3:
        for name in ordered:
            pods.setdefault(name.split("-", 1)[0], []).append(name)
    return Placement(
        tiers=layout.tiers,
        groups={name: tuple(groups[name]) for name in ordered},
        group_leaves={name: tuple(group_leaves.get(name, ())) for name in ordered},
        pods={name: tuple(members) for name, members in sorted(pods.items())},
        host_group=host_group,
        unplaced=tuple(unplaced),
    )


def shared_placement(context: RenderContext) -> Placement:
    """:func:`placement` of the run's plan, made once per render run: the slurm and k8s-labels targets both read
    it (12 ms at 24k hosts each time). Neither changes it."""
    tree: Placement | None = context.cache.get("placement")
    if tree is None:
        tree = context.cache["placement"] = placement(context.plan)
    return tree
