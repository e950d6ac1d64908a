"""Render and check a host's backend network files from :attr:`fabgen.plan.model.Host.network`.

Per host: ``netplan.yaml`` (netplan v2, Ubuntu and DGX OS) or one
NetworkManager keyfile per NIC (``nm/fabgen-NETDEV.nmconnection``, RHEL and
Rocky), as the profile's ``backend_network.config`` says. The ARP and
reverse-path settings the per-NIC routing needs (``sysctl.conf``) name only
netdevs, so they are one file per profile (``host-sysctl``,
:mod:`fabgen.targets.hostnet.sysctl`); only a host whose backend interfaces
differ from its profile's (a NIC out of service or not cabled) gets its own
``hosts/NAME/sysctl.conf`` here. The addresses, tables and MTU are the plan's;
this module only adds what is a consumer's own business (a keyfile's UUID, a
sysctl key's separator).
"""

from __future__ import annotations

import configparser
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from fabgen.errors import Problem

if TYPE_CHECKING:  # annotations only: the one-device cache re-runs the checks below without Jinja2 or the plan
    from jinja2 import Environment

    from fabgen.plan.model import BackendInterface, Host, HostNetwork
    from fabgen.spec import ClusterSpec
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.hostnet.escape import verbatim_joined
from fabgen.targets.hostnet.slots import OCTET as _OCTET  # the name the tests know it by
from fabgen.targets.hostnet.slots import PROVED_CLEAN, Fill, NetplanProof, Verdicts
from fabgen.targets.memo import remember

NETPLAN_TEMPLATE = "host-net/netplan.yaml.j2"
KEYFILE_TEMPLATE = "host-net/nmconnection.j2"
SYSCTL_TEMPLATE = "host-net/sysctl.conf.j2"

NETPLAN_DEST = "/etc/netplan/60-fabgen-backend.yaml"
"""After the distribution's own files (``00-installer-config.yaml``, ``50-cloud-init.yaml``) in netplan's order."""
KEYFILE_DIR = "/etc/NetworkManager/system-connections"
SYSCTL_DEST = "/etc/sysctl.d/60-fabgen-roce.conf"

_UUID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/fabgen/fabgen/host-net")
"""Keyfile UUIDs derive from (cluster, host, netdev): regenerating never changes them."""


def netplan_path(host: str) -> str:
    return f"hosts/{host}/netplan.yaml"


def keyfile_name(netdev: str) -> str:
    return f"fabgen-{netdev}.nmconnection"


def keyfile_path(host: str, netdev: str) -> str:
    return f"hosts/{host}/nm/{keyfile_name(netdev)}"


def sysctl_path(host: str) -> str:
    return f"hosts/{host}/sysctl.conf"


def profile_sysctl_path(profile: str) -> str:
    return f"hosts/_profiles/{profile}/sysctl.conf"


def sysctl_interfaces(interfaces: Iterable[tuple[str, int, str]]) -> list[tuple[str, str, str, int]]:
    """``(key prefix, separator, nic, rail)`` per ``(nic, rail, netdev)``: what the sysctl template prints."""
    return [(*sysctl_key(netdev), nic, rail) for nic, rail, netdev in interfaces]


def profile_interfaces(spec: ClusterSpec, profile: str) -> tuple[tuple[str, int, str], ...]:
    """``(nic, rail, netdev)`` of every backend NIC of the profile, in the order a host's network lists them.

    Asked once per host by several targets (and sorting the NICs each time was a
    third of ``install-hosts``), so it is kept per profile object: the spec is
    immutable, and the entry holds the object, so its id cannot be reused while kept.
    """
    model = spec.host_profiles[profile]
    kept = _PROFILE_INTERFACES.get(id(model))
    if kept is None or kept[0] is not model:
        kept = remember(_PROFILE_INTERFACES, id(model), (model, tuple(
            (n.name, n.rail, n.netdev) for n in model.backend_nics() if n.rail is not None)), _PROFILES_MOST)
    return kept[1]


_PROFILE_INTERFACES: dict[int, tuple[object, tuple[tuple[str, int, str], ...]]] = {}
_PROFILES_MOST = 256
"""Profiles a spec names are a handful; a process planning many specs starts this again past 256."""


def host_interfaces(host: Host) -> tuple[tuple[str, int, str], ...]:
    return tuple((i.nic, i.rail, i.netdev) for i in host.network.interfaces) if host.network else ()


def own_sysctl(spec: ClusterSpec, host: Host) -> bool:
    """The host needs a sysctl file of its own: its configured NICs are not all of its profile's backend NICs.

    The file names nothing but netdevs, so every host with all its profile's
    backend NICs in service and cabled shares the profile's copy; the others
    (``nics_out_of_service``, an uncabled NIC) must not set keys for a NIC
    their network files leave alone.
    """
    return host_interfaces(host) != profile_interfaces(spec, host.profile)


def sysctl_source(spec: ClusterSpec, host: Host) -> str | None:
    """The output path of the sysctl file this host installs (its own or its profile's), None without backend NICs."""
    if host.network is None or not host.network.interfaces:
        return None
    return sysctl_path(host.name) if own_sysctl(spec, host) else profile_sysctl_path(host.profile)


def sysctl_key(netdev: str) -> tuple[str, str]:
    """``(prefix, separator)`` of a netdev's ``conf`` keys.

    sysctl.d reads ``.`` as the separator unless the key starts with ``/``-separated
    parts, in which case dots are literal: a netdev with a dot (``ens1.100``) needs that form.
    """
    if "." in netdev:
        return f"net/ipv4/conf/{netdev}", "/"
    return f"net.ipv4.conf.{netdev}", "."


def keyfile_uuid(cluster: str, host: str, netdev: str) -> str:
    return str(uuid.uuid5(_UUID_NAMESPACE, f"{cluster}\0{host}\0{netdev}"))


def render_host_network(cluster: str, host: Host, env: Environment, sysctl: bool = True) -> dict[str, str]:
    """``{path: text}`` of one host's backend network files (none for a host without backend NICs).

    ``sysctl``: include the host's own ``sysctl.conf`` (see :func:`own_sysctl`).
    """
    net = host.network
    if net is None or not net.interfaces:
        return {}
    return _render_files(cluster, host, net, [keyfile_uuid(cluster, host.name, i.netdev) for i in net.interfaces], env,
                         sysctl)


def _render_files(cluster: str, host: Host, net: HostNetwork, uuids: list[str], env: Environment,
                  sysctl: bool) -> dict[str, str]:
    from fabgen.plan.host_network import ROCE_HEADERS  # here: the checks of this module must not import the planner

    common: dict[str, Any] = {"cluster": cluster, "host": host, "net": net, "roce_headers": ROCE_HEADERS}
    files: dict[str, str] = {}
    if net.config == "netplan":
        files[netplan_path(host.name)] = env.get_template(NETPLAN_TEMPLATE).render(dest=NETPLAN_DEST, **common)
    else:
        template = env.get_template(KEYFILE_TEMPLATE)
        for iface, key in zip(net.interfaces, uuids, strict=True):
            files[keyfile_path(host.name, iface.netdev)] = template.render(
                i=iface, dest=f"{KEYFILE_DIR}/{keyfile_name(iface.netdev)}", connection_id=f"fabgen-{iface.netdev}",
                uuid=key, **common)
    if sysctl:
        files[sysctl_path(host.name)] = render_sysctl(env, cluster, f"host {host.name}", host_interfaces(host),
                                                      host=host, net=net)
    return files


def render_sysctl(env: Environment, cluster: str, owner: str, interfaces: Iterable[tuple[str, int, str]],
                  **extra: Any) -> str:
    """The sysctl.d file for ``(nic, rail, netdev)`` interfaces; ``owner`` (``host X``, ``profile P``) heads it."""
    return env.get_template(SYSCTL_TEMPLATE).render(
        cluster=cluster, owner=owner, dest=SYSCTL_DEST, interfaces=sysctl_interfaces(interfaces), **extra)


def _render(context: RenderContext, host: Host) -> dict[str, str]:
    """Hosts of one profile differ only in names and addresses: render once per shape, then fill the values in.

    The shape is the host's network with every per-host string (name, addresses,
    leaf and port, keyfile UUIDs) replaced by a numbered sentinel; its files are
    rendered once, split at the sentinels, and each host's files are the join
    with its own values. Filling in is only equal to rendering when each value
    prints as itself through every filter (the safe keyfile set) and the
    template treats values as opaque: so only fabgen's shipped templates take
    this path, values outside the set render in full, and the first host of
    each shape is rendered in full too and must equal the filled-in shape, or
    that shape renders in full for every host.
    """
    net = host.network
    if net is None or not net.interfaces:
        return {}
    cluster = context.plan.spec.cluster.name
    from fabgen.targets.environment import shipped_templates  # Jinja2: not on the --device cache-hit path

    if not shipped_templates(context, (NETPLAN_TEMPLATE, KEYFILE_TEMPLATE, SYSCTL_TEMPLATE)):
        return _render_files(cluster, host, net, _uuids(cluster, host.name, net), context.env,
                             _own_sysctl(context, host))
    key, values = _key_values(host.profile, net)
    uuids = _uuids(cluster, host.name, net)
    values.append(host.name)
    values += uuids
    joined = verbatim_joined(values)
    if joined is None or "fabgen-sentinel-" in joined:
        return _render_files(cluster, host, net, uuids, context.env, _own_sysctl(context, host))
    shapes: dict[tuple[Any, ...], _Shape] = context.cache.setdefault("host-net-shapes", {})
    shape = shapes.get(key)  # the one lookup by the deep key: a tuple's hash is not kept, each costs a walk
    if shape is not None:
        if shape.split is None:
            return _render_files(cluster, host, net, uuids, context.env, shape.own)
        filled = {path(values): text(values) for path, text in shape.split}
        if shape.proof is not None:  # the netplan file is the first one of its split
            path, text = next(iter(filled.items()))
            context.cache["host-net-verdicts"].vouch_filled(shape, shape.proof, values, path, text)
        return filled
    own = _own_sysctl(context, host)  # a function of the key: its profile and each NIC's (nic, rail, netdev)
    files = _render_files(cluster, host, net, uuids, context.env, own)
    slots: list[str] = []
    shape_net = _shape(net, slots)
    name = _slot(host.name, slots)
    shape_files = _render_files(cluster, replace(host, name=name), shape_net, [_slot(u, slots) for u in uuids],
                                context.env, own)
    split = [(Fill(path), Fill(text)) for path, text in shape_files.items()]
    filled = {path(values): text(values) for path, text in split}
    shape = shapes[key] = _Shape(own, split if slots == values and filled == files else None)
    context.cache.setdefault("host-net-verdicts", Verdicts(check_host_network_file))
    path, text = next(iter(shape_files.items()))
    if shape.split is not None and (proof := NetplanProof(path, text, values)).ok:
        shape.proof = proof
    return files


class _Shape:
    """One shape of a render run: the hosts' own-sysctl answer, the split (None: render each host in full) and
    the netplan slot proof (None: check each filled file in full). Keyed by identity in the verdicts."""

    __slots__ = ("own", "proof", "split")

    def __init__(self, own: bool, split: list[tuple[Fill, Fill]] | None) -> None:
        self.own = own
        self.split = split
        self.proof: NetplanProof | None = None


def _uuids(cluster: str, host: str, net: HostNetwork) -> list[str]:
    return [] if net.config == "netplan" else [keyfile_uuid(cluster, host, i.netdev) for i in net.interfaces]


def _own_sysctl(context: RenderContext, host: Host) -> bool:
    """:func:`own_sysctl`, with each profile's interfaces worked out once per run."""
    profiles: dict[str, tuple[tuple[str, int, str], ...]] = context.cache.setdefault("host-net-profiles", {})
    mine = profiles.get(host.profile)
    if mine is None:
        mine = profiles[host.profile] = profile_interfaces(context.plan.spec, host.profile)
    return host_interfaces(host) != mine


def _key_values(profile: str, net: HostNetwork) -> tuple[tuple[Any, ...], list[str]]:
    """The shape key (everything of ``net`` that :func:`_shape` keeps, and the profile, which with the NICs
    decides :func:`own_sysctl`) and the per-host strings in :func:`_shape`'s slot order, in one pass: hosts with
    equal keys render to one shape. The caller appends the host name and the UUIDs to the values."""
    values: list[str] = []
    interfaces: list[tuple[Any, ...]] = []
    for i in net.interfaces:
        rule = i.rule
        values += (i.address, i.gateway, i.leaf, i.leaf_port)
        hops: list[bool | int] = []  # (on-link, table) of each route, flat: two items a route, no tuple each
        for r in i.routes:
            via = r.via
            if via is None:
                values += (r.to, r.source)
            else:
                values += (r.to, r.source, via)
            hops += (via is None, r.table)
        values.append(rule.source)
        interfaces.append((i.nic, i.netdev, i.rail, i.mtu, i.table, rule.priority, rule.table, tuple(hops)))
    return (profile, net.config, net.mtu, net.roce_mtu, tuple(interfaces)), values


def _slot(value: str, values: list[str]) -> str:
    """The numbered sentinel standing for ``value`` (what :class:`~fabgen.targets.hostnet.slots.Fill` cuts at):
    made of characters every host-net filter prints as they are, so it survives the render verbatim."""
    values.append(value)
    return f"fabgen-sentinel-{len(values) - 1:04d}-"


def _shape(net: HostNetwork, values: list[str]) -> HostNetwork:
    """``net`` with its per-host strings moved into ``values``; netdevs, NICs and numbers stay (they key the shape)."""
    return replace(net, interfaces=tuple(
        replace(i, address=_slot(i.address, values), gateway=_slot(i.gateway, values), leaf=_slot(i.leaf, values),
                leaf_port=_slot(i.leaf_port, values),
                routes=tuple(replace(r, to=_slot(r.to, values), source=_slot(r.source, values),
                                     via=None if r.via is None else _slot(r.via, values)) for r in i.routes),
                rule=replace(i.rule, source=_slot(i.rule.source, values)))
        for i in net.interfaces))


# ---------------------------------------------------------------- checks


def check_host_network_file(path: str, text: str) -> list[Problem]:
    """Read a produced file back the way its consumer's parser would; any problem is a fabgen bug.

    Hosts of one profile differ only in their addresses and comments, and a
    pure-Python YAML parse per host costs minutes at 24k hosts: whole-line
    comments are dropped, every well-formed IPv4 address becomes one
    placeholder, and each distinct shape is parsed once. A malformed address is
    not replaced, so the shape's check still sees it. A netplan text the renderer
    filled from a shape whose verdict its values prove clean
    (:mod:`fabgen.targets.hostnet.slots`) costs one identity test instead.
    """
    if path.endswith("/netplan.yaml"):
        if PROVED_CLEAN.take(path, text):
            return []
        shape = _QUOTED_ADDRESS.sub(_QUOTED_PLACEHOLDER, _COMMENT_LINE.sub("", "\n" + text))
        return [Problem(m, file=path) for m in _shape_problems("netplan", shape[1:])]
    if path.endswith(".nmconnection"):
        shape = _ANY_ADDRESS.sub(_PLACEHOLDER, _COMMENT_LINE.sub("", "\n" + text))
        return [Problem(m, file=path) for m in _shape_problems("keyfile", shape[1:])]
    if path.endswith("/sysctl.conf"):
        return [Problem(m, file=path, line=n) for n, m in sysctl_problems(text)]
    return [Problem("host-net produced a file it does not know how to check", file=path)]


_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
"""A dotted quad of canonical octets. ``10.0.0.010`` is refused: its readers disagree (``netplan generate``
stops with "malformed address", glibc's ``inet_pton`` refuses it, ``ip`` and ``inet_aton`` read ``010`` as
octal, 10.0.0.8). The same octet as the placeholder passes' (:data:`_QUOTED_ADDRESS`), so an address a pass
hides behind the placeholder is one this pattern accepts."""
_ANY_ADDRESS = re.compile(rf"(?<![\d.]){_IPV4}(?![\d.])")
_PLACEHOLDER = "192.0.2.1"
_COMMENT_LINE = re.compile(r"\n[ \t]*#[^\n]*")
"""A whole-line comment with the newline before it, on the text with a newline put in front.

Led by a literal character, which the regex engine finds by a fast scan; a
``^`` under ``re.MULTILINE`` tries a match at every offset, four times slower.
"""
_QUOTED_ADDRESS = re.compile(rf'"{_OCTET}(?:\.{_OCTET}){{3}}(?=[/"])')
"""The address of every ``"ADDRESS"`` or ``"ADDRESS/..."``: netplan files quote every address (``yaml_str``).

Led by ``"`` for the same fast scan (1.7x cheaper than splitting at quotes
and matching each piece). Sound even where the quote does not open a
string: one well-formed dotted quad becomes another, which no check tells
apart; what follows the ``/`` stays. A malformed address (or one with a
leading zero) is left as it is, for the shape's check to see.
"""
_QUOTED_PLACEHOLDER = f'"{_PLACEHOLDER}'
_YAML = YAML(typ="safe", pure=True)


@lru_cache(maxsize=256)
def _shape_problems(kind: str, shape: str) -> tuple[str, ...]:
    return tuple(netplan_problems(shape) if kind == "netplan" else keyfile_problems(shape))
_PREFIX = re.compile(rf"^{_IPV4}/(?:[12]?\d|3[0-2])$")
_ADDRESS = re.compile(rf"^{_IPV4}$")
_NETDEV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")


def netplan_problems(text: str) -> list[str]:
    """Strict structure check of our netplan file: only the keys and types fabgen writes."""
    try:
        data = _YAML.load(text)
    except YAMLError as exc:
        return [f"not YAML: {exc}"]
    if not isinstance(data, dict) or set(data) != {"network"} or not isinstance(data["network"], dict):
        return ["top level must be exactly 'network'"]
    network = data["network"]
    if network.get("version") != 2 or set(network) != {"version", "ethernets"}:
        return ["network must hold exactly version: 2 and ethernets"]
    ethernets = network["ethernets"]
    if not isinstance(ethernets, dict) or not ethernets:
        return ["ethernets must be a non-empty mapping"]
    problems: list[str] = []
    for name, eth in ethernets.items():
        problems.extend(f"{name}: {m}" for m in _netplan_ethernet(name, eth))
    return problems


_ETHERNET_KEYS = {"dhcp4", "dhcp6", "accept-ra", "link-local", "optional", "mtu", "addresses", "routes", "routing-policy"}


def _netplan_ethernet(name: object, eth: object) -> Iterator[str]:
    if not isinstance(name, str) or not _NETDEV.match(name):
        yield "not an interface name"
        return
    if not isinstance(eth, dict) or set(eth) != _ETHERNET_KEYS:
        yield f"keys must be {sorted(_ETHERNET_KEYS)}"
        return
    if eth["dhcp4"] is not False or eth["dhcp6"] is not False or eth["accept-ra"] is not False:
        yield "dhcp4, dhcp6 and accept-ra must be false"
    if eth["link-local"] != [] or eth["optional"] is not True:
        yield "link-local must be [] and optional true"
    if type(eth["mtu"]) is not int or not 1280 <= eth["mtu"] <= 9216:
        yield "mtu must be an integer in 1280..9216"
    addresses = eth["addresses"]
    if not isinstance(addresses, list) or len(addresses) != 1 or not _PREFIX.match(str(addresses[0])):
        yield "addresses must be one IPv4 prefix"
    routes = eth["routes"]
    if not isinstance(routes, list) or not routes:
        yield "routes must be a non-empty list"
        return
    tables = set()
    for route in routes:
        if not isinstance(route, dict) or not _PREFIX.match(str(route.get("to"))):
            yield f"route {route!r} needs a prefix 'to'"
            continue
        hop = {"via"} if "via" in route else {"scope"}
        if set(route) != {"to", "from", "table"} | hop:
            yield f"route to {route['to']} has unexpected keys {sorted(route)}"
        if "via" in route and not _ADDRESS.match(str(route["via"])):
            yield f"route to {route['to']}: via must be an address"
        if "scope" in route and route["scope"] != "link":
            yield f"route to {route['to']}: scope must be link"
        if not _ADDRESS.match(str(route.get("from"))):
            yield f"route to {route['to']}: from must be an address"
        tables.add(route.get("table"))
    rules = eth["routing-policy"]
    if (not isinstance(rules, list) or len(rules) != 1 or not isinstance(rules[0], dict)
            or set(rules[0]) != {"from", "table", "priority"} or not _PREFIX.match(str(rules[0]["from"]))):
        yield "routing-policy must be one rule with from, table and priority"
        return
    if tables != {rules[0]["table"]} or type(rules[0]["table"]) is not int or not 1 <= rules[0]["table"] <= 252:
        yield "every route and the rule must use one table in 1..252"


class _StrictKeyfile(configparser.RawConfigParser):
    """Case-sensitive keys (NM's are), no interpolation, duplicates refused."""

    def optionxform(self, optionstr: str) -> str:
        return optionstr


_KEYFILE_REQUIRED = {
    "connection": {"id", "uuid", "type", "interface-name", "autoconnect"},
    "ethernet": {"mtu"},
    "ipv4": {"method", "address1", "never-default", "routing-rule1"},
    "ipv6": {"method"},
}
_ROUTE_KEY = re.compile(r"^route(\d+)(_options)?$")
_RULE = re.compile(rf"^priority (\d+) from ({_IPV4}/32) table (\d+)$")


def parse_keyfile(text: str) -> dict[str, dict[str, str]]:
    """A keyfile as NetworkManager's GKeyFile reader sees it; raises ``ValueError`` on anything it would not."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and not stripped.startswith("[") and "=" not in stripped:
            raise ValueError(f"line {number}: neither a comment, a group nor key=value")
        if line != stripped:
            raise ValueError(f"line {number}: leading or trailing blanks (GKeyFile keeps them in values)")
    parser = _StrictKeyfile(strict=True, interpolation=None, delimiters=("=",), comment_prefixes=("#",),
                            inline_comment_prefixes=None, empty_lines_in_values=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    return {section: dict(parser.items(section)) for section in parser.sections()}


def keyfile_problems(text: str) -> list[str]:
    try:
        data = parse_keyfile(text)
    except ValueError as exc:
        return [f"not a keyfile: {exc}"]
    problems: list[str] = []
    if set(data) != set(_KEYFILE_REQUIRED):
        return [f"groups must be {sorted(_KEYFILE_REQUIRED)}, got {sorted(data)}"]
    for section, keys in _KEYFILE_REQUIRED.items():
        missing = keys - set(data[section])
        if missing:
            problems.append(f"[{section}] lacks {sorted(missing)}")
        extra = {k for k in set(data[section]) - keys if section != "ipv4" or not _ROUTE_KEY.match(k)}
        if extra:
            problems.append(f"[{section}] has keys fabgen does not write: {sorted(extra)}")
    conn, ipv4 = data["connection"], data["ipv4"]
    if conn.get("type") != "ethernet" or not _NETDEV.match(conn.get("interface-name", "")):
        problems.append("[connection] must be type=ethernet with an interface-name")
    try:
        uuid.UUID(conn.get("uuid", ""))
    except ValueError:
        problems.append("[connection] uuid is not a UUID")
    if not data["ethernet"].get("mtu", "").isdigit():
        problems.append("[ethernet] mtu must be a number")
    if ipv4.get("method") != "manual" or not _PREFIX.match(ipv4.get("address1", "")):
        problems.append("[ipv4] must be method=manual with address1")
    if data["ipv6"].get("method") != "disabled":
        problems.append("[ipv6] method must be disabled")
    rule = _RULE.match(ipv4.get("routing-rule1", ""))
    if rule is None:
        problems.append("[ipv4] routing-rule1 must be 'priority N from ADDR/32 table T'")
    routes: dict[int, dict[str, str]] = {}
    for key, value in ipv4.items():
        match = _ROUTE_KEY.match(key)
        if match is None:
            continue
        routes.setdefault(int(match.group(1)), {})["options" if match.group(2) else "route"] = value
    if sorted(routes) != list(range(1, len(routes) + 1)) or not routes:
        problems.append("[ipv4] routes must be numbered route1, route2, ... without gaps")
    for number, route in sorted(routes.items()):
        dest, _, via = route.get("route", "").partition(",")
        options = dict(o.partition("=")[::2] for o in route.get("options", "").split(","))
        if not _PREFIX.match(dest) or (via and not _ADDRESS.match(via)):
            problems.append(f"[ipv4] route{number} must be PREFIX[,GATEWAY]")
        if set(options) != {"src", "table"} or not _ADDRESS.match(options["src"]):
            problems.append(f"[ipv4] route{number}_options must be src=ADDR,table=T")
        elif rule is not None and options["table"] != rule.group(3):
            problems.append(f"[ipv4] route{number} is not in the rule's table {rule.group(3)}")
    return problems


_SYSCTL_LINE = re.compile(r"^(net(?P<sep>[./])ipv4(?P=sep)conf(?P=sep)[A-Za-z0-9_.-]{1,15}"
                          r"[./](?:arp_ignore|arp_announce|rp_filter)) = ([0-9])$")


def sysctl_problems(text: str) -> list[tuple[int, str]]:
    """Every non-comment line must be one of the three keys we write, each key once."""
    seen: set[str] = set()
    problems: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        match = _SYSCTL_LINE.match(line)
        if match is None:
            problems.append((number, f"not a backend sysctl line: {line!r}"))
        elif match.group(1) in seen:
            problems.append((number, f"{match.group(1)} set twice"))
        else:
            seen.add(match.group(1))
    if not seen:
        problems.append((0, "no settings"))
    return problems


def _interfaces(host: Host) -> tuple[BackendInterface, ...]:
    return host.network.interfaces if host.network else ()


TARGET = Target(
    name="host-net",
    scope="host",
    summary="backend NIC addresses, MTU and per-NIC source routing (netplan or NetworkManager) plus sysctl.d",
    render=_render,
    applies=lambda host: bool(_interfaces(host)),
    check=check_host_network_file,
)
