"""Configure a twin host from its rendered host network files, not from the plan.

The twin exists to catch what is wrong before it reaches a cluster, and the
host files (``netplan.yaml`` or NetworkManager keyfiles, plus ``sysctl.conf``,
from :mod:`fabgen.targets.hostnet`) are what a real host boots with. So each
host namespace gets exactly what those files say: they are rendered the way
``fabgen generate`` renders them (or read from a generated tree with
``--host-files``), parsed as their consumer reads them (netplan's YAML keys,
NetworkManager's keyfile keys, sysctl.d's ``key = value``), and translated
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

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from fabgen.targets.hostnet.config import parse_keyfile
from fabgen.twin.system import TwinError

HOSTNET_TARGET = "host-net"
SYSCTL_TARGET = "host-sysctl"
"""The profile's sysctl file; a host that shares it installs it like its own (see :func:`host_setups`)."""


@dataclass(frozen=True, slots=True)
class FileRoute:
    to: str
    via: str | None = None
    source: str | None = None
    table: int | None = None
    scope: str | None = None
    onlink: bool = False
    metric: int | None = None


@dataclass(frozen=True, slots=True)
class FileRule:
    source: str | None
    to: str | None
    table: int
    priority: int | None


@dataclass(frozen=True, slots=True)
class NetdevSetup:
    """One interface as a host file configures it."""

    netdev: str
    origin: str
    """The file it came from (``hosts/lab01/netplan.yaml``), for error messages."""
    mtu: int | None
    addresses: tuple[str, ...]
    routes: tuple[FileRoute, ...]
    rules: tuple[FileRule, ...]
    link_local: bool = True
    """netplan's ``link-local: []`` turns IPv6 link-local addressing off (the kernel's ``addrgenmode none``)."""


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


_YAML = YAML(typ="safe", pure=True)
_NETPLAN_IGNORED = {"optional", "accept-ra", "dhcp6"}
"""Keys that change nothing in a twin namespace: no boot wait, no IPv6 the twin checks, no RAs to accept."""
_NETPLAN_KEYS = _NETPLAN_IGNORED | {"dhcp4", "link-local", "mtu", "addresses", "routes", "routing-policy"}
_ROUTE_KEYS = {"to", "via", "from", "table", "scope", "on-link", "metric"}
_RULE_KEYS = {"from", "to", "table", "priority"}


def _fail(origin: str, message: str) -> TwinError:
    return TwinError(f"{origin}: {message}")


def _int(origin: str, what: str, value: object) -> int:
    if type(value) is int:
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    raise _fail(origin, f"{what} must be an integer, not {value!r}")


def _interface(origin: str, what: str, value: object) -> str:
    try:
        return str(ipaddress.ip_interface(str(value)))
    except ValueError:
        raise _fail(origin, f"{what} {value!r} is not an address with a prefix length") from None


def _address(origin: str, what: str, value: object) -> str:
    try:
        return str(ipaddress.ip_address(str(value)))
    except ValueError:
        raise _fail(origin, f"{what} {value!r} is not an address") from None


def _destination(origin: str, what: str, value: object) -> str:
    if value == "default":
        return "default"
    # ip_interface keeps host bits: ``ip route add`` then refuses them, as networkd would.
    return _interface(origin, what, value) if "/" in str(value) else _address(origin, what, value)


def parse_netplan(origin: str, text: str) -> list[NetdevSetup]:
    """The ``ethernets`` of a netplan v2 file, as netplan reads them (only the keys fabgen's files may hold)."""
    try:
        data = _YAML.load(text)
    except YAMLError as exc:
        raise _fail(origin, f"not YAML: {str(exc).splitlines()[0]}") from None
    network = data.get("network") if isinstance(data, dict) else None
    if not isinstance(network, dict) or network.get("version") != 2:
        raise _fail(origin, "not a netplan v2 file (network: version: 2)")
    unknown = set(network) - {"version", "ethernets", "renderer"}
    if unknown:
        raise _fail(origin, f"the twin cannot apply network.{sorted(unknown)[0]}")
    ethernets = network.get("ethernets") or {}
    if not isinstance(ethernets, dict):
        raise _fail(origin, "network.ethernets must be a mapping")
    return [_netplan_ethernet(origin, str(name), eth) for name, eth in ethernets.items()]


def _netplan_ethernet(origin: str, name: str, eth: object) -> NetdevSetup:
    where = f"{origin}: {name}"
    if not isinstance(eth, dict):
        raise _fail(where, "must be a mapping")
    unknown = set(eth) - _NETPLAN_KEYS
    if unknown:
        raise _fail(where, f"the twin cannot apply {sorted(unknown)[0]!r}")
    if eth.get("dhcp4") not in (None, False):
        raise _fail(where, "dhcp4: the twin has no DHCP server; backend NICs need static addresses")
    mtu = None if eth.get("mtu") is None else _int(where, "mtu", eth["mtu"])
    addresses = tuple(_interface(where, "address", a) for a in _list(where, "addresses", eth.get("addresses")))
    routes = []
    for route in _list(where, "routes", eth.get("routes")):
        if not isinstance(route, dict) or "to" not in route or set(route) - _ROUTE_KEYS:
            raise _fail(where, f"the twin cannot apply route {route!r}")
        routes.append(FileRoute(
            to=_destination(where, "route to", route["to"]),
            via=None if route.get("via") is None else _address(where, "route via", route["via"]),
            source=None if route.get("from") is None else _address(where, "route from", route["from"]),
            table=None if route.get("table") is None else _int(where, "route table", route["table"]),
            scope=None if route.get("scope") is None else _scope(where, route["scope"]),
            onlink=route.get("on-link") is True,
            metric=None if route.get("metric") is None else _int(where, "route metric", route["metric"])))
    rules = []
    for rule in _list(where, "routing-policy", eth.get("routing-policy")):
        if not isinstance(rule, dict) or "table" not in rule or set(rule) - _RULE_KEYS:
            raise _fail(where, f"the twin cannot apply routing-policy {rule!r}")
        rules.append(FileRule(
            source=None if rule.get("from") is None else _destination(where, "rule from", rule["from"]),
            to=None if rule.get("to") is None else _destination(where, "rule to", rule["to"]),
            table=_int(where, "rule table", rule["table"]),
            priority=None if rule.get("priority") is None else _int(where, "rule priority", rule["priority"])))
    link_local = _list(where, "link-local", eth.get("link-local", ["ipv6"]))
    return NetdevSetup(name, origin, mtu, addresses, tuple(routes), tuple(rules), link_local=bool(link_local))


def _list(origin: str, what: str, value: object) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(origin, f"{what} must be a list")
    return value


def _scope(origin: str, value: object) -> str:
    if value not in ("global", "link", "host"):
        raise _fail(origin, f"route scope {value!r} is not global, link or host")
    return str(value)


_KEYFILE_ROUTE = re.compile(r"^route(\d+)$")
_KEYFILE_ADDRESS = re.compile(r"^address(\d+)$")
_KEYFILE_RULE = re.compile(r"^routing-rule(\d+)$")


def parse_keyfile_setup(origin: str, text: str) -> NetdevSetup:
    """One NetworkManager keyfile (``[ipv4] addressN``, ``routeN``/``routeN_options``, ``routing-ruleN``)."""
    try:
        data = parse_keyfile(text)
    except ValueError as exc:
        raise _fail(origin, f"not a keyfile: {exc}") from None
    netdev = data.get("connection", {}).get("interface-name")
    if not netdev:
        raise _fail(origin, "[connection] has no interface-name")
    ipv4 = data.get("ipv4", {})
    if ipv4.get("method") != "manual":
        raise _fail(origin, f"[ipv4] method={ipv4.get('method')}: the twin applies only manual addressing")
    mtu_text = data.get("ethernet", {}).get("mtu")
    mtu = None if mtu_text is None else _int(origin, "[ethernet] mtu", mtu_text)
    addresses, routes, rules = [], [], []
    for key in sorted(ipv4, key=_numbered):
        value = ipv4[key]
        if _KEYFILE_ADDRESS.match(key):
            addresses.append(_interface(origin, key, value.partition(",")[0]))
        elif (match := _KEYFILE_ROUTE.match(key)) is not None:
            routes.append(_keyfile_route(origin, key, value, ipv4.get(f"route{match.group(1)}_options", "")))
        elif _KEYFILE_RULE.match(key):
            rules.append(_keyfile_rule(origin, key, value))
    # method=disabled: NetworkManager gives the interface no IPv6 at all, so no link-local address either.
    link_local = data.get("ipv6", {}).get("method", "disabled") != "disabled"
    return NetdevSetup(netdev, origin, mtu, tuple(addresses), tuple(routes), tuple(rules), link_local=link_local)


def _numbered(key: str) -> tuple[str, int]:
    match = re.match(r"^(\D+)(\d+)", key)
    return (match.group(1), int(match.group(2))) if match else (key, 0)


def _keyfile_route(origin: str, key: str, value: str, options: str) -> FileRoute:
    dest, _, rest = value.partition(",")
    via, _, metric = rest.partition(",")
    opts: dict[str, str] = {}
    for option in filter(None, options.split(",")):
        name, _, setting = option.partition("=")
        opts[name] = setting
    unknown = set(opts) - {"src", "table", "onlink", "scope"}
    if unknown:
        raise _fail(origin, f"{key}_options: the twin cannot apply {sorted(unknown)[0]}")
    return FileRoute(
        to=_destination(origin, key, dest),
        via=_address(origin, f"{key} gateway", via) if via and via != "0.0.0.0" else None,
        source=_address(origin, f"{key} src", opts["src"]) if "src" in opts else None,
        table=_int(origin, f"{key} table", opts["table"]) if "table" in opts else None,
        scope=_scope(origin, opts["scope"]) if "scope" in opts else None,
        onlink=opts.get("onlink") == "true",
        metric=_int(origin, f"{key} metric", metric) if metric else None)


def _keyfile_rule(origin: str, key: str, value: str) -> FileRule:
    words = value.split()
    if len(words) % 2:
        raise _fail(origin, f"{key}: the twin cannot apply {value!r}")
    fields = dict(zip(words[::2], words[1::2], strict=True))
    if set(fields) - {"priority", "from", "to", "table"} or "table" not in fields:
        raise _fail(origin, f"{key}: the twin cannot apply {value!r}")
    return FileRule(
        source=_destination(origin, f"{key} from", fields["from"]) if "from" in fields else None,
        to=_destination(origin, f"{key} to", fields["to"]) if "to" in fields else None,
        table=_int(origin, f"{key} table", fields["table"]),
        priority=_int(origin, f"{key} priority", fields["priority"]) if "priority" in fields else None)


_SYSCTL_PART = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_SYSCTL_VALUE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def parse_sysctl(origin: str, text: str) -> list[Sysctl]:
    """``key = value`` lines as systemd-sysctl reads sysctl.d (``#``/``;`` comments, ``-`` prefix, ``/`` form)."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        key, sep, value = line.partition("=")
        key = key.strip().lstrip("-")
        if not sep or not key:
            raise TwinError(f"{origin}:{number}: not a 'key = value' line")
        # systemd-sysctl: the first of '.' and '/' is the separator; with '/', dots are literal (ens1.100).
        slash, dot = key.find("/"), key.find(".")
        parts = tuple(key.split("/") if slash != -1 and (dot == -1 or slash < dot) else key.split("."))
        if not all(_SYSCTL_PART.match(p) for p in parts) or any(p in (".", "..") for p in parts):
            raise TwinError(f"{origin}:{number}: {key!r} is not a sysctl key")
        if not _SYSCTL_VALUE.match(value.strip()):
            raise TwinError(f"{origin}:{number}: {key} = {value.strip()!r} is not a value the twin writes")
        out.append(Sysctl(origin, number, parts, value.strip()))
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
