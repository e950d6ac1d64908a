"""``switches/NAME/config_db.json``: a SONiC switch's ports, addresses and RoCE QoS as CONFIG_DB.

Why a Python dict rather than a template: CONFIG_DB is JSON whose keys encode
structure (``"Ethernet0|3"``), and the YANG models check every value; building
the dict and serialising it with sorted keys gives valid, deterministic JSON
without a template having to get commas and quoting right.

What is written, and why each choice (switch.md §2):

* ``DEVICE_METADATA``: ``hwsku`` and ``platform`` of a SKU fabgen knows
  (:mod:`fabgen.targets.sonic.sku`; swss and syncd mount
  ``/usr/share/sonic/device/<platform>/<hwsku>``), ``buffer_model`` as the spec
  selects (default ``dynamic``, as NVIDIA builds its images);
  ``default_pfcwd_status`` ``disable`` because ``enable`` makes
  ``pfcwd start_default`` overwrite the per-port PFC_WD entries below with its
  200 ms x m defaults.
* ``PORT``: name, lanes, alias, index (the cage) and ``autoneg`` from the SKU's
  ``port_config.ini``/``hwsku.json`` (the O128 SKU's 2x400G breakout:
  ``Ethernet0`` ``etp1a``, ``Ethernet4`` ``etp1b``); speed, MTU, FEC from the plan.
* One set of QoS maps named ``ROCE``, bound per port in ``PORT_QOS_MAP``. A lossless
  priority p lands in PG p; every lossy traffic class in the lowest other PG.
* A WRED profile per ECN class (ECN marking, ``ecn_all``; all three colours the
  same), a scheduler per class (DWRR weight or STRICT), bound per queue in ``QUEUE``.
* Buffers (:mod:`fabgen.targets.sonic.buffers`): the SKU's pools and the
  profiles, profile lists and queue profiles of Mellanox's
  ``buffers_defaults_objects.j2``; ``CABLE_LENGTH`` per port from the port's
  own cable. Dynamic model: lossless PGs with profile ``NULL`` (buffermgrd
  computes their headroom), ``LOSSLESS_TRAFFIC_PATTERN`` and
  ``DEFAULT_LOSSLESS_BUFFER_PARAMETER``, no ingress pool sizes (buffermgrd
  computes them too unless the spec sets one). Traditional model: the SKU's
  ``pg_profile_lookup.ini`` profile under buffermgrd's own name
  (``pg_lossless_400000_40m_profile``), which it finds and reuses.
* ``PFC_WD``: per port and ``GLOBAL`` ``POLL_INTERVAL`` when the watchdog is on.
  When it is off there are no PFC_WD entries (what ``pfcwd stop`` leaves) and
  ``pfcwd_sw_enable`` is empty: orchagent arms the watchdog only on the
  priorities in that field.
* ``INTERFACE``: the /31 of every port. ``LOOPBACK_INTERFACE`` is **not** written.

What SONiC cannot take is refused at validation by :func:`fabgen.targets.sonic.limits.plan_limits`
(the target's ``limits``). Validation inside generation (:data:`TARGET`'s
validator): the fabgen-side checks of :func:`check_config_db` always (they need
no libyang); full YANG validation with
:func:`fabgen.targets.sonic.yang.validate_config_db` when the environment
variable ``FABGEN_SONIC_YANG_DIR`` names a directory of SONiC YANG models.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from fabgen.errors import Problem
from fabgen.plan.model import ClassIntent, FabricPlan, QosIntent, Switch
from fabgen.targets.base import ReadBack, RenderContext, Target
from fabgen.targets.sonic.buffers import SwitchBuffers, switch_buffers
from fabgen.targets.sonic.limits import plan_limits
from fabgen.targets.sonic.parse import expand_range, parse_sonic_switch
from fabgen.targets.sonic.parse_routing import parse_sonic_routing
from fabgen.targets.sonic.routing import merge_tables, routing_tables
from fabgen.targets.sonic.routing_limits import ECMP
from fabgen.targets.sonic.sku import SKUS

__all__ = [
    "CABLE_LENGTH_NAME",
    "MAP_NAME",
    "TARGET",
    "YANG_DIR_ENV",
    "check_config_db",
    "config_db",
    "config_db_text",
    "validate_config_db_text",
]

MAP_NAME = "ROCE"
"""Name of every QoS map fabgen writes (one policy per switch)."""
CABLE_LENGTH_NAME = "AZURE"
"""The key SONiC's own templates and ``config interface cable-length`` use for CABLE_LENGTH and friends."""
YANG_DIR_ENV = "FABGEN_SONIC_YANG_DIR"
"""Environment variable: a directory of SONiC YANG models; set it to validate with libyang."""

INGRESS_LOSSLESS_POOL = "ingress_lossless_pool"
INGRESS_LOSSY_POOL = "ingress_lossy_pool"
EGRESS_LOSSLESS_POOL = "egress_lossless_pool"
EGRESS_LOSSY_POOL = "egress_lossy_pool"
INGRESS_LOSSLESS_PROFILE = "ingress_lossless_profile"
INGRESS_LOSSY_PROFILE = "ingress_lossy_profile"
EGRESS_LOSSLESS_PROFILE = "egress_lossless_profile"
EGRESS_LOSSY_PROFILE = "egress_lossy_profile"
QUEUE_LOSSY_PROFILE = "q_lossy_profile"
DYNAMIC_PG = "NULL"
"""BUFFER_PG profile of a lossless PG whose headroom buffermgrd computes (buffermgrdyn.cpp: pure dynamic)."""
QUEUES = 8

_PROFILES: dict[str, dict[str, str]] = {
    INGRESS_LOSSLESS_PROFILE: {"pool": INGRESS_LOSSLESS_POOL, "size": "0", "dynamic_th": "7"},
    INGRESS_LOSSY_PROFILE: {"pool": INGRESS_LOSSY_POOL, "size": "0", "dynamic_th": "3"},
    EGRESS_LOSSLESS_PROFILE: {"pool": EGRESS_LOSSLESS_POOL, "size": "0", "dynamic_th": "7"},
    EGRESS_LOSSY_PROFILE: {"pool": EGRESS_LOSSY_POOL, "size": "9216", "dynamic_th": "7"},
    QUEUE_LOSSY_PROFILE: {"pool": EGRESS_LOSSY_POOL, "size": "0", "dynamic_th": "3"},
}
"""Mellanox's ``buffers_defaults_objects.j2`` profiles, word for word (a test renders the template)."""
INGRESS_PROFILE_LIST = f"{INGRESS_LOSSLESS_PROFILE},{INGRESS_LOSSY_PROFILE}"
EGRESS_PROFILE_LIST = f"{EGRESS_LOSSLESS_PROFILE},{EGRESS_LOSSY_PROFILE}"

_DEVICE_TYPE = {"leaf": "BackEndToRRouter", "spine": "BackEndLeafRouter", "super_spine": "BackEndSpineRouter"}
"""SONiC's names for the three tiers of a GPU back-end fabric (sonic-device_metadata ``type``)."""


# ----------------------------------------------------------------------------- building


def config_db(plan: FabricPlan, switch: Switch) -> dict[str, Any]:
    """The CONFIG_DB of one SONiC switch as a dict of tables; every value a string."""
    qos = switch.qos
    buffers = switch_buffers(plan, switch)
    ports = [p.name for p in switch.ports]
    lossless = tuple(qos.lossless_priorities)
    tables: dict[str, Any] = {
        "DEVICE_METADATA": _device_metadata(switch, buffers),
        "PORT": _ports(switch),
        "INTERFACE": _interfaces(switch),
        **_maps(qos),
        "PORT_QOS_MAP": _port_qos_map(qos, ports),
        **_scheduling(qos, ports),
        **_buffers(plan, switch, buffers, ports),
    }
    if qos.watchdog.enabled and lossless:
        tables["PFC_WD"] = _pfc_wd(qos, ports)
        tables["FLEX_COUNTER_TABLE"] = {"PFCWD": {"FLEX_COUNTER_STATUS": "enable"}}
    tables = merge_tables(tables, routing_tables(plan, switch))  # BGP, neighbours, mgmt, hash: routing.py
    return {name: table for name, table in tables.items() if table}


def config_db_text(plan: FabricPlan, switch: Switch) -> str:
    """``config_db.json`` text: 4-space indent, sorted keys, final newline (byte-stable)."""
    return json.dumps(config_db(plan, switch), indent=4, sort_keys=True) + "\n"


def _device_metadata(switch: Switch, buffers: SwitchBuffers) -> dict[str, Any]:
    entry = {
        "hostname": switch.name,
        "hwsku": buffers.sku.name,
        "platform": buffers.sku.platform,
        "type": _DEVICE_TYPE[switch.tier],
        "buffer_model": buffers.model,
        "default_pfcwd_status": "disable",
    }
    if buffers.sku.create_only_config_db_buffers:  # what the SKU's first boot merges in
        entry["create_only_config_db_buffers"] = "true"
    return {"localhost": entry}


def _ports(switch: Switch) -> dict[str, Any]:
    sku = SKUS[switch.hwsku or ""]
    table: dict[str, Any] = {}
    for p in switch.ports:
        row = sku.port(p.name)
        assert row is not None
        entry = {
            "admin_status": "up",
            "alias": row.alias,
            "description": p.description,
            # RS-FEC is mandatory on PAM4 lanes (50G and up) and the norm at 25G.
            "fec": "rs" if p.speed >= 25 else "none",
            "index": str(row.index),
            "lanes": ",".join(str(lane) for lane in row.lanes),
            "mtu": str(switch.qos.mtu),
            "speed": str(p.speed * 1000),
        }
        if row.autoneg is not None:
            entry["autoneg"] = row.autoneg
        table[p.name] = entry
    return table


def _interfaces(switch: Switch) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for p in switch.ports:
        if p.address:
            table[p.name] = {}
            table[f"{p.name}|{p.address}"] = {}
    return table


def _lossy_pg(qos: QosIntent) -> int:
    return min(set(range(8)) - set(qos.lossless_priorities))


def _maps(qos: QosIntent) -> dict[str, Any]:
    lossless = set(qos.lossless_priorities)
    lossy_pg = _lossy_pg(qos)
    tables: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {MAP_NAME: {str(d): str(tc) for d, tc in enumerate(qos.dscp_to_priority)}},
        "TC_TO_QUEUE_MAP": {MAP_NAME: {str(tc): str(q) for tc, q in enumerate(qos.priority_to_queue)}},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP_NAME: {str(tc): str(tc if tc in lossless else lossy_pg) for tc in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP_NAME: {str(p): str(q) for p, q in enumerate(qos.priority_to_queue)}},
    }
    if lossless:
        tables["PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"] = {MAP_NAME: {str(p): str(p) for p in sorted(lossless)}}
    return tables


def _port_qos_map(qos: QosIntent, ports: list[str]) -> dict[str, Any]:
    pfc = ",".join(str(p) for p in qos.lossless_priorities)
    entry = {
        "dscp_to_tc_map": MAP_NAME,
        "tc_to_queue_map": MAP_NAME,
        "tc_to_pg_map": MAP_NAME,
        "pfc_to_queue_map": MAP_NAME,
        "pfc_enable": pfc,
        "pfcwd_sw_enable": pfc if qos.watchdog.enabled else "",
    }
    if qos.lossless_priorities:
        entry["pfc_to_pg_map"] = MAP_NAME
    table: dict[str, Any] = {"global": {"dscp_to_tc_map": MAP_NAME}}
    table.update({p: dict(entry) for p in ports})
    return table


def _queue_classes(qos: QosIntent) -> dict[int, ClassIntent]:
    """Egress queue -> the class that owns it (the first, in priority order, if two share one)."""
    owners: dict[int, ClassIntent] = {}
    for c in qos.classes:
        owners.setdefault(c.queue, c)
    return owners


def _scheduling(qos: QosIntent, ports: list[str]) -> dict[str, Any]:
    owners = _queue_classes(qos)
    wred: dict[str, Any] = {}
    schedulers: dict[str, Any] = {}
    queue_entry: dict[int, dict[str, str]] = {}
    for queue, c in sorted(owners.items()):
        schedulers[c.name] = {"type": "STRICT"} if c.strict else {"type": "DWRR", "weight": str(c.weight)}
        queue_entry[queue] = {"scheduler": c.name}
        if c.ecn_min is not None:
            profile: dict[str, str] = {"ecn": "ecn_all"}
            for colour in ("green", "yellow", "red"):
                profile[f"wred_{colour}_enable"] = "true"
                profile[f"{colour}_min_threshold"] = str(c.ecn_min)
                profile[f"{colour}_max_threshold"] = str(c.ecn_max)
                profile[f"{colour}_drop_probability"] = str(c.ecn_probability)
            wred[c.name] = profile
            queue_entry[queue]["wred_profile"] = c.name
    queues = {f"{p}|{q}": dict(entry) for p in ports for q, entry in queue_entry.items()}
    return {"WRED_PROFILE": wred, "SCHEDULER": schedulers, "QUEUE": queues}


def _ranges(indexes: Iterable[int]) -> list[str]:
    """``[0, 1, 2, 4, 5]`` -> ``["0-2", "4-5"]``: SONiC's key form for runs of queues/PGs."""
    runs: list[list[int]] = []
    for i in sorted(indexes):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return [str(a) if a == b else f"{a}-{b}" for a, b in runs]


def _buffers(plan: FabricPlan, switch: Switch, buffers: SwitchBuffers, ports: list[str]) -> dict[str, Any]:
    qos = switch.qos
    dynamic = buffers.model == "dynamic"
    pools, c = buffers.pools, buffers.constants
    tier = getattr(plan.spec.fabric.tiers, switch.tier)
    written = tier.buffers.model_fields_set if tier is not None and tier.buffers is not None else set()

    def pool(kind: str, size: int, field: str, always: bool = False) -> dict[str, str]:
        entry = {"type": kind, "mode": "dynamic"}
        if always or not dynamic or field in written:  # dynamic: buffermgrd sizes what the spec leaves open
            entry["size"] = str(size)
        return entry

    ingress_lossless = pool("ingress", pools.ingress_lossless, "ingress_lossless_pool")
    if c.shared_headroom_pool:
        ingress_lossless["xoff"] = str(c.shared_headroom_pool)
    tables: dict[str, Any] = {
        "BUFFER_POOL": {
            INGRESS_LOSSLESS_POOL: ingress_lossless,
            INGRESS_LOSSY_POOL: pool("ingress", pools.ingress_lossy, "ingress_lossy_pool"),
            EGRESS_LOSSLESS_POOL: pool("egress", pools.egress_lossless, "egress_lossless_pool", always=True),
            EGRESS_LOSSY_POOL: pool("egress", pools.egress_lossy, "egress_lossy_pool"),
        },
        "BUFFER_PROFILE": {name: dict(profile) for name, profile in _PROFILES.items()},
        "BUFFER_PORT_INGRESS_PROFILE_LIST": {p: {"profile_list": INGRESS_PROFILE_LIST} for p in ports},
        "BUFFER_PORT_EGRESS_PROFILE_LIST": {p: {"profile_list": EGRESS_PROFILE_LIST} for p in ports},
        "CABLE_LENGTH": {CABLE_LENGTH_NAME: {p: f"{m}m" for p, m in buffers.cable}},
    }
    lossless = qos.lossless_priorities
    pgs: dict[str, Any] = {f"{p}|{_lossy_pg(qos)}": {"profile": INGRESS_LOSSY_PROFILE} for p in ports}
    if lossless:
        for profile in buffers.profiles:
            tables["BUFFER_PROFILE"][profile.name] = {
                "pool": INGRESS_LOSSLESS_POOL,
                "size": str(profile.headroom.size),
                "xoff": str(profile.headroom.xoff),
                "xon": str(profile.headroom.xon),
                "dynamic_th": str(profile.dynamic_th),
            }
        by_port = dict(buffers.port_profile)
        for port in ports:
            for run in _ranges(lossless):
                pgs[f"{port}|{run}"] = {"profile": DYNAMIC_PG if dynamic else by_port[port]}
    tables["BUFFER_PG"] = pgs
    lossless_queues = {qos.priority_to_queue[p] for p in lossless}
    queues: dict[str, Any] = {}
    for port in ports:
        for run in _ranges(lossless_queues):
            queues[f"{port}|{run}"] = {"profile": EGRESS_LOSSLESS_PROFILE}
        for run in _ranges(set(range(QUEUES)) - lossless_queues):
            queues[f"{port}|{run}"] = {"profile": QUEUE_LOSSY_PROFILE}
    tables["BUFFER_QUEUE"] = queues
    if dynamic:
        tables["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] = {
            CABLE_LENGTH_NAME: {"default_dynamic_th": str(c.lossless_dynamic_th)}}
        tables["LOSSLESS_TRAFFIC_PATTERN"] = {CABLE_LENGTH_NAME: {
            "mtu": str(c.lossless_mtu), "small_packet_percentage": str(c.small_packet_percentage)}}
    return tables


def _pfc_wd(qos: QosIntent, ports: list[str]) -> dict[str, Any]:
    wd = qos.watchdog
    entry = {
        "action": wd.action,
        "detection_time": str(wd.detect_ms),
        "restoration_time": str(wd.restore_ms),
        "pfc_stat_history": "disable",
    }
    table: dict[str, Any] = {"GLOBAL": {"POLL_INTERVAL": str(wd.poll_ms)}}
    table.update({p: dict(entry) for p in ports})
    return table


# ----------------------------------------------------------------------------- checking


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _per_port(table: Mapping[str, Any]) -> dict[str, dict[int, Any]]:
    """``{"Ethernet0|0-2": v}`` -> ``{"Ethernet0": {0: v, 1: v, 2: v}}``."""
    result: dict[str, dict[int, Any]] = {}
    for key, value in table.items():
        if not isinstance(value, Mapping):
            continue
        port, _, index = str(key).partition("|")
        for i in expand_range(index):
            result.setdefault(port, {})[i] = value
    return result


def check_config_db(data: Mapping[str, Any], file: str = "config_db.json") -> list[Problem]:
    """What the YANG models cannot see: whether PFC, PGs, queues and buffers agree.

    Needs no libyang, so it runs on every generation. The models check each value
    and reference; these checks relate tables: every PFC priority has a lossless PG
    with headroom and a lossless egress queue, the watchdog only watches PFC
    priorities, every DSCP is mapped, and the reserved headroom fits the pool.
    """
    problems: list[Problem] = []

    def report(message: str, path: str) -> None:
        problems.append(Problem(message, file=file, path=path))

    def table(name: str) -> Mapping[str, Any]:
        value = data.get(name, {})
        return value if isinstance(value, Mapping) else {}

    port_names = set(table("PORT"))
    metadata = table("DEVICE_METADATA").get("localhost", {})
    dynamic = isinstance(metadata, Mapping) and metadata.get("buffer_model") == "dynamic"
    profiles = table("BUFFER_PROFILE")
    pgs = _per_port(table("BUFFER_PG"))
    buffer_queues = _per_port(table("BUFFER_QUEUE"))
    for name, content in table("DSCP_TO_TC_MAP").items():
        missing = [d for d in range(64) if str(d) not in content]
        if missing:
            report(f"DSCP_TO_TC_MAP|{name} leaves DSCP {_ranges(missing)} unmapped (they fall to TC 0)",
                   f".DSCP_TO_TC_MAP[{json.dumps(name)}]")
    for port, qmap in table("PORT_QOS_MAP").items():
        if port == "global" or not isinstance(qmap, Mapping):
            continue
        where = f".PORT_QOS_MAP[{json.dumps(port)}]"
        if port not in port_names:
            report(f"PORT_QOS_MAP|{port}: no such port in PORT", where)
            continue
        pfc = {int(p) for p in str(qmap.get("pfc_enable", "")).split(",") if p.isdigit()}
        watched = {int(p) for p in str(qmap.get("pfcwd_sw_enable", "")).split(",") if p.isdigit()}
        if watched - pfc:
            report(f"PORT_QOS_MAP|{port}: watchdog on priorities {sorted(watched - pfc)} that PFC does not pause",
                   where)
        tc_pg = table("TC_TO_PRIORITY_GROUP_MAP").get(qmap.get("tc_to_pg_map", ""), {})
        pfc_pg = table("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP").get(qmap.get("pfc_to_pg_map", ""), {})
        pfc_queue = table("MAP_PFC_PRIORITY_TO_QUEUE").get(qmap.get("pfc_to_queue_map", ""), {})
        for p in sorted(pfc):
            pg = _int(pfc_pg.get(str(p)))
            if pg is None:
                report(f"PORT_QOS_MAP|{port}: PFC priority {p} has no priority group (pfc_to_pg_map)", where)
                continue
            if _int(tc_pg.get(str(p))) != pg:
                report(f"PORT_QOS_MAP|{port}: traffic class {p} lands in PG {tc_pg.get(str(p))}, "
                       f"but PFC priority {p} pauses PG {pg}", where)
            pg_entry = pgs.get(port, {}).get(pg)
            named = pg_entry.get("profile", "") if isinstance(pg_entry, Mapping) else ""
            if dynamic and named == DYNAMIC_PG:
                pass  # buffermgrd computes this PG's headroom
            elif "xoff" not in profiles.get(named, {}):
                needs = "profile NULL (dynamic headroom) or " if dynamic else ""
                report(f"BUFFER_PG|{port}|{pg}: PFC priority {p} needs {needs}a lossless profile with xoff headroom",
                       f".BUFFER_PG[{json.dumps(f'{port}|{pg}')}]")
            queue = _int(pfc_queue.get(str(p)))
            qprofile = buffer_queues.get(port, {}).get(queue, {}).get("profile") if queue is not None else None
            if qprofile is not None and profiles.get(qprofile, {}).get("pool") != EGRESS_LOSSLESS_POOL:
                report(f"BUFFER_QUEUE|{port}|{queue}: lossless queue of PFC priority {p} uses {qprofile}, "
                       f"not a profile of {EGRESS_LOSSLESS_POOL}", f".BUFFER_QUEUE[{json.dumps(port)}]")
    _check_headroom_fits(table("BUFFER_POOL"), profiles, pgs, report)
    return problems


def _check_headroom_fits(pools: Mapping[str, Any], profiles: Mapping[str, Any], pgs: dict[str, dict[int, Any]],
                         report: Callable[[str, str], None]) -> None:
    """Headroom reserved by every lossless PG must leave room in its ingress pool."""
    reserved: dict[str, int] = {}
    for by_pg in pgs.values():
        for entry in by_pg.values():
            profile = profiles.get(entry.get("profile", ""), {})
            if "xoff" in profile and str(profile.get("size", "")).isdigit():
                pool = profile.get("pool", "")
                reserved[pool] = reserved.get(pool, 0) + int(profile["size"])
    for pool, total in sorted(reserved.items()):
        size = str(pools.get(pool, {}).get("size", ""))
        if size.isdigit() and total >= int(size):
            report(f"lossless PGs reserve {total} bytes of headroom, more than BUFFER_POOL|{pool} holds "
                   f"({size} bytes); set the pool size for this SKU (fabric.tiers.*.buffers)",
                   f".BUFFER_POOL[{json.dumps(pool)}]")


def validate_config_db_text(path: str, text: str) -> list[Problem]:
    """The target's validator: fabgen's checks, then libyang if ``FABGEN_SONIC_YANG_DIR`` is set."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return [Problem(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno, col=exc.colno)]
    problems = check_config_db(data, path)
    yang_dir = os.environ.get(YANG_DIR_ENV, "").strip()
    if yang_dir:
        from fabgen.targets.sonic.yang import validate_config_db

        problems.extend(validate_config_db(data, Path(yang_dir), file=path))
    return problems


# ----------------------------------------------------------------------------- target


def _render(context: RenderContext, switch: Switch) -> dict[str, str]:
    return {f"switches/{switch.name}/config_db.json": config_db_text(context.plan, switch)}


TARGET = Target(
    name="sonic",
    scope="switch",
    summary="SONiC CONFIG_DB (config_db.json): SKU ports, addresses, RoCE QoS, buffers, PFC watchdog",
    render=_render,
    applies=lambda switch: switch.os == "sonic",
    check=validate_config_db_text,
    limits=plan_limits,
    layout_limits=ECMP.layout_problems,
    read_back=ReadBack("sonic", "switches/{name}/config_db.json", parse_sonic_switch, "json", parse_sonic_routing),
)
