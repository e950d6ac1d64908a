"""Read a deployed tree (fabgen's output layout, collected back from the devices) for comparison.

``fabgen lint SPEC --deployed DIR`` compares what devices run with what the
plan says, semantically: a host's ``nccl.conf`` is compared variable by variable
(comments, order and quoting do not matter), a switch configuration through
the OS-neutral :class:`~fabgen.targets.qos_common.CommonQos` picture its OS
parser extracts. The expected picture of a switch is the parse of what fabgen
itself renders for it, so what an OS cannot express (NVUE has no restore time)
never shows up as drift.

Layout read::

    DIR/hosts/NAME/nccl.conf        NCCL_CONF_FILE syntax
    DIR/hosts/NAME/nccl.env         systemd EnvironmentFile
    DIR/switches/NAME.cfg           EOS
    DIR/switches/NAME/config_db.json  SONiC
    DIR/switches/NAME/startup.yaml  Cumulus NVUE

Directories starting with ``_`` (``hosts/_profiles``) are fabgen's shared files
and are skipped.
Which file holds a switch OS's configuration, and how it reads back, is that
OS target's :class:`~fabgen.targets.base.ReadBack` row in the registry.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError, Problem

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan, Switch
    from fabgen.targets.base import ReadBack, Target
    from fabgen.targets.qos_common import CommonQos


HOST_FILES = ("nccl.conf", "nccl.env")


@dataclass(frozen=True)
class DeployedEnv:
    """The NCCL variables of one deployed file, as NCCL or systemd reads it: ``{name: (value, line)}``."""

    file: str
    values: dict[str, tuple[str, int]]


@dataclass(frozen=True)
class DeployedSwitch:
    """A deployed switch configuration with its parsed picture and the planned one."""

    name: str
    file: str
    text: str
    qos: CommonQos
    expected: CommonQos


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


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FabgenError([Problem("not UTF-8 text", file=str(path))]) from None
    except OSError as exc:
        raise FabgenError([Problem(f"cannot read: {exc.strerror or exc}", file=str(path))]) from None


def _expected(plan: FabricPlan, switch: Switch, target: Target, fmt: ReadBack) -> CommonQos | str:
    """The picture of what fabgen renders for ``switch``, or why there is none."""
    from fabgen.targets.render import render_files

    try:
        files, _ = render_files(plan, [target.name], [switch.name])
    except FabgenError as exc:
        return "fabgen cannot render it: " + "; ".join(p.message for p in exc.problems[:2])
    text = files.get(fmt.path.format(name=switch.name))
    if text is None:
        return f"the {target.name} target writes no {fmt.path.format(name=switch.name)}"
    try:
        return fmt.parse(json.loads(text) if fmt.kind == "json" else text)
    except (ValueError, KeyError, TypeError) as exc:
        return f"cannot read fabgen's own output back: {exc}"


def read_deployed(root: Path | str, plan: FabricPlan) -> Deployed:
    """Read ``root`` for the devices of ``plan``; raise :class:`FabgenError` when it is not such a tree."""
    from fabgen.targets.nccl.conf import parse_nccl_conf_located, parse_systemd_env_located
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
    unknown: list[str] = []
    if (base / "hosts").is_dir():
        for entry in sorted((base / "hosts").iterdir()):
            if entry.name.startswith((".", "_")) or not entry.is_dir():
                continue
            if entry.name not in host_names:
                unknown.append(f"hosts/{entry.name}")
                continue
            files = []
            for name in HOST_FILES:
                path = entry / name
                if path.is_file():
                    text = _read(path)
                    reader = parse_nccl_conf_located if name == "nccl.conf" else parse_systemd_env_located
                    files.append(DeployedEnv(str(path), reader(text, str(path))))
            if files:
                hosts[entry.name] = tuple(files)

    switches: list[DeployedSwitch] = []
    unreadable: list[tuple[str, str]] = []
    notes: list[str] = []
    seen_switches: set[str] = set()
    expected_cache: dict[tuple[str, int], CommonQos | str] = {}
    formats = read_backs()
    for switch in plan.switches:
        row = formats.get(switch.os)
        if row is None:
            continue
        target, fmt = row
        path = base / fmt.path.format(name=switch.name)
        if not path.is_file():
            continue
        seen_switches.add(switch.name)
        key = (fmt.os, id(switch.qos))
        if key not in expected_cache:
            expected_cache[key] = _expected(plan, switch, target, fmt)
        expected = expected_cache[key]
        if isinstance(expected, str):
            notes.append(f"{path}: not checked: {expected}")
            continue
        text = _read(path)
        try:
            data = json.loads(text) if fmt.kind == "json" else text
            picture = fmt.parse(data)
        except (ValueError, KeyError, TypeError, FabgenError) as exc:
            reason = "; ".join(p.message for p in exc.problems[:2]) if isinstance(exc, FabgenError) else str(exc)
            unreadable.append((str(path), reason))
            continue
        switches.append(DeployedSwitch(switch.name, str(path), text, picture, expected))
    if (base / "switches").is_dir():
        for entry in sorted((base / "switches").iterdir()):
            name = entry.name[:-4] if entry.is_file() and entry.name.endswith(".cfg") else entry.name
            if entry.name.startswith((".", "_")) or name in switch_names:
                continue
            if entry.is_dir() or entry.name.endswith(".cfg"):
                unknown.append(f"switches/{entry.name}")

    missing = sorted(host_names - set(hosts)) if (base / "hosts").is_dir() else []
    if (base / "switches").is_dir():
        missing += sorted(switch_names - seen_switches)
    return Deployed(str(base), hosts, tuple(switches), tuple(missing), tuple(unknown), tuple(unreadable),
                    tuple(notes))
