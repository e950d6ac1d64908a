"""Read the backend sysctl files of a deployed tree (``sysctl.conf``), and fabgen's render of them, for FG508.

A host installs its ``sysctl.conf`` as ``/etc/sysctl.d/60-fabgen-roce.conf``:
``arp_ignore``, ``arp_announce`` and ``rp_filter`` per backend NIC. The copy
collected from a host is ``hosts/NAME/sysctl.conf``; in a tree fabgen wrote,
hosts share their profile's ``hosts/_profiles/P/sysctl.conf``, which is read
once. Each is held against fabgen's render of what that host installs
(:func:`fabgen.targets.hostnet.config.sysctl_source`), both read as
``systemd-sysctl`` reads them (:mod:`fabgen.targets.hostnet.parse_sysctl`);
:func:`fabgen.lint.rules.sysctl_drift.sysctl_drift` compares the two. A file
that is fabgen's text is not read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError
from fabgen.lint.deployed import DeployedPair, _is_dir, read_collected, render_collected

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan
    from fabgen.targets.hostnet.parse_sysctl import SysctlFile

PROFILE_TARGET = "host-sysctl"
HOST_TARGET = "host-net"
"""The target that writes a host's own sysctl file (a host whose NICs are not all its profile's)."""


def read_sysctls(base: Path, plan: FabricPlan) -> tuple[tuple[str, ...], tuple[DeployedPair[SysctlFile], ...]]:
    """The planned hosts the tree has a ``sysctl.conf`` of their own for (collected, for FG503), and each collected
    file (the hosts', then the profiles' copies) that is not fabgen's text, in name order."""
    from fabgen.targets.hostnet.config import profile_sysctl_path, sysctl_path, sysctl_source
    from fabgen.targets.hostnet.parse_sysctl import read_sysctl
    from fabgen.targets.render import render_files

    if not _is_dir(base / "hosts", base):
        return (), ()
    sources = {h.name: source for h in plan.hosts if (source := sysctl_source(plan.spec, h)) is not None}
    present = tuple(sorted(name for name in sources if os.path.lexists(base / sysctl_path(name))))
    profiles = sorted(p for p in plan.spec.host_profiles if os.path.lexists(base / profile_sysctl_path(p)))
    if not present and not profiles:
        return (), ()
    wanted = [(name, sysctl_path(name), sources[name]) for name in present]
    wanted += [(f"profile {p}", profile_sysctl_path(p), profile_sysctl_path(p)) for p in profiles]
    try:
        rendered = render_files(plan, [PROFILE_TARGET])[0]
        own = [name for name in present if sources[name] == sysctl_path(name)]
        if own:
            rendered.update(render_collected(plan, HOST_TARGET, own, len(plan.hosts)))
    except FabgenError as exc:
        why = "not compared: fabgen cannot render its sysctl file: " + "; ".join(p.message for p in exc.problems[:2])
        return present, tuple(DeployedPair(owner, str(base / rel), problem=why) for owner, rel, _ in wanted)
    out: list[DeployedPair[SysctlFile]] = []
    for owner, rel, source in wanted:
        path = str(base / rel)
        own_text = rendered.get(source)
        if own_text is None:  # a stale profile copy no host installs: nothing applies it, nothing to compare
            continue
        text, why = read_collected(base / rel, base)
        if text is None:
            out.append(DeployedPair(owner, path, problem=why))
            continue
        if text != own_text:
            out.append(DeployedPair(owner, path, read_sysctl(text), read_sysctl(own_text)))
    return present, tuple(out)
