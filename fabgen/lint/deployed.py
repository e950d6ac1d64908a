"""Read a deployed tree (fabgen's output layout, collected back from the devices) for comparison.

``fabgen lint SPEC --deployed DIR`` compares what devices run with what the
plan says, semantically: a host's ``nccl.conf`` is compared variable by variable
(comments, order and quoting do not matter), a switch configuration through
the OS-neutral :class:`~fabgen.targets.qos_common.CommonQos` and
:class:`~fabgen.targets.routing_common.CommonRouting` pictures its OS parsers
extract. The expected picture of a switch is the parse of what fabgen
itself renders for it, so what an OS cannot express (NVUE has no restore time)
never shows up as drift.

Layout read::

    DIR/hosts/NAME/nccl.conf        NCCL_CONF_FILE syntax
    DIR/hosts/NAME/nccl.env         systemd EnvironmentFile
    DIR/hosts/NAME/netplan.yaml     netplan v2, or nm/fabgen-NETDEV.nmconnection keyfiles
                                    (:mod:`fabgen.lint.deployed_hostnet`)
    DIR/hosts/NAME/roce-nic.conf    the NIC plan roce-nic.sh applies (:mod:`fabgen.lint.deployed_nic`)
    DIR/hosts/NAME/sysctl.conf      /etc/sysctl.d/60-fabgen-roce.conf (:mod:`fabgen.lint.deployed_sysctl`)
    DIR/hosts/NAME/nccl-topo.xml    the file NCCL_TOPO_FILE names (:mod:`fabgen.lint.deployed_profile`)
    DIR/hosts/NAME/fabgen-roce-nic.service, 99-fabgen-roce-nic.rules, lldpd.conf
                                    the NIC unit, its udev rule, lldpd (:mod:`fabgen.lint.deployed_profile`)
    DIR/switches/NAME.cfg           EOS
    DIR/switches/NAME/config_db.json  SONiC
    DIR/switches/NAME/startup.yaml  Cumulus NVUE

Directories starting with ``_`` (``hosts/_profiles``) are fabgen's shared files
and are not devices. A host collected back has its own ``nccl.conf`` (what its
``/etc/nccl.conf`` holds); in a tree as ``fabgen generate`` writes it, a host that
installs its profile's pair has none, and is read from the
``hosts/_profiles/PROFILE/`` copy its install map names, once for all such hosts.
Which file holds a switch OS's configuration, and how it reads back, is that
OS target's :class:`~fabgen.targets.base.ReadBack` row in the registry.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from fabgen.bounded import MAX_DEPLOYED_BYTES, inside, load_json, read_text
from fabgen.errors import FabgenError, Problem
from fabgen.forked import can_fork, forked_slices, slices
from fabgen.lint.finding import Hit, Location

if TYPE_CHECKING:
    from fabgen.lint.deployed_hostnet import DeployedHostNetwork
    from fabgen.plan.model import FabricPlan, Switch
    from fabgen.targets.base import ReadBack, Target
    from fabgen.targets.hostnet.parse_boot import BootFile
    from fabgen.targets.hostnet.parse_sysctl import SysctlFile
    from fabgen.targets.mlx5.parse import NicPlan
    from fabgen.targets.nccl.parse_topo import Topology
    from fabgen.targets.qos_common import CommonQos
    from fabgen.targets.routing_common import CommonRouting


HOST_FILES = ("nccl.conf", "nccl.env")


@dataclass(frozen=True)
class DeployedEnv:
    """The NCCL variables of one deployed file, as NCCL or systemd reads it: ``{name: (value, line)}``."""

    file: str
    values: dict[str, tuple[str, int]]
    profile: str = ""
    """The profile whose shared copy this is (every host of the profile that installs it holds the same)."""


T = TypeVar("T")


@dataclass(frozen=True)
class DeployedPair(Generic[T]):
    """One collected file that is not fabgen's text, read as its consumer reads it, with fabgen's render read
    alike; or why it was not compared (a link, a file its consumer refuses: the message is redacted)."""

    owner: str
    """The host, or ``profile P`` for a profile's shared copy."""
    file: str
    found: T | None = None
    expected: T | None = None
    problem: str = ""
    line: int = 1
    """Where the problem is, when the consumer's reader says."""


@dataclass(frozen=True)
class DeployedSwitch:
    """A deployed switch configuration with its parsed picture and the planned one."""

    name: str
    file: str
    text: str
    qos: CommonQos
    expected: CommonQos
    routing: CommonRouting | None
    """The file's routing picture; None when the file is fabgen's own bytes (``text`` is what fabgen renders for
    the switch), whose routing is fabgen's by construction: not parsed (at 24k GPUs, half of reading a tree)."""
    expected_routing: CommonRouting | None
    """The parse of what fabgen renders for this switch (unlike QoS, every switch's own); None as ``routing``."""


@dataclass(frozen=True)
class Deployed:
    root: str
    hosts: dict[str, tuple[DeployedEnv, ...]]
    switches: tuple[DeployedSwitch, ...]
    missing: tuple[str, ...] = ()
    """Planned devices without any file in the tree."""
    unknown: tuple[str, ...] = ()
    """Device entries in the tree that the plan does not have (relative paths)."""
    unreadable: tuple[tuple[str, str], ...] = ()
    """(file, why) for switch files the OS parser refused."""
    notes: tuple[str, ...] = field(default=())
    """What could not be checked in this fabgen (no parser for an OS), for the operator."""
    host_networks: tuple[DeployedHostNetwork, ...] = ()
    """Each collected host's netplan or keyfiles with the parse of fabgen's render (FG506)."""
    nic_plans: tuple[DeployedPair[NicPlan], ...] = ()
    """Each collected ``roce-nic.conf`` that is not fabgen's text, with both parses (FG507)."""
    sysctls: tuple[DeployedPair[SysctlFile], ...] = ()
    """Each collected backend ``sysctl.conf`` that is not fabgen's text, with both reads (FG508)."""
    topologies: tuple[DeployedPair[Topology], ...] = ()
    """Each collected ``nccl-topo.xml`` that is not fabgen's text, with both reads as NCCL reads them (FG509)."""
    boot_files: tuple[DeployedPair[BootFile], ...] = ()
    """Each collected NIC unit, udev rule or ``lldpd.conf`` that is not fabgen's text, with both reads (FG510)."""


def pair_hits(pair: DeployedPair[Any], name: str, said: Sequence[str], line: int, hint: str) -> Iterator[Hit]:
    """The finding of one collected host file ``name``: why it was not compared, or the ways it differs (the first
    four, then how many more) at ``line`` (the file's first when 0); none when it does not differ."""
    if pair.found is None or pair.expected is None:
        yield Hit(f"{pair.owner}: {name} {pair.problem}", Location(pair.file, pair.line, 1), hint)
    elif said:
        more = f" and {len(said) - 4} more" if len(said) > 4 else ""
        yield Hit(f"{pair.owner}: {name} differs from the plan: {'; '.join(said[:4])}{more}",
                  Location(pair.file, line or 1, 1), hint)


def _read(path: Path, base: Path) -> str:
    """A deployed file's text: a regular file inside ``base`` (a link out of the tree is never followed, so a
    ``nccl.conf -> /etc/shadow`` cannot put someone's secrets into a CI log), at most 16 MiB."""
    if not inside(base, path.parent) or path.is_symlink():
        raise FabgenError([Problem("is a symbolic link (or under one); not followed", file=str(path))])
    return read_text(path, MAX_DEPLOYED_BYTES, what="deployed file", follow=False)


def read_collected(path: Path, base: Path) -> tuple[str | None, str]:
    """(text, "") of a collected file as :func:`_read` reads it, or (None, why not): the reason redacted, for a
    finding."""
    try:
        return _read(path, base), ""
    except FabgenError as exc:
        return None, "not read: " + "; ".join(redact(p.message, set()) for p in exc.problems[:2])


_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


def redact(reason: str, known: set[str]) -> str:
    """``reason`` with every quoted value that is not in ``known`` (names the plan has) replaced by ``'...'``.

    The switch parsers quote what they found in the file (``port 'x' has no ...``); a deployed file may hold
    anything, and a lint report must not carry a value the plan does not.
    """
    return _QUOTED.sub(lambda m: m.group() if m.group()[1:-1] in known else "'...'", reason)


def _is_dir(path: Path, base: Path) -> bool:
    """A real directory of the tree: not a link, not leading out."""
    return not path.is_symlink() and path.is_dir() and inside(base, path)


def render_collected(plan: FabricPlan, target: str, present: Sequence[str], planned: int,
                     jobs: int = 1) -> dict[str, str]:
    """What ``target`` renders for the devices of the tree, ``present`` of its ``planned`` many, in one render (a
    render per device costs milliseconds each: seconds at thousands): every device's when the tree has them all,
    else by name, escaped (a name is no glob). Raises FabgenError as the render does."""
    from fabgen.targets.render import render_files

    devices = None if len(present) == planned else [glob.escape(name) for name in present]
    return render_files(plan, [target], devices, jobs=jobs)[0]


def _own_files(plan: FabricPlan, target: Target, fmt: ReadBack, base: Path, jobs: int = 1) -> dict[str, str] | None:
    """What fabgen renders for every switch of ``fmt.os`` the tree has a file of (:func:`render_collected`); None
    when that render fails, and each switch is then rendered alone to say which cannot be."""
    mine = [s.name for s in plan.switches if s.os == fmt.os]
    names = [name for name in mine if os.path.lexists(base / fmt.path.format(name=name))]
    try:
        return render_collected(plan, target.name, names, len(mine), jobs)
    except FabgenError:
        return None


def _expected(plan: FabricPlan, switch: Switch, target: Target, fmt: ReadBack,
              qos_cache: dict[tuple[str, int], CommonQos],
              files: dict[str, str] | None) -> tuple[CommonQos, str] | str:
    """The QoS picture of what fabgen renders for ``switch`` (``files``, else its own render) and that text, or why
    there are none.

    The QoS picture is parsed once per policy (``qos_cache``); the routing picture, every switch's own, only when
    the collected file differs (:func:`_read_switch`).
    """
    from fabgen.targets.render import render_files

    if files is None:
        try:
            files, _ = render_files(plan, [target.name], [switch.name])
        except FabgenError as exc:
            return "fabgen cannot render it: " + "; ".join(p.message for p in exc.problems[:2])
    text = files.get(fmt.path.format(name=switch.name))
    if text is None:
        return f"the {target.name} target writes no {fmt.path.format(name=switch.name)}"
    key = (fmt.os, id(switch.qos))
    if key not in qos_cache:
        try:
            qos_cache[key] = fmt.parse(_own_data(fmt, text))
        except (ValueError, KeyError, TypeError) as exc:
            return _unreadable_own(exc)
    return qos_cache[key], text


def _own_data(fmt: ReadBack, text: str) -> Any:
    """What the OS reader takes of fabgen's own text (its JSON, or the text)."""
    return json.loads(text) if fmt.kind == "json" else text


def _unreadable_own(exc: Exception) -> str:
    return f"cannot read fabgen's own output back: {exc}"


def read_deployed(root: Path | str, plan: FabricPlan, jobs: int = 1) -> Deployed:
    """Read ``root`` for the devices of ``plan``; raise :class:`FabgenError` when it is not such a tree.

    ``jobs > 1`` renders fabgen's switch files and parses the collected ones in that many forked worker processes
    (the same result: a 24k tree of switch files that are not fabgen's text parses 2,048 configurations three
    times, half a minute on one core).
    """
    from fabgen.targets.nccl.conf import parse_nccl_conf_located, parse_systemd_env_located
    from fabgen.targets.nccl.env import nccl_sources, shares_profile
    from fabgen.targets.registry import read_backs

    base = Path(root)
    if not base.is_dir():
        raise FabgenError([Problem("no such directory (expected fabgen's output layout: hosts/, switches/)",
                                   file=str(base))])
    if not (base / "hosts").is_dir() and not (base / "switches").is_dir():
        raise FabgenError([Problem("has neither hosts/ nor switches/: not a tree in fabgen's output layout",
                                   file=str(base))])
    host_names = {h.name for h in plan.hosts}
    switch_names = {s.name for s in plan.switches}

    hosts: dict[str, tuple[DeployedEnv, ...]] = {}
    shared: dict[str, DeployedEnv] = {}  # a profile's copy, read once for all the hosts that install it
    unknown: list[str] = []
    if _is_dir(base / "hosts", base):
        for entry in sorted((base / "hosts").iterdir()):
            if entry.name.startswith((".", "_")) or not _is_dir(entry, base):
                continue
            if entry.name not in host_names:
                unknown.append(f"hosts/{entry.name}")
                continue
            files = []
            host = plan.host(entry.name)
            for name, source in zip(HOST_FILES, nccl_sources(plan, host), strict=True):
                path, profile = entry / name, ""
                if not os.path.lexists(path) and shares_profile(plan, host) and os.path.lexists(base / source):
                    path, profile = base / source, host.profile  # a generated tree: the copy the host installs
                if not os.path.lexists(path):
                    continue
                parsed = shared.get(str(path))
                if parsed is None:
                    reader = parse_nccl_conf_located if name == "nccl.conf" else parse_systemd_env_located
                    parsed = DeployedEnv(str(path), reader(_read(path, base), str(path)), profile)
                    if profile:
                        shared[str(path)] = parsed
                files.append(parsed)
            if files:
                hosts[entry.name] = tuple(files)

    switches: list[DeployedSwitch] = []
    unreadable: list[tuple[str, str]] = []
    notes: list[str] = []
    seen_switches: set[str] = set()
    own_files: dict[str, dict[str, str] | None] = {}
    items: list[tuple[Switch, str, Path]] = []
    formats = read_backs()
    for switch in plan.switches:
        row = formats.get(switch.os)
        if row is None:
            continue
        target, fmt = row
        path = base / fmt.path.format(name=switch.name)
        if not os.path.lexists(path):  # a FIFO or a link is there, and refused when read: not "missing"
            continue
        seen_switches.add(switch.name)
        if target.name not in own_files:
            own_files[target.name] = _own_files(plan, target, fmt, base, jobs)
        items.append((switch, switch.os, path))
    for result in _read_switches(plan, items, own_files, base, jobs):
        if isinstance(result, DeployedSwitch):
            switches.append(result)
        elif isinstance(result, tuple):
            unreadable.append(result)
        else:
            notes.append(result)
    if _is_dir(base / "switches", base):
        for entry in sorted((base / "switches").iterdir()):
            name = entry.name[:-4] if entry.is_file() and entry.name.endswith(".cfg") else entry.name
            if entry.name.startswith((".", "_")) or name in switch_names:
                continue
            if entry.is_dir() or entry.name.endswith(".cfg"):
                unknown.append(f"switches/{entry.name}")

    from fabgen.lint.deployed_hostnet import read_host_networks
    from fabgen.lint.deployed_nic import read_nic_plans
    from fabgen.lint.deployed_profile import read_boot_files, read_topologies
    from fabgen.lint.deployed_sysctl import read_sysctls

    host_networks = read_host_networks(base, plan)
    nic_hosts, nic_plans = read_nic_plans(base, plan)
    sysctl_hosts, sysctls = read_sysctls(base, plan)
    topology_hosts, topologies = read_topologies(base, plan)
    boot_hosts, boot_files = read_boot_files(base, plan)
    collected = (set(hosts) | {network.host for network in host_networks} | set(nic_hosts) | set(sysctl_hosts)
                 | set(topology_hosts) | set(boot_hosts))
    missing = sorted(host_names - collected) if (base / "hosts").is_dir() else []
    if (base / "switches").is_dir():
        missing += sorted(switch_names - seen_switches)
    return Deployed(str(base), hosts, tuple(switches), tuple(missing), tuple(unknown), tuple(unreadable),
                    tuple(notes), host_networks=host_networks, nic_plans=nic_plans, sysctls=sysctls,
                    topologies=topologies, boot_files=boot_files)


PARALLEL_SWITCHES = 64
"""Below this many collected switch files, forking workers costs more than parsing them."""

_SwitchRead = DeployedSwitch | tuple[str, str] | str
"""What one collected switch file gives: its pictures, (file, why it cannot be read), or a note."""
_Reads: TypeAlias = "tuple[FabricPlan, list[tuple[Switch, str, Path]], dict[str, dict[str, str] | None], Path]"
"""What every worker inherits: the plan, the (switch, OS, file) items, fabgen's own renders and the tree's root."""


def _read_switches(plan: FabricPlan, items: list[tuple[Switch, str, Path]],
                   own_files: dict[str, dict[str, str] | None], base: Path, jobs: int) -> Iterator[_SwitchRead]:
    """Each (switch, OS, file) read against fabgen's render, in order; in ``jobs`` forked workers that inherit the
    plan and the renders (nothing of them pickled) when there are enough files."""
    if jobs <= 1 or len(items) < PARALLEL_SWITCHES or not can_fork():
        yield from _read_range(plan, items, own_files, base, 0, len(items))
        return
    reads: _Reads = (plan, items, own_files, base)
    for chunk in forked_slices(_read_slice, reads, slices(len(items), jobs), jobs):
        yield from chunk


def _read_slice(reads: _Reads, low: int, high: int) -> list[_SwitchRead]:
    return list(_read_range(*reads, low, high))


def _read_range(plan: FabricPlan, items: list[tuple[Switch, str, Path]],
                own_files: dict[str, dict[str, str] | None], base: Path, low: int, high: int) -> Iterator[_SwitchRead]:
    from fabgen.targets.registry import read_backs

    formats = read_backs()
    qos_cache: dict[tuple[str, int], CommonQos] = {}
    for switch, os_name, path in items[low:high]:
        target, fmt = formats[os_name]
        yield _read_switch(plan, switch, target, fmt, path, base, qos_cache, own_files[target.name])


def _read_switch(plan: FabricPlan, switch: Switch, target: Target, fmt: ReadBack, path: Path, base: Path,
                 qos_cache: dict[tuple[str, int], CommonQos], files: dict[str, str] | None) -> _SwitchRead:
    """One collected switch file with the pictures of fabgen's render for the switch; (file, why) when the OS
    reader refuses it (the reason redacted); a note when fabgen's own side cannot be had."""
    own = _expected(plan, switch, target, fmt, qos_cache, files)
    if isinstance(own, str):
        return f"{path}: not checked: {own}"
    expected, own_text = own
    if expected.ports is not None:
        # One policy's switches share a picture, not ports: each binds its QoS on every port it has
        # (test_a_site_running_the_plan_has_no_drift holds the renderer to that).
        expected = replace(expected, ports=frozenset(port.name for port in switch.ports))
    try:
        text = _read(path, base)
        if text == own_text:  # fabgen's own bytes: its pictures, neither text's routing parsed
            return DeployedSwitch(switch.name, str(path), text, expected, expected, None, None)
        data = load_json(text, str(path)) if fmt.kind == "json" else text
        picture = fmt.parse(data)
        routing = fmt.parse_routing(data)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, FabgenError) as exc:
        # a wrong-shaped file (a list where config_db has tables) must be a finding, not a traceback
        reason = "; ".join(p.message for p in exc.problems[:2]) if isinstance(exc, FabgenError) else \
            f"{type(exc).__name__}: {exc}" if isinstance(exc, AttributeError | IndexError) else str(exc)
        known = {switch.name, *(getattr(port, "name", "") for port in getattr(switch, "ports", ()))}
        return str(path), redact(reason, known)
    try:
        expected_routing = fmt.parse_routing(_own_data(fmt, own_text))
    except (ValueError, KeyError, TypeError) as exc:
        return f"{path}: not checked: {_unreadable_own(exc)}"
    return DeployedSwitch(switch.name, str(path), text, picture, expected, routing, expected_routing)
