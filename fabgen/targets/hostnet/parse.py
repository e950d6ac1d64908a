"""A host's backend network files as their consumers read them: netplan v2 YAML and NetworkManager keyfiles.

What :mod:`fabgen.targets.hostnet.config` renders (``hosts/NAME/netplan.yaml``,
``hosts/NAME/nm/fabgen-NETDEV.nmconnection``), read back into one
:class:`NetdevSetup` per interface: MTU, addresses, routes and routing-policy
rules, with every value parsed into an address, a number or one of a few words.
Only the keys fabgen's files may hold are accepted; anything else is refused
with the file's name (:class:`HostFileError`), never ignored. Two readers use
this: the twin, which applies the files to namespaces
(:mod:`fabgen.twin.hostfiles`), and ``lint --deployed``, which compares
collected files with the plan (:mod:`fabgen.lint.deployed_hostnet`).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.nodes import MappingNode, Node, SequenceNode

from fabgen.targets.hostnet.config import parse_keyfile


class HostFileError(ValueError):
    """A host network file its parser refuses: ``origin`` (the file, then the interface) and the ``reason``."""

    def __init__(self, origin: str, reason: str) -> None:
        super().__init__(f"{origin}: {reason}")
        self.origin = origin
        self.reason = reason


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




_YAML = YAML(typ="safe", pure=True)
_NETPLAN_IGNORED = {"optional", "accept-ra", "dhcp6"}
"""Keys read and not kept: a boot wait, DHCPv6 and RAs change nothing the twin checks or lint compares."""
_NETPLAN_KEYS = _NETPLAN_IGNORED | {"dhcp4", "link-local", "mtu", "addresses", "routes", "routing-policy"}
_ROUTE_KEYS = {"to", "via", "from", "table", "scope", "on-link", "metric"}
_RULE_KEYS = {"from", "to", "table", "priority"}


def _fail(origin: str, message: str) -> HostFileError:
    return HostFileError(origin, message)


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
        raise _fail(origin, f"network.{sorted(unknown)[0]} is not a key fabgen writes")
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
        raise _fail(where, f"{sorted(unknown)[0]!r} is not a key fabgen writes")
    if eth.get("dhcp4") not in (None, False):
        raise _fail(where, "dhcp4: backend NICs need static addresses (fabgen writes them; no DHCP)")
    mtu = None if eth.get("mtu") is None else _int(where, "mtu", eth["mtu"])
    addresses = tuple(_interface(where, "address", a) for a in _list(where, "addresses", eth.get("addresses")))
    routes = []
    for route in _list(where, "routes", eth.get("routes")):
        if not isinstance(route, dict) or "to" not in route or set(route) - _ROUTE_KEYS:
            raise _fail(where, f"a route not of the form fabgen writes: {route!r}")
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
            raise _fail(where, f"a routing-policy rule not of the form fabgen writes: {rule!r}")
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
        raise _fail(origin, f"[ipv4] method={ipv4.get('method')!r}: fabgen writes manual addressing only")
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
        raise _fail(origin, f"{key}_options: {sorted(unknown)[0]!r} is not an option fabgen writes")
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
        raise _fail(origin, f"{key}: not of the form fabgen writes: {value!r}")
    fields = dict(zip(words[::2], words[1::2], strict=True))
    if set(fields) - {"priority", "from", "to", "table"} or "table" not in fields:
        raise _fail(origin, f"{key}: not of the form fabgen writes: {value!r}")
    return FileRule(
        source=_destination(origin, f"{key} from", fields["from"]) if "from" in fields else None,
        to=_destination(origin, f"{key} to", fields["to"]) if "to" in fields else None,
        table=_int(origin, f"{key} table", fields["table"]),
        priority=_int(origin, f"{key} priority", fields["priority"]) if "priority" in fields else None)



# ---------------------------------------------------------------- where each part stands

Lines = dict[tuple[str, int], int]
"""1-based lines of one interface's parts in its file: ``("", 0)`` the interface itself, ``("mtu", 0)``, and
``("addresses", i)``, ``("routes", i)``, ``("routing-policy", i)`` for the i-th item as the parser returns it."""

_PARTS = ("addresses", "routes", "routing-policy")


def netplan_lines(text: str) -> dict[str, Lines]:
    """``{netdev: lines}`` of a netplan file :func:`parse_netplan` accepted (item i of a list is item i parsed).

    Only for files that differ from the plan: composing the YAML again costs as much as parsing it.
    """
    root = _YAML.compose(text)
    ethernets = _child(_child(root, "network"), "ethernets")
    out: dict[str, Lines] = {}
    if not isinstance(ethernets, MappingNode):
        return out
    for key, eth in ethernets.value:
        lines: Lines = {("", 0): key.start_mark.line + 1}
        if isinstance(eth, MappingNode):
            for part, node in eth.value:
                if part.value in ("mtu", "link-local"):
                    lines[(str(part.value), 0)] = part.start_mark.line + 1
                elif part.value in _PARTS and isinstance(node, SequenceNode):
                    for index, item in enumerate(node.value):
                        lines[(str(part.value), index)] = item.start_mark.line + 1
        out[str(key.value)] = lines
    return out


def _child(node: Node | None, name: str) -> Node | None:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if key.value == name:
                return value  # type: ignore[no-any-return]
    return None


def keyfile_lines(text: str) -> Lines:
    """The lines of a keyfile :func:`parse_keyfile_setup` accepted: its ``interface-name``, ``[ethernet] mtu``,
    ``[ipv6] method``, and
    the ``addressN``, ``routeN`` and ``routing-ruleN`` keys in the order the parser takes them."""
    section = ""
    keys: dict[tuple[str, str], int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("["):
            section = line.strip("[]")
        elif line and not line.startswith("#"):
            keys.setdefault((section, line.partition("=")[0].strip()), number)
    lines: Lines = {("", 0): keys.get(("connection", "interface-name"), 1)}
    for part, where in (("mtu", ("ethernet", "mtu")), ("link-local", ("ipv6", "method"))):
        if where in keys:
            lines[(part, 0)] = keys[where]
    ipv4 = sorted((key for sec, key in keys if sec == "ipv4"), key=_numbered)
    for part, pattern in zip(_PARTS, (_KEYFILE_ADDRESS, _KEYFILE_ROUTE, _KEYFILE_RULE), strict=True):
        for index, key in enumerate(k for k in ipv4 if pattern.match(k)):
            lines[(part, index)] = keys[("ipv4", key)]
    return lines
