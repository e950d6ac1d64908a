"""Refusals for input that would otherwise be accepted silently and produce wrong output.

Each check here exists because a hostile-input run found fabgen accepting
something and generating nonsense from it (issue 18):

* address pools that overlap (one switch got the same address on a fabric port
  and on its loopback) or lie in special ranges (multicast, reserved, loopback,
  link-local, "this network");
* a host whose every backend NIC is out of service (``NCCL_IB_HCA==``, empty);
* names that differ only by case (they collide on case-insensitive file
  systems, in DNS and in Ansible inventories);
* numbers written with a leading zero (YAML 1.2 reads ``010`` as 10, YAML 1.1
  tools, Ansible's included, as octal 8): an error, not a lint finding, because
  the same file means two things to two tools;
* pattern errors, which pydantic prints as a regular expression, rewritten in
  plain words with an example;
* NCCL variables checked even when the rest of the spec does not validate, so
  every problem of a file is reported at once.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from fabgen.errors import Problem
from fabgen.source import DataPath, SourceDoc
from fabgen.spec.cluster import ClusterSpec
from fabgen.spec.hosts import HOST_PATTERN
from fabgen.spec.references import within_host_limit

_SPECIAL: Final[tuple[tuple[ipaddress.IPv4Network, str], ...]] = tuple(
    (ipaddress.IPv4Network(net), why) for net, why in (
        ("0.0.0.0/8", "'this network' (0.0.0.0/8)"),
        ("127.0.0.0/8", "loopback (127.0.0.0/8)"),
        ("169.254.0.0/16", "link-local (169.254.0.0/16)"),
        ("224.0.0.0/4", "multicast (224.0.0.0/4)"),
        ("240.0.0.0/4", "reserved (240.0.0.0/4, broadcast included)"),
    ))
"""Ranges no device address may come from: routers drop or never route them."""

POOLS: Final = ("p2p", "loopbacks", "mgmt")

PATTERN_WORDS: Final[dict[str, str]] = {
    r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$":
        'a PCI address as NCCL prints it: domain:bus:device.function in lower-case hex, e.g. "0000:17:00.0"',
    r"^[0-9]+(\.[0-9]+)?:[0-9]+(\.[0-9]+)?$": 'a ratio of two numbers written with ASCII digits, e.g. "1:1" or "3:1"',
    r"^[0-9]+\.[0-9]+\.[0-9]+$": 'an NCCL version of three numbers, e.g. "2.23.4"',
    r"^0x[0-9a-f]{4}$": 'a PCI id as sysfs prints it: "0x" and four lower-case hex digits, e.g. "0x1000"',
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$":
        'a name of letters, digits, ".", "_" and "-", starting with a letter or digit, at most 63 characters, '
        'e.g. "leaf01"',
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$": 'a Linux interface name of at most 15 characters, e.g. "ens1np0"',
    r"^[A-Za-z0-9][A-Za-z0-9_]{0,62}$": 'an RDMA device name of letters, digits and "_", e.g. "mlx5_0"',
    r"^[0-9]{1,5}(-[0-9]{1,5})?(,[0-9]{1,5}(-[0-9]{1,5})?)*$":
        'a Linux cpulist of CPU numbers and ranges, e.g. "0-55,112-167"',
    r"^[A-Za-z0-9 ._,:/()@+=-]{0,200}$":
        "one line of at most 200 letters, digits, spaces and . _ , : / ( ) @ + = - (no quotes, # or line breaks)",
    r"^NCCL_[A-Z0-9_]{1,60}$": 'an NCCL variable name in capitals, e.g. "NCCL_IB_TIMEOUT"',
    r"^(/[A-Za-z0-9_][A-Za-z0-9._-]{0,62})+$": 'an absolute path without spaces or "..", e.g. "/etc/nccl"',
    r"^[a-z][a-z0-9_]{0,62}$": 'a lower-case name of letters, digits and "_", e.g. "rpg_time_reset"',
    r"^[A-Za-z0-9*?\[\]._-]{1,64}$": 'a glob of letters, digits, ".", "_", "-" and * ? [ ], e.g. "leaf-r0-*"',
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}:[A-Za-z0-9][A-Za-z0-9_./-]{0,30}$":
        'a device and port as device:port, e.g. "gt00001:ens1np0" or "leaf-r0-p00-01:Ethernet1/1"',
    r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$": 'a class name of letters, digits, "_" and "-", e.g. "roce"',
    r"^[^\x00-\x1f\x7f\u2028\u2029]{0,1023}$": "one line of at most 1023 characters, without control characters",
    r"^[A-Za-z0-9_./-]{1,255}\.(ya?ml|csv)$":
        'a relative file path of letters, digits, "_", ".", "/" and "-" ending in .yaml, .yml or .csv, '
        'e.g. "ipam/site1.csv"',
    HOST_PATTERN: 'a host name of letters, digits, ".", "_" and "-" (at most 41 characters), or a pattern with '
                  'one {index} field, e.g. "gt{index:05d}"',
}
"""pydantic's ``String should match pattern '...'`` in words, keyed by the pattern."""

_LEADING_ZERO = re.compile(r"[+-]?0[0-9][0-9_]*(?![0-9A-Za-z_.:])", re.ASCII)
_NCCL_ENV_PREFIXES: Final = (("nccl", "env"),)


def pattern_message(pattern: str) -> str | None:
    """Plain words for a pattern mismatch, or None for a pattern we have no words for."""
    words = PATTERN_WORDS.get(pattern)
    return f"expected {words}" if words else None


def leading_zero_problems(doc: SourceDoc) -> list[Problem]:
    """Integers written with a leading zero (``010``); NCCL variables have their own, sharper message."""
    problems: list[Problem] = []
    lines: list[str] | None = None
    for path, (line, col) in doc.value_positions.items():
        value = _at(doc.data, path)
        if isinstance(value, bool) or not isinstance(value, int) or _is_nccl_env(path):
            continue
        if lines is None:
            lines = doc.text.splitlines()
        if not 0 < line <= len(lines):
            continue
        match = _LEADING_ZERO.match(lines[line - 1], col - 1)
        if match is None:
            continue
        token = match.group()
        octal = f"octal {int(token.replace('_', ''), 8)}" if set(token.lstrip("+-")) <= set("01234567_") \
            else f"the string {token!r} (8 and 9 are not octal digits)"
        problems.append(doc.problem(
            f"{token} has a leading zero: YAML 1.2 reads it as {value}, YAML 1.1 tools (Ansible, PyYAML) as "
            f"{octal}; write {value}", path))
    return problems


def _is_nccl_env(path: DataPath) -> bool:
    return path[:2] == ("nccl", "env") or (len(path) >= 5 and path[0] == "hosts" and path[4] == "nccl_env")


def _at(data: Any, path: DataPath) -> Any:
    node = data
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def raw_nccl_problems(doc: SourceDoc) -> list[Problem]:
    """NCCL variable errors read from the raw document, for a spec whose models did not validate."""
    from fabgen.targets.nccl.variables import check_nccl_var

    data: dict[str, Any] = doc.data if isinstance(doc.data, dict) else {}
    raw = data.get("nccl")
    nccl: dict[str, Any] = raw if isinstance(raw, dict) else {}
    version = nccl.get("version") if isinstance(nccl.get("version"), str) else "2.23.4"
    envs: list[tuple[DataPath, Any]] = [(("nccl", "env"), nccl.get("env"))]
    hosts = data.get("hosts")
    for gindex, group in enumerate(hosts if isinstance(hosts, list) else []):
        overrides = group.get("overrides") if isinstance(group, dict) else None
        for host, override in (overrides.items() if isinstance(overrides, dict) else ()):
            if isinstance(override, dict):
                envs.append((("hosts", gindex, "overrides", host, "nccl_env"), override.get("nccl_env")))
    problems: list[Problem] = []
    for path, env in envs:
        if not isinstance(env, dict):
            continue
        for name, value in env.items():
            if not isinstance(name, str) or not isinstance(value, bool | int | str):
                continue
            try:
                issues = check_nccl_var(name, value, version)
            except ValueError:  # an unreadable version: pydantic reports it
                issues = check_nccl_var(name, value, "2.23.4")
            for issue in issues:
                if issue.severity == "error":
                    text = f"{issue.message}; {issue.hint}" if issue.hint else issue.message
                    problems.append(doc.problem(text, (*path, name), key=True))
    return problems


def _case_collisions(names: Iterable[tuple[str, DataPath]], what: str, doc: SourceDoc,
                     *, key: bool = False) -> list[Problem]:
    seen: dict[str, tuple[str, DataPath]] = {}
    problems: list[Problem] = []
    for name, path in names:
        folded = name.casefold()
        first = seen.setdefault(folded, (name, path))
        if first[0] != name:
            problems.append(doc.problem(
                f"{what} {name!r} differs from {first[0]!r} only by case; they collide on case-insensitive file "
                "systems and in DNS: rename one", path, key=key))
    return problems


def check_silent(spec: ClusterSpec, doc: SourceDoc) -> list[Problem]:
    """Problems in a spec that validates, but whose output would be wrong (see the module docstring)."""
    problems = _pool_problems(spec, doc)
    problems += _case_collisions(((name, ("host_profiles", name)) for name in spec.host_profiles),
                                 "host profile", doc, key=True)
    problems += _case_collisions(((name, ("qos", "classes", name)) for name in spec.qos.classes),
                                 "traffic class", doc, key=True)
    if not within_host_limit(spec):  # check_references reports it; expanding the names would be unbounded
        return problems
    hosts: list[tuple[str, DataPath]] = []
    for gindex, group in enumerate(spec.hosts):
        if group.names is not None:  # at the very item; a pattern's names at the pattern
            hosts += [(name, ("hosts", gindex, "names", index)) for index, name in enumerate(group.names)]
        else:
            hosts += [(name, ("hosts", gindex, "name")) for name in group.host_names()]
        profile = spec.host_profiles.get(group.profile)
        if profile is None:
            continue
        backend = {n.name for n in profile.nics if n.rail is not None}
        for host, override in group.overrides.items():
            if backend and backend <= set(override.nics_out_of_service):
                problems.append(doc.problem(
                    f"every backend NIC of host {host} is out of service ({', '.join(sorted(backend))}), so its "
                    "NCCL_IB_HCA would be empty: take the host out of the spec, or keep one NIC in service",
                    ("hosts", gindex, "overrides", host, "nics_out_of_service")))
    problems += _case_collisions(hosts, "host name", doc)
    return problems


def _pool_problems(spec: ClusterSpec, doc: SourceDoc) -> list[Problem]:
    addressing = spec.fabric.addressing
    pools: Mapping[str, ipaddress.IPv4Network | None] = {name: getattr(addressing, name) for name in POOLS}
    problems: list[Problem] = []
    checked: list[tuple[str, ipaddress.IPv4Network]] = []
    for name, net in pools.items():
        if net is None:
            continue
        path: DataPath = ("fabric", "addressing", name)
        for special, why in _SPECIAL:
            if net.overlaps(special):
                problems.append(doc.problem(f"{name} pool {net} overlaps the {why} range, whose addresses "
                                            "switches and hosts do not route; use private space such as 10.0.0.0/8",
                                            path))
                break
        for other, other_net in checked:
            if net.overlaps(other_net):
                problems.append(doc.problem(f"{name} pool {net} overlaps the {other} pool {other_net}: one device "
                                            "could get the same address twice; give each pool its own range", path))
        checked.append((name, net))
    return problems
