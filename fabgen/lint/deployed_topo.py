"""Read the NCCL topology files of a deployed tree (``nccl-topo.xml``), and fabgen's render of them, for FG509.

A host installs its profile's ``nccl-topo.xml`` where ``NCCL_TOPO_FILE`` points
(``/etc/fabgen/nccl-topo.xml`` by default). The copy collected from a host is
``hosts/NAME/nccl-topo.xml``; in a tree fabgen wrote, hosts share their
profile's ``hosts/_profiles/P/nccl-topo.xml``, which is read once. Each is held
against fabgen's render for that profile, both read as NCCL reads them
(:mod:`fabgen.targets.nccl.parse_topo`); :func:`fabgen.lint.rules.topo_drift.topo_drift`
compares the two. A file that is fabgen's text is not read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError
from fabgen.lint.deployed import DeployedPair, _is_dir, read_collected

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan
    from fabgen.targets.nccl.parse_topo import Topology

TARGET = "nccl-topo"
FILE = "nccl-topo.xml"


def host_topology_path(host: str) -> str:
    """Where a host's collected copy of its topology file sits in a deployed tree."""
    return f"hosts/{host}/{FILE}"


def read_topologies(base: Path, plan: FabricPlan) -> tuple[tuple[str, ...], tuple[DeployedPair[Topology], ...]]:
    """The planned hosts the tree has a ``nccl-topo.xml`` of their own for (collected, for FG503), and each collected
    file (the hosts', then the profiles' copies) that is not fabgen's text, in name order."""
    from fabgen.targets.nccl.parse_topo import TopologyUnreadable, read_topology
    from fabgen.targets.nccl.topo import topology_path
    from fabgen.targets.render import render_files

    if not _is_dir(base / "hosts", base):
        return (), ()
    profiles = {h.name: h.profile for h in plan.hosts}
    present = tuple(sorted(name for name in profiles if os.path.lexists(base / host_topology_path(name))))
    copies = sorted(p for p in plan.spec.host_profiles if os.path.lexists(base / topology_path(p)))
    if not present and not copies:
        return (), ()
    wanted = [(name, host_topology_path(name), topology_path(profiles[name])) for name in present]
    wanted += [(f"profile {p}", topology_path(p), topology_path(p)) for p in copies]
    try:
        rendered = render_files(plan, [TARGET])[0]
    except FabgenError as exc:
        why = "not compared: fabgen cannot render its topology: " + "; ".join(p.message for p in exc.problems[:2])
        return present, tuple(DeployedPair(owner, str(base / rel), problem=why) for owner, rel, _ in wanted)
    installed = {topology_path(p) for p in profiles.values()}
    out: list[DeployedPair[Topology]] = []
    for owner, rel, source in wanted:
        path = str(base / rel)
        own_text = rendered.get(source)
        if own_text is None or source not in installed:  # a profile without a file, or a copy no host installs
            continue
        text, why = read_collected(base / rel, base)
        if text is None:
            out.append(DeployedPair(owner, path, problem=why))
            continue
        if text == own_text:
            continue
        try:
            found = read_topology(text, path)
        except TopologyUnreadable as exc:
            out.append(DeployedPair(owner, path, problem=str(exc), line=exc.line))
            continue
        out.append(DeployedPair(owner, path, found, read_topology(own_text, source)))
    return present, tuple(out)
