"""``nccl-topo``: one NCCL topology file per host profile.

The tree comes from :func:`fabgen.plan.topology.topology_intent`; the template
only prints it. Every file is run through NCCL's own lexical and structural
rules (:func:`~fabgen.targets.nccl.topo_check.check_topology_xml`) before it is
written, because NCCL aborts on a malformed file and silently ignores a wrong one.
"""

from __future__ import annotations

from fabgen.errors import Problem
from fabgen.plan import FabricPlan
from fabgen.plan.topology import CpuIntent, GpuIntent, NetIntent, PciIntent, cpumap, parse_cpulist, topology_intent
from fabgen.source import spec_problem
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.nccl.topo_check import MAX_NODES, MAX_STR_LEN, check_topology_xml

TEMPLATE = "nccl/nccl-topo.xml.j2"


def topology_path(profile: str) -> str:
    """Where a profile's file lands in the output tree."""
    return f"hosts/_profiles/{profile}/nccl-topo.xml"


PciRow = tuple[str, str, str, str, str, int, tuple[str, str, str, str] | None, str | None, str | None, str | None,
               str | None, GpuIntent | None, NetIntent | None]
"""One line of a CPU's PCI tree: (indent, "open" | "leaf" | "close", busid, class, link_speed, link_width,
ids, vendor, device, subsystem_vendor, subsystem_device, gpu, net), the four ids None when ``ids`` is; a "close"
row carries the node's values too, unprinted."""


_NO_IDS = (None, None, None, None)


def pci_rows(cpu: CpuIntent) -> list[PciRow]:
    """A CPU's PCI tree as the lines the template prints, in document order, each node's values in the row.

    Why: the template printed the tree with a recursive macro, and a Jinja macro
    call (a new frame, context and caller object per node) cost more than the
    rest of the file; a flat loop prints the same lines. The values ride in the
    row, unpacked by the loop, because each ``pci.busid`` in a template is a
    call of the environment's guarded ``getattr``: two hundred of them were a
    fifth of the render. The four ids ride apart too: unpacked in the template
    by a ``set`` inside the loop, they were four context lookups on every row.
    A node with neither children, a GPU nor a NIC is a leaf (``<pci .../>``);
    any other opens, and its ``</pci>`` follows its subtree.
    """
    rows: list[PciRow] = []
    stack: list[tuple[PciIntent, str, bool]] = [(pci, "    ", False) for pci in reversed(cpu.children)]
    while stack:
        pci, indent, closing = stack.pop()
        kind = "close" if closing else "open" if pci.children or pci.gpu or pci.net else "leaf"
        rows.append((indent, kind, pci.busid, pci.pci_class, pci.link_speed, pci.link_width, pci.ids,
                     *(pci.ids or _NO_IDS), pci.gpu, pci.net))
        if kind == "open":
            stack.append((pci, indent, True))
            stack.extend((child, indent + "  ", False) for child in reversed(pci.children))
    return rows


def render_topology(context: RenderContext, profile: str) -> str:
    """The text of ``nccl-topo.xml`` for one host profile."""
    intent = topology_intent(context.plan.spec, profile)
    return context.env.get_template(TEMPLATE).render(topo=intent, pci_rows=pci_rows)


def plan_limits(plan: FabricPlan) -> list[Problem]:
    """What NCCL's parser cannot read, said at the profile, not at line 400 of the XML: more than MAX_NODES - 1
    nodes, or a cpumap longer than an attribute value may be."""
    problems = []
    for profile in plan.spec.host_profiles:
        intent = topology_intent(plan.spec, profile)
        count = intent.node_count
        if count >= MAX_NODES:
            problems.append(spec_problem(
                plan.source, f"profile {profile} makes a {count}-node NCCL topology file; NCCL's parser takes at "
                f"most {MAX_NODES - 1} (fewer once it adds what it detects): use nccl.topology: pci, or fewer "
                "NUMA nodes, PCIe switches, GPUs or NICs", ("host_profiles", profile)))
        longest = max((len(cpu.affinity) for cpu in intent.cpus if cpu.affinity), default=0)
        if longest > MAX_STR_LEN:
            problems.append(_affinity_problem(plan, profile, longest))
    return problems


def _affinity_problem(plan: FabricPlan, name: str, length: int) -> Problem:
    """The ``cpus`` list with the highest CPU id sets every node's cpumap width (the machine's CPU count)."""
    profile = plan.spec.host_profiles[name]
    top, index = max((max(parse_cpulist(cpu.cpus)), i) for i, cpu in enumerate(profile.cpus) if cpu.cpus)
    highest = next(n for n in range(top, 0, -1) if len(cpumap([], n)) <= MAX_STR_LEN) - 1
    return spec_problem(
        plan.source, f"CPU {top} makes each NUMA node's cpumap {length} characters; NCCL's topology parser fails "
        f"on an attribute value over {MAX_STR_LEN} (CPU ids up to {highest} fit): leave out this profile's cpus "
        "lists, and NCCL reads each node's affinity from sysfs", ("host_profiles", name, "cpus", index, "cpus"))


def _render(context: RenderContext, profile: str) -> dict[str, str]:
    return {topology_path(profile): render_topology(context, profile)}


def _validate(path: str, text: str) -> list[Problem]:
    return check_topology_xml(text, path)


TARGET = Target(
    name="nccl-topo",
    scope="profile",
    summary="NCCL topology XML (NCCL_TOPO_FILE) per host profile",
    render=_render,
    check=_validate,
    limits=plan_limits,
)
