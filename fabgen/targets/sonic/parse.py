"""Read a SONiC CONFIG_DB back into the OS-neutral :class:`~fabgen.targets.qos_common.CommonQos`.

Why: the cross-OS test and the linter compare what a switch *is told* with what
the plan meant, without knowing SONiC's table layout. This parser follows the
references the way orchagent does (port -> ``PORT_QOS_MAP`` -> maps; port|queue ->
``QUEUE`` -> ``SCHEDULER`` / ``WRED_PROFILE``; port|PG -> ``BUFFER_PG`` -> ``BUFFER_PROFILE``;
port -> ``PFC_WD``), so it also reads
a config_db.json collected from a running switch, not only fabgen's own.

A picture is of one port (the QoS of a switch lives on its ports): by default the
first port of ``PORT_QOS_MAP`` in port order, since fabgen gives every port the
same. :func:`parse_sonic_switch`, which ``lint --deployed`` reads a switch with,
takes every port's and says which ports carry the switch's picture.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from fabgen.targets.qos_common import CommonQos, used_queues

__all__ = ["parse_sonic_qos", "parse_sonic_switch", "qos_ports"]

SONIC_DEFAULT_MTU = 9100
"""What SONiC uses when a PORT entry has no ``mtu``."""
WRED_DEFAULT_PROBABILITY = 100
"""sonic-wred-profile's default ``*_drop_probability``."""


def _table(data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    return value if isinstance(value, Mapping) else {}


def _port_order(name: str) -> tuple[str, int, str]:
    """``Ethernet8`` before ``Ethernet16`` (natural order), as SONiC lists ports."""
    match = re.fullmatch(r"(\D*)(\d+)(.*)", name)
    return (match.group(1), int(match.group(2)), match.group(3)) if match else (name, -1, "")


def _bits(text: Any) -> frozenset[int]:
    """``"3,4"`` -> {3, 4}; SONiC's comma list of priorities."""
    return frozenset(int(p) for p in str(text or "").split(",") if p.strip().isdigit())


def expand_range(key: str) -> list[int]:
    """``"3"`` -> [3]; ``"0-2"`` -> [0, 1, 2]; anything else -> []: SONiC's queue and PG keys."""
    match = re.fullmatch(r"(\d+)(?:-(\d+))?", key)
    if not match:
        return []
    low = int(match.group(1))
    return list(range(low, int(match.group(2) or low) + 1))


def qos_ports(data: Mapping[str, Any]) -> list[str]:
    """Ports with a ``PORT_QOS_MAP`` entry, in natural port order."""
    return sorted((p for p in _table(data, "PORT_QOS_MAP") if p != "global"), key=_port_order)


Queues = dict[int, Mapping[str, Any]]
"""Queue index -> its ``QUEUE`` entry on one port."""


def _queues_by_port(data: Mapping[str, Any]) -> dict[str, Queues]:
    """Port -> its queues, from one pass over ``QUEUE`` (keys may be ranges: ``Ethernet0|0-2``): a 128-port
    switch has a thousand entries, which a pass per port would read 128 times."""
    by_port: dict[str, Queues] = {}
    for key, entry in _table(data, "QUEUE").items():
        name, _, index = str(key).partition("|")
        if isinstance(entry, Mapping):
            queues = by_port.setdefault(name, {})
            for q in expand_range(index):
                queues[q] = entry
    return by_port


def _lossless_pgs_by_port(data: Mapping[str, Any]) -> dict[str, set[int]] | None:
    """Port -> its priority groups with lossless buffers, from one pass over ``BUFFER_PG``; None when the document
    has no ``BUFFER_PG`` at all (a QoS-only document, which says nothing of buffers).

    A PG is lossless where it has headroom: ``profile: NULL`` in the dynamic buffer model (buffermgrd sizes the
    headroom), or a profile with an ``xoff``, the test SONiC's own buffer_pool Lua applies
    (:attr:`~fabgen.targets.qos_common.CommonQos.no_headroom`).
    """
    table = _table(data, "BUFFER_PG")
    if not table:
        return None
    profiles = _table(data, "BUFFER_PROFILE")
    by_port: dict[str, set[int]] = {}
    for key, entry in table.items():
        name, _, index = str(key).partition("|")
        pgs = by_port.setdefault(name, set())
        profile = str(entry.get("profile", "")) if isinstance(entry, Mapping) else ""
        profile = profile.removeprefix("[BUFFER_PROFILE|").removeprefix("[BUFFER_PROFILE_TABLE:").removesuffix("]")
        body = profiles.get(profile)
        if profile == "NULL" or (isinstance(body, Mapping) and "xoff" in body):
            pgs.update(expand_range(index))
    return by_port


def parse_sonic_qos(data: Mapping[str, Any], port: str | None = None) -> CommonQos:
    """The QoS picture of ``port`` (default: the first QoS port) in a CONFIG_DB document.

    Raises ``ValueError`` when the document binds no QoS to any port.
    """
    if port is None:
        port = _first_port(data)
    pgs = _lossless_pgs_by_port(data)
    return _picture(data, port, _queues_by_port(data).get(port, {}), None if pgs is None else pgs.get(port, set()))


def parse_sonic_switch(data: Mapping[str, Any]) -> CommonQos:
    """The switch's picture: the one most of its QoS ports have (the first port's on a tie), with
    :attr:`~fabgen.targets.qos_common.CommonQos.ports` the ports that have it.

    Why every port: SONiC binds QoS port by port, so an edit on one port (its ``PORT_QOS_MAP`` entry gone,
    a queue without its WRED profile, another MTU) leaves every other port as planned, and a picture of
    the first port alone would not see it. ``lint --deployed`` compares the ports with the plan's.
    """
    _first_port(data)  # no QoS port at all: refused as parse_sonic_qos refuses it
    queues, pgs = _queues_by_port(data), _lossless_pgs_by_port(data)
    pictures = {port: _picture(data, port, queues.get(port, {}), None if pgs is None else pgs.get(port, set()))
                for port in qos_ports(data)}
    counts = Counter(pictures.values())  # in port order: max() keeps the first port's picture on a tie
    common = max(counts, key=counts.__getitem__)
    return replace(common, ports=frozenset(port for port, picture in pictures.items() if picture == common))


def _first_port(data: Mapping[str, Any]) -> str:
    ports = qos_ports(data)
    if not ports:
        raise ValueError("no port has a PORT_QOS_MAP entry: this CONFIG_DB carries no QoS")
    return ports[0]


def _picture(data: Mapping[str, Any], port: str, queues: Queues, lossless_pgs: set[int] | None) -> CommonQos:
    """The QoS picture of ``port``, its queues and lossless priority groups (None: not known) given."""
    qmap = _table(data, "PORT_QOS_MAP").get(port)
    if not isinstance(qmap, Mapping):
        raise ValueError(f"port {port!r} has no PORT_QOS_MAP entry")
    global_map = _table(data, "PORT_QOS_MAP").get("global", {})

    dscp_name = qmap.get("dscp_to_tc_map") or (global_map.get("dscp_to_tc_map") if isinstance(global_map, Mapping) else None)
    dscp_map = _table(data, "DSCP_TO_TC_MAP").get(dscp_name or "", {})
    # An unmapped DSCP goes to traffic class 0 in SONiC.
    dscp_to_tc = tuple(int(dscp_map.get(str(d), 0)) for d in range(64))
    queue_map = _table(data, "TC_TO_QUEUE_MAP").get(qmap.get("tc_to_queue_map") or "", {})
    # Without an entry, a traffic class leaves by the queue of its number (the SAI default).
    queues_of = queue_map if isinstance(queue_map, Mapping) else {}
    tc_to_queue = used_queues(dscp_to_tc, lambda tc: int(queues_of.get(str(tc), tc)))

    lossless = _bits(qmap.get("pfc_enable"))
    # Without the field, orchagent watches the PFC priorities themselves.
    watched = _bits(qmap["pfcwd_sw_enable"]) if "pfcwd_sw_enable" in qmap else lossless
    no_headroom: frozenset[int] = frozenset()
    if lossless_pgs is not None:
        pg_map = _table(data, "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP").get(qmap.get("pfc_to_pg_map") or "", {})
        pg_of = pg_map if isinstance(pg_map, Mapping) else {}
        # Without an entry, a priority's PG is the one of its number.
        no_headroom = frozenset(p for p in lossless if int(pg_of.get(str(p), p)) not in lossless_pgs)

    schedulers = _table(data, "SCHEDULER")
    wred_profiles = _table(data, "WRED_PROFILE")
    ecn: list[tuple[int, int, int, int]] = []
    strict: set[int] = set()
    weights: list[tuple[int, int]] = []
    for queue, entry in sorted(queues.items()):
        scheduler = schedulers.get(entry.get("scheduler", ""))
        if isinstance(scheduler, Mapping):
            kind = scheduler.get("type", "WRR")
            if kind == "STRICT":
                strict.add(queue)
            else:
                weights.append((queue, int(scheduler.get("weight", 1))))
        wred = wred_profiles.get(entry.get("wred_profile", ""))
        if (isinstance(wred, Mapping) and wred.get("ecn", "ecn_none") != "ecn_none"
                and wred.get("wred_green_enable") == "true"):
            ecn.append((queue, int(wred["green_min_threshold"]), int(wred["green_max_threshold"]),
                        int(wred.get("green_drop_probability", WRED_DEFAULT_PROBABILITY))))

    wd_entry = _table(data, "PFC_WD").get(port)
    if isinstance(wd_entry, Mapping):
        watchdog = (bool(watched), int(wd_entry.get("detection_time", 0)),
                    int(wd_entry.get("restoration_time", 0)), str(wd_entry.get("action", "")))
    else:
        watchdog = (False, 0, 0, "")

    port_entry = _table(data, "PORT").get(port, {})
    mtu = int(port_entry.get("mtu", SONIC_DEFAULT_MTU)) if isinstance(port_entry, Mapping) else SONIC_DEFAULT_MTU
    return CommonQos(
        dscp_to_tc=dscp_to_tc,
        lossless=lossless,
        ecn=tuple(ecn),
        strict=frozenset(strict),
        weights=tuple(weights),
        watchdog=watchdog,
        mtu=mtu,
        tc_to_queue=tc_to_queue,
        trust="dscp" if dscp_name else "none",
        no_headroom=no_headroom,  # SONiC classifies by DSCP where a DSCP map is bound, else not
    )
