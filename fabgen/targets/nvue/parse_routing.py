"""Read a Cumulus NVUE ``startup.yaml`` back into the OS-neutral routing picture (:class:`CommonRouting`).

Why: ``lint --deployed`` compares a collected ``startup.yaml``'s underlay with
what fabgen renders for the switch, without knowing NVUE's object model. The
file is loaded as the QoS reader loads it (:func:`~fabgen.targets.nvue.parse.load_set_tree`,
every ``- set:`` item merged), then read where ``routing.py`` writes: ``router
bgp`` (``autonomous-system``, ``router-id``, which ``vrf default router bgp``
may override), ``vrf default router bgp neighbor ADDR`` (``remote-as``, or
its ``peer-group``'s), ``address-family ipv4-unicast`` (``network``,
``multipaths ebgp``), and ``interface NAME ip address`` of ``lo`` and the
``swp`` ports. A part of the wrong shape raises ``TypeError``/``ValueError``.

States: a ``swp`` port's ``link speed`` (``auto`` is none) and ``link state down``; a neighbor with ``shutdown:
on`` (or its peer group's); a neighbor whose ``address-family ipv4-unicast
enable`` is ``off`` (its own, else its peer group's; NVUE's default is on); and
``path-selection multipath aspath-ignore: on`` for multipath relax. Timers and
BFD are a neighbor's ``timers`` and ``bfd`` (else its peer group's), what they
leave out at NVUE's defaults (3/9 s; 300 ms, 3).

Spread: ``system forwarding ecmp-hash``, each field ``on`` or ``off`` over NVUE's
defaults (the 5-tuple on, ``ingress-interface`` off; ``nv show system
forwarding``), so a file that leaves it out hashes the 5-tuple; ``router
adaptive-routing enable on`` is ``spray``, and each ``swp`` port's own
``router adaptive-routing enable on`` makes it one of the adaptive ports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fabgen.targets.nvue.parse import load_set_tree
from fabgen.targets.routing_common import (
    BFD_DEFAULT,
    CommonRouting,
    States,
    address,
    asn,
    mbps,
    picture,
    prefix,
    remote,
    uint16,
)


def _map(value: Any, what: str) -> Mapping[str, Any]:
    """``value`` as a mapping (NVUE's ``{}`` or an absent part is an empty one); TypeError for anything else."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} is not a mapping")
    return value


def _at(tree: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    node = tree
    for depth, key in enumerate(path):
        node = _map(node.get(key), " ".join(path[:depth + 1]))
    return node


ECMP_HASH = {"source-ip": "SRC_IP", "destination-ip": "DST_IP", "ip-protocol": "IP_PROTOCOL",
             "source-port": "L4_SRC_PORT", "destination-port": "L4_DST_PORT", "ingress-interface": "IN_PORT"}
"""NVUE's ``ecmp-hash`` fields a RoCE packet has, by their :data:`~fabgen.targets.routing_common.ECMP_HASH_FIELDS`
names (``ipv6-label``, ``gtp-teid`` and the ``inner-*`` ones it does not have)."""
ECMP_HASH_DEFAULT = frozenset({"SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT"})
"""What NVUE hashes on where the file says nothing: the 5-tuple."""


def _ecmp_hash(tree: Mapping[str, Any]) -> set[str]:
    fields = set(ECMP_HASH_DEFAULT)
    for key, value in _at(tree, "system", "forwarding", "ecmp-hash").items():
        name, on = ECMP_HASH.get(str(key)), _on(value)
        if name is not None and on is not None:
            (fields.add if on else fields.discard)(name)
    return fields


def parse_nvue_routing(startup_yaml_text: str) -> CommonRouting:
    """The routing picture of a ``startup.yaml``'s text."""
    tree = load_set_tree(startup_yaml_text)
    loopback: list[str] = []
    addresses: list[tuple[str, str]] = []
    state = States(ecmp_hash=_ecmp_hash(tree))
    if _on(_at(tree, "router", "adaptive-routing").get("enable")):
        state.load_balancing = "spray"
    for name, conf in _at(tree, "interface").items():
        if name != "lo" and not name.startswith("swp"):
            continue
        port = _map(conf, f"interface {name!r}")
        if name != "lo":
            link = _at(port, "link")
            if _down(link.get("state")):
                state.ports_down.add(name)
            speed = None if link.get("speed") is None else mbps(str(link["speed"]), f"interface {name!r} speed")
            if speed is not None:
                state.speeds[name] = speed
            if _on(_at(port, "router", "adaptive-routing").get("enable")):
                state.adaptive_ports.add(name)
        for value in _at(port, "ip", "address"):
            if ":" in str(value):  # IPv6: not planned
                continue
            found = prefix(str(value), f"interface {name!r} ip address")
            if name == "lo":
                loopback.append(found)
            else:
                addresses.append((name, found))
    bgp = {**_at(tree, "router", "bgp"), **_at(tree, "vrf", "default", "router", "bgp")}
    groups = _map(bgp.get("peer-group"), "peer-group")
    neighbors: dict[str, str | None] = {}
    for key, conf in _map(bgp.get("neighbor"), "neighbor").items():
        entry = _map(conf, f"neighbor {key!r}")
        group = _map(groups.get(str(entry["peer-group"])), f"neighbor {key!r} peer-group") \
            if entry.get("peer-group") is not None else {}
        remote_as = entry.get("remote-as")
        if remote_as is None:
            remote_as = group.get("remote-as")
        session = address(str(key))
        neighbors[session] = None if remote_as is None else remote(remote_as, f"neighbor {key!r} remote-as")
        if _on(entry.get("shutdown", group.get("shutdown"))):
            state.shutdown.add(session)
        timers = _at(entry, "timers") or _at(group, "timers")
        if "keepalive" in timers or "hold" in timers:  # NVUE's defaults fill the other: 3 and 9
            state.timers[session] = (_auto(timers.get("keepalive"), 3, f"neighbor {key!r} keepalive"),
                                     _auto(timers.get("hold"), 9, f"neighbor {key!r} hold"))
        bfd = _at(entry, "bfd") or _at(group, "bfd")
        if _on(bfd.get("enable")):
            what = f"neighbor {key!r} bfd"
            state.bfd[session] = (uint16(bfd.get("min-tx-interval", BFD_DEFAULT[0]), what),
                                  uint16(bfd.get("min-rx-interval", BFD_DEFAULT[1]), what),
                                  uint16(bfd.get("detect-multiplier", BFD_DEFAULT[2]), what))
        enable = _at(entry, "address-family", "ipv4-unicast").get("enable")
        if enable is None:
            enable = _at(group, "address-family", "ipv4-unicast").get("enable")
        if _on(enable) is False:
            state.inactive.add(session)
    family = _at(bgp, "address-family", "ipv4-unicast")
    state.multipath_relax = _on(_at(bgp, "path-selection", "multipath").get("aspath-ignore")) is True
    local = bgp.get("autonomous-system")
    router_id = bgp.get("router-id")
    paths = _at(family, "multipaths").get("ebgp")
    networks = [prefix(str(key), "ipv4-unicast network") for key in _at(family, "network")]
    return picture(None if local in (None, "none") else asn(local, "autonomous-system"),
                   None if router_id in (None, "none") else address(str(router_id)), loopback, addresses,
                   neighbors, None if paths is None else int(paths), networks, state)


def _auto(value: Any, default: int, what: str) -> int:
    """A timer NVUE leaves at ``auto`` (or unset) is its default."""
    return default if value in (None, "auto") else uint16(value, what)


def _on(value: Any) -> bool | None:
    """NVUE's ``on``/``off`` (5.15's ``enabled``/``disabled``, a YAML 1.1 reader's booleans too); None when unset
    or anything else."""
    return _ON_OFF.get(value) if isinstance(value, str | bool) else None


_ON_OFF: dict[str | bool, bool] = {"on": True, "off": False, "enabled": True, "disabled": False, True: True,
                                   False: False}


def _down(value: Any) -> bool:
    """NVUE's ``link state``: ``{down: {}}`` as ``nv config`` saves it, or the plain word."""
    return value == "down" or (isinstance(value, Mapping) and "down" in value)
