"""Configure a twin host from its rendered host network files, not from the plan.

The twin exists to catch what is wrong before it reaches a cluster, and the
host files (``netplan.yaml`` or NetworkManager keyfiles, plus ``sysctl.conf``,
from :mod:`fabgen.targets.hostnet`) are what a real host boots with. So each
host namespace gets exactly what those files say: they are rendered the way
``fabgen generate`` renders them (or read from a generated tree with
``--host-files``), parsed as their consumer reads them (netplan's YAML keys,
NetworkManager's keyfile keys, sysctl.d's ``key = value``; the first two by
:mod:`fabgen.targets.hostnet.parse`, which ``lint --deployed`` shares), and translated
into ``ip`` commands. Nothing here looks at the plan's addresses or tables: a
wrong gateway, table or rule in a file becomes a twin that does not route.

Two limits of the translation, both refused with the file's name rather than
ignored, so a file the twin cannot apply faithfully never passes silently:
keys this module does not know (a netplan ``dhcp4: true`` would need a DHCP
server the twin does not have), and files naming an interface the twin did not
cable. Sysctls are applied where the kernel keeps them per namespace
(``net.ipv4.conf.*`` and ``net.ipv6.conf.*``); any other key would change the
machine the twin runs on, so it is listed as not applied.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from fabgen.targets.hostnet import parse
from fabgen.targets.hostnet.parse import FileRoute as FileRoute  # re-exported: the twin's names before the move
from fabgen.targets.hostnet.parse import FileRule as FileRule
from fabgen.targets.hostnet.parse import HostFileError, NetdevSetup
from fabgen.targets.hostnet.parse_sysctl import sysctl_lines
from fabgen.twin.system import TwinError

HOSTNET_TARGET = "host-net"
SYSCTL_TARGET = "host-sysctl"
"""The profile's sysctl file; a host that shares it installs it like its own (see :func:`host_setups`)."""


@dataclass(frozen=True, slots=True)
class Sysctl:
    origin: str
    line: int
    parts: tuple[str, ...]
    """The key as a path under /proc/sys (``net``, ``ipv4``, ``conf``, ``ens1np0``, ``arp_ignore``)."""
    value: str

    @property
    def per_netns_device(self) -> str | None:
        """The interface of a per-namespace ``net.ipv{4,6}.conf.DEV.KEY``, else ``None``."""
        if len(self.parts) == 5 and self.parts[0] == "net" and self.parts[1] in ("ipv4", "ipv6") \
                and self.parts[2] == "conf":
            return self.parts[3]
        return None


@dataclass(frozen=True, slots=True)
class HostSetup:
    device: str
    files: tuple[str, ...]
    netdevs: tuple[NetdevSetup, ...]
    sysctls: tuple[Sysctl, ...]


# ---------------------------------------------------------------- parsing

_T = TypeVar("_T")


def _as_twin_error(parser: Callable[[str, str], _T], origin: str, text: str) -> _T:
    """``parser(origin, text)`` (:mod:`fabgen.targets.hostnet.parse`), its refusal raised as the twin's."""
    try:
        return parser(origin, text)
    except HostFileError as exc:
        raise TwinError(f"{exc} (the twin applies only what those files hold)") from None


def parse_netplan(origin: str, text: str) -> list[NetdevSetup]:
    """The ``ethernets`` of a netplan v2 file, as netplan reads them (only the keys fabgen's files may hold)."""
    return _as_twin_error(parse.parse_netplan, origin, text)


def parse_keyfile_setup(origin: str, text: str) -> NetdevSetup:
    """One NetworkManager keyfile (``[ipv4] addressN``, ``routeN``/``routeN_options``, ``routing-ruleN``)."""
    return _as_twin_error(parse.parse_keyfile_setup, origin, text)


_SYSCTL_PART = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_SYSCTL_VALUE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def parse_sysctl(origin: str, text: str) -> list[Sysctl]:
    """``key = value`` lines as systemd-sysctl reads sysctl.d (:func:`~fabgen.targets.hostnet.parse_sysctl.sysctl_lines`),
    refusing a line the twin would not apply as written: no assignment, a glob, a value beyond plain words."""
    out = []
    for entry in sysctl_lines(text):
        if entry.value is None or not entry.key:
            raise TwinError(f"{origin}:{entry.line}: not a 'key = value' line")
        parts = tuple(entry.path.split("/"))
        if not all(_SYSCTL_PART.match(p) for p in parts) or any(p in (".", "..") for p in parts):
            raise TwinError(f"{origin}:{entry.line}: {entry.key!r} is not a sysctl key")
        if not _SYSCTL_VALUE.match(entry.value):
            raise TwinError(f"{origin}:{entry.line}: {entry.key} = {entry.value!r} is not a value the twin writes")
        out.append(Sysctl(origin, entry.line, parts, entry.value))
    return out


def parse_host_files(device: str, files: Mapping[str, str]) -> HostSetup:
    """A host's rendered host-net files (``{path: text}``) as one :class:`HostSetup`."""
    netdevs: list[NetdevSetup] = []
    sysctls: list[Sysctl] = []
    for path in sorted(files):
        text = files[path]
        if path.endswith("/netplan.yaml"):
            netdevs.extend(parse_netplan(path, text))
        elif path.endswith(".nmconnection"):
            netdevs.append(parse_keyfile_setup(path, text))
        elif path.endswith("/sysctl.conf"):
            sysctls.extend(parse_sysctl(path, text))
        else:
            raise TwinError(f"{path}: the twin does not know how to apply this host file")
    seen: dict[str, str] = {}
    for nd in netdevs:
        if nd.netdev in seen:
            raise TwinError(f"{nd.origin}: {nd.netdev} is configured again (first in {seen[nd.netdev]})")
        seen[nd.netdev] = nd.origin
    return HostSetup(device, tuple(sorted(files)), tuple(netdevs), tuple(sysctls))


# ---------------------------------------------------------------- sources


def host_setups(fabric: Any, hosts: Iterable[str], host_files: Path | None = None) -> dict[str, HostSetup]:
    """``{host: setup}`` from the host-net files ``fabgen generate`` renders, or those under ``host_files``.

    With ``host_files`` (a ``fabgen generate`` output directory), each host's
    files are read from the paths the render would write: the files an operator
    is about to install, edits included. A host whose files are missing there is
    refused, not silently configured from the render.
    """
    from fabgen.targets.hostnet.config import sysctl_source
    from fabgen.targets.render import render_files

    rendered, owners = render_files(fabric, [HOSTNET_TARGET, SYSCTL_TARGET])  # with the targets' own output checks
    by_host: dict[str, dict[str, str]] = {}
    for path, text in rendered.items():
        if owners[path][0] == HOSTNET_TARGET:
            by_host.setdefault(owners[path][1], {})[path] = text
    setups = {}
    for host in hosts:
        files = by_host.get(host, {})
        shared = sysctl_source(fabric.spec, fabric.host(host)) if files else None
        if shared is not None and shared not in files:  # the install map's choice: the profile's copy
            files = {**files, shared: rendered[shared]}
        if host_files is not None:
            files = {path: _read(host_files / path, path) for path in files}
        setups[host] = parse_host_files(host, files)
    return setups


def _read(path: Path, name: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TwinError(f"{path}: cannot read {name} ({exc.strerror})") from None


# ---------------------------------------------------------------- translation


def ip_commands(setup: HostSetup, ifnames: Mapping[str, str]) -> list[str]:
    """``ip -batch`` lines that configure the namespace as the files say, in the order networkd applies them.

    ``ifnames`` maps the host's netdev names to the twin's Linux names. Every
    value was parsed into an address, a number or one of a few words above, so
    no string from a file reaches a command line as it was written.
    """
    commands: list[str] = []
    for nd in setup.netdevs:
        ifname = _ifname(nd.origin, nd.netdev, ifnames)
        if nd.mtu is not None:
            commands.append(f"link set dev {ifname} mtu {nd.mtu}")
        if not nd.link_local:
            commands.append(f"link set dev {ifname} addrgenmode none")
        commands.extend(f"address add {a} dev {ifname}" for a in nd.addresses)
        commands.append(f"link set dev {ifname} up")
    for nd in setup.netdevs:
        ifname = ifnames[nd.netdev]
        for r in nd.routes:
            words = ["route", "add", r.to]
            if r.via is not None:
                words += ["via", r.via]
            words += ["dev", ifname]
            if r.source is not None:
                words += ["src", r.source]
            if r.table is not None:
                words += ["table", str(r.table)]
            # Without a gateway the kernel's default scope is link (NetworkManager writes none, netplan says it).
            scope = r.scope if r.scope is not None else ("link" if r.via is None else None)
            if scope is not None:
                words += ["scope", scope]
            if r.metric is not None:
                words += ["metric", str(r.metric)]
            if r.onlink:
                words.append("onlink")
            commands.append(" ".join(words))
        for rule in nd.rules:
            words = ["rule", "add"]
            if rule.source is not None:
                words += ["from", rule.source]
            if rule.to is not None:
                words += ["to", rule.to]
            words += ["lookup", str(rule.table)]
            if rule.priority is not None:
                words += ["priority", str(rule.priority)]
            commands.append(" ".join(words))
    return commands


def _ifname(origin: str, netdev: str, ifnames: Mapping[str, str]) -> str:
    if netdev not in ifnames:
        raise TwinError(f"{origin}: configures {netdev}, which no cable of the plan reaches on this host")
    return ifnames[netdev]


def namespace_sysctls(setup: HostSetup, ifnames: Mapping[str, str]) -> tuple[list[tuple[Path, str]], list[Sysctl]]:
    """``([(path under /proc/sys, value)], [not applied])``: the per-namespace keys, with twin interface names."""
    apply: list[tuple[Path, str]] = []
    skipped: list[Sysctl] = []
    for s in setup.sysctls:
        device = s.per_netns_device
        if device is None:
            skipped.append(s)
            continue
        if device not in ("all", "default"):
            device = _ifname(f"{s.origin}:{s.line}", device, ifnames)
        apply.append((Path("/proc/sys", *s.parts[:3], device, s.parts[4]), s.value))
    return apply, skipped
