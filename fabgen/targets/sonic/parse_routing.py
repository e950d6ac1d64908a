"""Read a SONiC CONFIG_DB back into the OS-neutral routing picture (:class:`CommonRouting`).

Why: ``lint --deployed`` compares a collected ``config_db.json``'s underlay with
what fabgen renders for the switch, without knowing SONiC's tables. The reader
follows the daemon that turns the tables into FRR's configuration
(``routing.py`` explains both): with ``DEVICE_METADATA|localhost``
``frr_mgmt_framework_config: "true"`` (what fabgen writes) frrcfgd runs
``BGP_GLOBALS|default`` (``local_asn``, ``router_id``),
``BGP_GLOBALS_AF|default|ipv4_unicast`` (``max_ebgp_paths``) and
``BGP_GLOBALS_AF_NETWORK``; otherwise bgpcfgd's templates take the ASN from
``DEVICE_METADATA.bgp_asn``, the router-id from ``bgp_router_id`` or
``Loopback0``, and the ECMP width and announcements from the image, not from
CONFIG_DB (read as unset). Sessions are ``BGP_NEIGHBOR`` entries of the default
VRF (``default|ADDR``, or bgpcfgd's bare ``ADDR``) with their ``asn``;
addresses are the ``PORT|a.b.c.d/len`` keys of ``INTERFACE`` and
``Loopback0|...`` of ``LOOPBACK_INTERFACE``. A table or entry of the wrong shape
raises ``TypeError``/``ValueError``.

States, as the daemons apply them: a ``PORT``'s ``speed`` (Mb/s) and how many ``lanes`` it lists; a ``PORT``
whose ``admin_status`` is not ``up`` is down (``sonic-port.yang``'s default); a
``BGP_NEIGHBOR`` with ``admin_status`` ``down`` (or ``false``) is shut, and
under bgpcfgd so is one without it when ``DEVICE_METADATA.default_bgp_status``
is ``down``. frrcfgd turns
``bgp default ipv4-unicast`` off, so a session exchanges IPv4 routes only with
``BGP_NEIGHBOR_AF|default|ADDR|ipv4_unicast`` ``admin_status: up``, and relaxes
multipath with ``BGP_GLOBALS.load_balance_mp_relax: "true"``; bgpcfgd's
templates activate every session and take relax from the image (on). Timers are
a neighbor's ``keepalive``/``holdtime``, else (frrcfgd) those of ``BGP_GLOBALS``; BFD is
a neighbor's ``bfd: "true"`` under frrcfgd, at bfdd's default timers.

ECMP hashing is ``SWITCH_HASH|GLOBAL.ecmp_hash``, a list of ``sonic-hash.yang``'s
fields (a name outside it raises ``ValueError``); without it the platform's own
hash applies. CONFIG_DB has no DLB or spraying: the spread is always ``ecmp``.
``DEVICE_METADATA|localhost.hwsku`` names the SKU the ports and buffers are laid out for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fabgen.targets.routing_common import (
    BFD_DEFAULT,
    ECMP_HASH_FIELDS,
    CommonRouting,
    States,
    address,
    asn,
    picture,
    prefix,
    remote,
    uint16,
)


def _table(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise TypeError(f"table {name} is not a mapping of entries")
    return value


def _entry(table: Mapping[str, Any], name: str, key: str) -> Mapping[str, Any]:
    value = table.get(key, {})
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} entry {key!r} is not a mapping of fields")
    return value


def _prefixes(data: Mapping[str, Any], name: str) -> list[tuple[str, str]]:
    """(interface, IPv4 prefix) of each ``IFACE|PREFIX`` key of a table; IPv6 ones are no part of the picture."""
    out = []
    for key in _table(data, name):
        port, bar, value = str(key).partition("|")
        if bar and ":" not in value:
            out.append((port, prefix(value, f"{name} {port!r}")))
    return out


def _mbps(value: object, what: str) -> int:
    """A PORT speed: Mb/s, 1..1600000 (``sonic-port.yang``)."""
    text = str(value)
    if not (text.isascii() and text.isdigit() and len(text) <= 7) or not 1 <= int(text) <= 1_600_000:
        raise ValueError(f"{what}: {text!r} is not a speed in Mb/s")
    return int(text)


HASH_FIELDS = frozenset({*ECMP_HASH_FIELDS, "INNER_DST_MAC", "INNER_SRC_MAC", "INNER_ETHERTYPE", "INNER_IP_PROTOCOL",
                         "INNER_DST_IP", "INNER_SRC_IP", "INNER_L4_DST_PORT", "INNER_L4_SRC_PORT", "IPV6_FLOW_LABEL"})
"""``sonic-hash.yang``'s ``hash-field`` enumeration."""


def _ecmp_hash(data: Mapping[str, Any]) -> set[str] | None:
    """``SWITCH_HASH|GLOBAL.ecmp_hash`` as a set; None where the file does not set it."""
    fields = _entry(_table(data, "SWITCH_HASH"), "SWITCH_HASH", "GLOBAL").get("ecmp_hash")
    if fields is None:
        return None
    if not isinstance(fields, list):
        raise TypeError("SWITCH_HASH 'GLOBAL' ecmp_hash is not a list of fields")
    for name in fields:
        if name not in HASH_FIELDS:
            raise ValueError(f"SWITCH_HASH 'GLOBAL' ecmp_hash: {str(name)!r} is not a hash field")
    return set(fields)


def _lane_count(value: object, what: str) -> int:
    """A PORT's ``lanes`` (``0,1,2,3``): how many SerDes lanes it lists."""
    parts = str(value).split(",")
    if len(parts) > 64 or not all(p.isascii() and p.isdigit() and len(p) <= 5 for p in parts):
        raise ValueError(f"{what}: {str(value)!r} is not a list of lane numbers")
    return len(parts)


def parse_sonic_routing(data: Mapping[str, Any]) -> CommonRouting:
    """The routing picture of a decoded ``config_db.json``."""
    if not isinstance(data, Mapping):
        raise TypeError("config_db.json is not a mapping of tables")
    metadata = _entry(_table(data, "DEVICE_METADATA"), "DEVICE_METADATA", "localhost")
    loopback = [value for port, value in _prefixes(data, "LOOPBACK_INTERFACE") if port == "Loopback0"]
    addresses = _prefixes(data, "INTERFACE")
    frrcfgd = metadata.get("frr_mgmt_framework_config") == "true"
    ports = _table(data, "PORT")
    hwsku = metadata.get("hwsku")
    if hwsku is not None and not isinstance(hwsku, str):
        raise TypeError("DEVICE_METADATA 'localhost' hwsku is not a name")
    state = States(ecmp_hash=_ecmp_hash(data), hwsku=hwsku)
    for port in ports:
        entry = _entry(ports, "PORT", port)
        if entry.get("admin_status") != "up":
            state.ports_down.add(str(port))
        if "speed" in entry:
            state.speeds[str(port)] = _mbps(entry["speed"], f"PORT {port!r} speed")
        if "lanes" in entry:
            state.lanes[str(port)] = _lane_count(entry["lanes"], f"PORT {port!r} lanes")
    default_status = "up" if frrcfgd else metadata.get("default_bgp_status", "up")
    families = _table(data, "BGP_NEIGHBOR_AF")
    neighbors: dict[str, str | None] = {}
    for key, entry in _table(data, "BGP_NEIGHBOR").items():
        vrf, bar, peer = str(key).rpartition("|")
        if bar and vrf != "default":
            continue
        if not isinstance(entry, Mapping):
            raise TypeError(f"BGP_NEIGHBOR entry {key!r} is not a mapping of fields")
        session = address(peer)
        neighbors[session] = remote(entry["asn"], f"BGP_NEIGHBOR {key!r} asn") if "asn" in entry else None
        if entry.get("admin_status", default_status) in ("down", "false"):
            state.shutdown.add(session)
        if frrcfgd:
            family = _entry(families, "BGP_NEIGHBOR_AF", f"default|{peer}|ipv4_unicast")
            if family.get("admin_status") not in ("up", "true"):
                state.inactive.add(session)
            if entry.get("bfd") == "true":  # frrcfgd only; FRR's bfdd timers, none in CONFIG_DB
                state.bfd[session] = BFD_DEFAULT
        if "keepalive" in entry or "holdtime" in entry:  # both daemons; bgpcfgd fills the other from 60/180
            state.timers[session] = (uint16(entry.get("keepalive", 60), f"BGP_NEIGHBOR {key!r} keepalive"),
                                     uint16(entry.get("holdtime", 180), f"BGP_NEIGHBOR {key!r} holdtime"))
    if frrcfgd:
        bgp = _entry(_table(data, "BGP_GLOBALS"), "BGP_GLOBALS", "default")
        af = _entry(_table(data, "BGP_GLOBALS_AF"), "BGP_GLOBALS_AF", "default|ipv4_unicast")
        local = bgp.get("local_asn")
        router_id = bgp.get("router_id")
        paths = af.get("max_ebgp_paths")
        state.multipath_relax = bgp.get("load_balance_mp_relax") == "true"
        if "keepalive" in bgp and "holdtime" in bgp:  # timers bgp K H: the sessions without their own
            instance = (uint16(bgp["keepalive"], "BGP_GLOBALS keepalive"), uint16(bgp["holdtime"], "BGP_GLOBALS holdtime"))
            for session in neighbors:
                state.timers.setdefault(session, instance)
        networks = [prefix(key.split("|")[2], "BGP_GLOBALS_AF_NETWORK")
                    for key in map(str, _table(data, "BGP_GLOBALS_AF_NETWORK"))
                    if key.count("|") == 2 and key.startswith("default|ipv4_unicast|")]
    else:  # bgpcfgd's templates
        local = metadata.get("bgp_asn")
        router_id = metadata.get("bgp_router_id") or (loopback[0].split("/")[0] if loopback else None)
        paths, networks = None, []
        state.multipath_relax = True  # constants.yml: bgp.multipath_relax.enabled
    return picture(None if local is None else asn(local, "local ASN"),
                   None if router_id is None else address(str(router_id)), loopback, addresses, neighbors,
                   None if paths is None else int(paths), networks, state)
