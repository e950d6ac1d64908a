"""Checks that parts of the spec name each other correctly.

pydantic sees one object at a time; a host group naming a profile that does
not exist, or a NIC on rail 9 of an 8-rail fabric, only shows when parts are
read together. These are input errors (exit 2), not lint findings: nothing can
be planned from such a spec.
"""

from __future__ import annotations

from collections.abc import Callable

from fabgen.errors import Problem
from fabgen.source import DataPath, SourceDoc, format_path
from fabgen.spec.cluster import ClusterSpec
from fabgen.spec.hosts import HostProfile, PcieSwitch
from fabgen.spec.nccl_checks import check_nccl_env
from fabgen.spec.qos import QosPolicy

MAX_HOSTS = 200_000
"""Most hosts one spec may expand to (131k GPUs is 16,384 hosts)."""
MAX_HOST_NAME = 63
"""A hostname's length (one DNS label), which the NIC script's plan file also holds a host name to."""


def within_host_limit(spec: ClusterSpec) -> bool:
    """Whether expanding every group's names is bounded work.

    Each group's count is capped on its own, but 10,000 groups of 200,000 would
    be two billion names: every check that expands names asks this first.
    """
    return sum(g.host_count() for g in spec.hosts) <= MAX_HOSTS


def check_references(spec: ClusterSpec, doc: SourceDoc) -> list[Problem]:
    problems: list[Problem] = []

    def report(message: str, path: DataPath, *, key: bool = False) -> None:
        problems.append(doc.problem(message, path, key=key))

    for pname, profile in spec.host_profiles.items():
        problems.extend(numa_mismatches(pname, profile, doc))
    rails = spec.fabric.rails
    for pname, profile in spec.host_profiles.items():
        by_rail: dict[int, list[str]] = {}
        for index, nic in enumerate(profile.nics):
            if nic.rail is None:
                continue
            if nic.rail >= rails:
                report(f"NIC {nic.name} is on rail {nic.rail}, but the fabric has {rails} rails (0..{rails - 1})",
                       ("host_profiles", pname, "nics", index, "rail"))
                continue
            by_rail.setdefault(nic.rail, []).append(nic.name)
        missing = [r for r in range(rails) if r not in by_rail]
        doubled = {r: names for r, names in by_rail.items() if len(names) > 1}
        if missing:
            report(f"profile {pname} has no backend NIC on rail(s) {', '.join(map(str, missing))}; "
                   f"a {rails}-rail fabric needs one NIC per rail", ("host_profiles", pname, "nics"))
        for rail, names in sorted(doubled.items()):
            report(f"profile {pname} has {len(names)} NICs on rail {rail} ({', '.join(names)}); one NIC per rail",
                   ("host_profiles", pname, "nics"))

    seen_hosts: dict[str, DataPath] = {}
    total = 0
    for gindex, group in enumerate(spec.hosts):
        gpath: DataPath = ("hosts", gindex)
        group_profile = spec.host_profiles.get(group.profile)
        if group_profile is None:
            report(f"host group names profile {group.profile!r}, which is not in host_profiles "
                   f"(have: {', '.join(sorted(spec.host_profiles))})", (*gpath, "profile"))
        total += group.host_count()
        if total > MAX_HOSTS:
            report(f"the spec expands to more than {MAX_HOSTS} hosts", (*gpath, "count"))
            break  # no more names expanded; the checks below still report
        names = group.host_names()
        longest = max(names, key=len, default="")
        if len(longest) > MAX_HOST_NAME:  # a template's index width can pass the limit
            report(f"host name {longest[:24]}... is {len(longest)} characters; a hostname (and the NIC script's "
                   f"HOST) takes at most {MAX_HOST_NAME}", (*gpath, "name"))
        for name in names:
            if name in seen_hosts:
                report(f"host {name} is defined twice (also by {format_path(seen_hosts[name])})", gpath)
            else:
                seen_hosts[name] = gpath
        name_set = set(names)
        for host, override in group.overrides.items():
            opath = (*gpath, "overrides", host)
            if host not in name_set:
                report(f"override for host {host}, which this group does not define", opath, key=True)
            if group_profile is not None:
                nic_names = {n.name for n in group_profile.nics}
                for nindex, out_nic in enumerate(override.nics_out_of_service):
                    if out_nic not in nic_names:
                        report(f"NIC {out_nic} is not in profile {group.profile} (has: {', '.join(sorted(nic_names))})",
                               (*opath, "nics_out_of_service", nindex))

    problems.extend(check_nccl_env(spec, doc))
    _check_classes(spec.qos, ("qos",), report)
    for oindex, switch_override in enumerate(spec.fabric.switch_overrides):
        _check_classes(switch_override.qos, ("fabric", "switch_overrides", oindex, "qos"), report)
    return problems


def numa_mismatches(pname: str, profile: HostProfile, doc: SourceDoc) -> list[Problem]:
    """A GPU or NIC whose ``numa`` differs from its PCIe switch's, located at the device's ``numa``.

    The spec contradicts itself: a device sits on its switch's NUMA node (the switch's
    root port is on one socket), and the topology file puts it there whatever the
    device says, so NCCL and every tool that reads the device's ``numa`` (CPU pinning,
    NIC interrupt affinity) disagree. An error, not a lint finding: no file can be
    written that honours both values.
    """
    owner: dict[tuple[str, str | int], PcieSwitch] = {("gpus", g): s for s in profile.pcie_switches for g in s.gpus}
    owner.update({("nics", n): s for s in profile.pcie_switches for n in s.nics})
    devices: list[tuple[str, int, str | int, str, int]] = [
        ("gpus", i, g.index, f"GPU {g.index}", g.numa) for i, g in enumerate(profile.gpus)]
    devices += [("nics", i, n.name, f"NIC {n.name}", n.numa) for i, n in enumerate(profile.nics)]
    problems = []
    for kind, index, key, label, numa in devices:
        switch = owner.get((kind, key))
        if switch is not None and switch.numa != numa:
            problems.append(doc.problem(
                f"{label} is on NUMA node {numa}, but its PCIe switch {switch.name} is on NUMA node {switch.numa}: "
                f"a device is on its switch's node (NCCL's topology file puts it under NUMA {switch.numa}); "
                "correct one of the two", ("host_profiles", pname, kind, index, "numa")))
    return problems


def _check_classes(qos: QosPolicy, path: DataPath, report: Callable[[str, DataPath], None]) -> None:
    roles = [name for name, c in qos.classes.items() if c.role == "roce"]
    if len(roles) != 1:
        report(f"exactly one traffic class needs role: roce (found {len(roles)}: {', '.join(roles) or 'none'})",
               (*path, "classes"))
    for role in ("cnp", "cts"):
        named = [name for name, c in qos.classes.items() if c.role == role]
        if len(named) > 1:
            report(f"at most one traffic class can have role: {role} (found {', '.join(named)})", (*path, "classes"))
    for name, c in qos.classes.items():
        if c.role == "cts" and not isinstance(c.dscp, list):
            # NCCL_IB_FIFO_TC is one DSCP; "every DSCP no class names" is not one.
            report("the cts class needs its own DSCP list (NCCL_IB_FIFO_TC marks one DSCP), not dscp: other",
                   (*path, "classes", name, "dscp"))
    others = [name for name, c in qos.classes.items() if c.dscp == "other"]
    if len(others) > 1:
        report(f"only one class can take dscp: other (found {', '.join(others)})", (*path, "classes"))

