"""Read the files every host installs from its profile, collected back, and fabgen's render of them: the NCCL
topology (FG509), and the NIC unit, its udev rule and lldpd's configuration (FG510).

A host installs its profile's ``hosts/_profiles/P/FILE`` (``install.json`` says
where: ``nccl-topo.xml`` where ``NCCL_TOPO_FILE`` points, the unit in
``/etc/systemd/system``, the rule in ``/etc/udev/rules.d``, ``lldpd.conf`` as
``/etc/lldpd.d/fabgen.conf``). The copy collected from a host is
``hosts/NAME/FILE``; in a tree fabgen wrote, hosts share the profile's copy,
which is read once. Each is held against fabgen's render for the host's profile,
both read by the file's reader, as its consumer reads it
(:mod:`fabgen.targets.nccl.parse_topo`, :mod:`fabgen.targets.hostnet.parse_boot`).
A file that is fabgen's text is not read; a copy of a profile no host has is
applied by nobody and not compared.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from fabgen.errors import FabgenError
from fabgen.lint.deployed import DeployedPair, _is_dir, read_collected

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan
    from fabgen.targets.hostnet.parse_boot import BootFile
    from fabgen.targets.nccl.parse_topo import Topology

T = TypeVar("T")
Collected = tuple[tuple[str, ...], tuple[DeployedPair[T], ...]]
"""The planned hosts the tree has such a file of their own for (collected, for FG503), and each collected file that
is not fabgen's text, the hosts' then the profiles' copies, in name order."""


def host_copy_path(host: str, file: str) -> str:
    """Where a host's collected copy of a profile file sits in a deployed tree."""
    return f"hosts/{host}/{file}"


def read_topologies(base: Path, plan: FabricPlan) -> Collected[Topology]:
    from fabgen.targets.nccl.parse_topo import read_topology

    return read_profile_files(base, plan, "nccl-topo", {"nccl-topo.xml": read_topology})


def read_boot_files(base: Path, plan: FabricPlan) -> Collected[BootFile]:
    from fabgen.targets.hostnet.boot import UNIT_NAME
    from fabgen.targets.hostnet.parse_boot import read_lldpd_conf, read_udev_rules, read_unit

    readers: dict[str, Callable[[str], BootFile]] = {
        UNIT_NAME: read_unit, "99-fabgen-roce-nic.rules": read_udev_rules, "lldpd.conf": read_lldpd_conf}
    return read_profile_files(base, plan, "host-boot", readers)


def read_profile_files(base: Path, plan: FabricPlan, target: str,
                       readers: Mapping[str, Callable[[str], T]]) -> Collected[T]:
    """The files ``target`` writes per profile, by name, each with its reader; a reader's ValueError says why a file
    is not read (with its ``line`` where it has one), in words that are the finding's."""
    from fabgen.targets.render import render_files

    if not _is_dir(base / "hosts", base):
        return (), ()
    profiles = {h.name: h.profile for h in plan.hosts}
    wanted: list[tuple[str, str, str]] = []  # (owner, collected path, the render it is held to)
    for name in sorted(profiles):
        wanted += [(name, host_copy_path(name, file), f"hosts/_profiles/{profiles[name]}/{file}") for file in readers
                   if os.path.lexists(base / host_copy_path(name, file))]
    present = tuple(sorted({owner for owner, _, _ in wanted}))
    for profile in sorted(set(profiles.values())):
        wanted += [(f"profile {profile}", rel, rel) for file in readers
                   if os.path.lexists(base / (rel := f"hosts/_profiles/{profile}/{file}"))]
    if not wanted:
        return (), ()
    try:
        rendered = render_files(plan, [target])[0]
    except FabgenError as exc:
        why = "not compared: fabgen cannot render it: " + "; ".join(p.message for p in exc.problems[:2])
        return present, tuple(DeployedPair(owner, str(base / rel), problem=why) for owner, rel, _ in wanted)
    out: list[DeployedPair[T]] = []
    for owner, rel, source in wanted:
        own_text = rendered.get(source)
        if own_text is None:  # a profile the target writes no such file for
            continue
        text, why = read_collected(base / rel, base)
        if text is None:
            out.append(DeployedPair(owner, str(base / rel), problem=why))
        elif text != own_text:
            read = readers[rel.rsplit("/", 1)[1]]
            try:
                found = read(text)
            except ValueError as exc:  # the message names a line or a bound, never the file's words
                out.append(DeployedPair(owner, str(base / rel), problem=str(exc), line=getattr(exc, "line", 1)))
                continue
            out.append(DeployedPair(owner, str(base / rel), found, read(own_text)))
    return present, tuple(out)
