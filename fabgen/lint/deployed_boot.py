"""Read the boot files of a deployed tree (the NIC unit, its udev rule, lldpd's configuration), and fabgen's render
of them, for FG510.

A host installs its profile's ``fabgen-roce-nic.service`` (``/etc/systemd/system``),
``99-fabgen-roce-nic.rules`` (``/etc/udev/rules.d``) and ``lldpd.conf``
(``/etc/lldpd.d/fabgen.conf``). The copies collected from a host are
``hosts/NAME/`` with those names; in a tree fabgen wrote, hosts share their
profile's ``hosts/_profiles/P/`` copies, each read once. Each is held against
fabgen's render for the host's profile, both read as systemd, udevd and lldpd
read them (:mod:`fabgen.targets.hostnet.parse_boot`);
:func:`fabgen.lint.rules.boot_drift.boot_drift` compares the two. A file that is
fabgen's text is not read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError
from fabgen.lint.deployed import DeployedPair, _is_dir, read_collected

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan
    from fabgen.targets.hostnet.parse_boot import BootFile

TARGET = "host-boot"


def _readers() -> dict[str, Callable[[str], BootFile]]:
    """File name -> its reader, in the order findings come."""
    from fabgen.targets.hostnet.boot import UNIT_NAME
    from fabgen.targets.hostnet.parse_boot import read_lldpd_conf, read_udev_rules, read_unit

    return {UNIT_NAME: read_unit, "99-fabgen-roce-nic.rules": read_udev_rules, "lldpd.conf": read_lldpd_conf}


def read_boot_files(base: Path, plan: FabricPlan) -> tuple[tuple[str, ...], tuple[DeployedPair[BootFile], ...]]:
    """The planned hosts the tree has a boot file of their own for (collected, for FG503), and each collected file
    (the hosts', then the profiles' copies) that is not fabgen's text, in name order."""
    from fabgen.targets.render import render_files

    if not _is_dir(base / "hosts", base):
        return (), ()
    readers = _readers()
    profiles = {h.name: h.profile for h in plan.hosts}
    wanted: list[tuple[str, str, str]] = []  # (owner, collected path, the render it is held to)
    for name in sorted(profiles):
        wanted += [(name, f"hosts/{name}/{file}", f"hosts/_profiles/{profiles[name]}/{file}") for file in readers
                   if os.path.lexists(base / "hosts" / name / file)]
    present = tuple(sorted({owner for owner, _, _ in wanted}))
    for profile in sorted(set(profiles.values())):
        wanted += [(f"profile {profile}", rel, rel) for file in readers
                   if os.path.lexists(base / (rel := f"hosts/_profiles/{profile}/{file}"))]
    if not wanted:
        return (), ()
    try:
        rendered = render_files(plan, [TARGET])[0]
    except FabgenError as exc:
        why = "not compared: fabgen cannot render it: " + "; ".join(p.message for p in exc.problems[:2])
        return present, tuple(DeployedPair(owner, str(base / rel), problem=why) for owner, rel, _ in wanted)
    out: list[DeployedPair[BootFile]] = []
    for owner, rel, source in wanted:
        own_text = rendered.get(source)
        if own_text is None:  # a profile without backend NICs has no boot files
            continue
        text, why = read_collected(base / rel, base)
        if text is None:
            out.append(DeployedPair(owner, str(base / rel), problem=why))
        elif text != own_text:
            read = readers[rel.rsplit("/", 1)[1]]
            try:
                found = read(text)
            except ValueError as exc:  # the message names a line and a bound, never the file's words
                out.append(DeployedPair(owner, str(base / rel), problem=f"not read: {exc}"))
                continue
            out.append(DeployedPair(owner, str(base / rel), found, read(own_text)))
    return present, tuple(out)
