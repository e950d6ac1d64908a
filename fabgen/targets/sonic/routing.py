"""SONiC CONFIG_DB tables for the eBGP underlay, the neighbours, management and ECMP hashing.

Kept apart from ``config_db.py`` (ports, QoS, buffers) so each can change alone;
``config_db`` merges :func:`routing_tables` into its tables with
:func:`merge_tables`, field by field (this module adds ``bgp_asn`` to
``DEVICE_METADATA|localhost`` and ``admin_status: down`` to a shut ``PORT``).

**Which BGP tables, and why.** SONiC has two ways to turn CONFIG_DB into FRR's
configuration (sonic-buildimage ``dockers/docker-fpm-frr``):

* bgpcfgd with its templates (the default): ``router bgp`` from
  ``DEVICE_METADATA.bgp_asn``, one session per ``BGP_NEIGHBOR|ADDR``
  (``templates/general/instance.conf.j2``: remote-as, description, timers,
  ``activate``), router-id from ``Loopback0``. But ``bgpd.main.conf.j2``
  announces only ``Loopback0`` and ``VLAN_INTERFACE`` subnets, and takes
  ``maximum-paths`` (514) and multipath relax (on) from the image's
  ``/etc/sonic/constants.yml``, not from CONFIG_DB. A leaf's host /31s are on
  routed ports, not VLANs, so under the templates they are never announced and
  the fabric cannot reach a single host.
* frrcfgd (``DEVICE_METADATA.frr_mgmt_framework_config: "true"``), which maps
  the ``sonic-bgp-global`` / ``sonic-bgp-neighbor`` tables to FRR commands one
  field at a time (``src/sonic-frr-mgmt-framework/frrcfgd/frrcfgd.py``):
  ``BGP_GLOBALS|default`` (``local_asn``, ``router_id``,
  ``load_balance_mp_relax`` -> ``bgp bestpath as-path multipath-relax``,
  ``keepalive``/``holdtime`` -> ``timers bgp``), ``BGP_GLOBALS_AF|default|ipv4_unicast``
  (``max_ebgp_paths`` -> ``maximum-paths``), ``BGP_GLOBALS_AF_NETWORK`` (one
  ``network`` per prefix), ``BGP_NEIGHBOR|default|ADDR`` (``asn`` -> remote-as,
  ``name`` -> description, ``local_addr`` -> update-source, ``admin_status``,
  ``bfd``, timers) and ``BGP_NEIGHBOR_AF|default|ADDR|ipv4_unicast``
  (``admin_status: up`` -> ``activate``).

fabgen writes the frrcfgd tables: they carry the whole plan (what is announced,
the ECMP width, relax, timers, BFD), where the templates would drop the host
subnets. ``DEVICE_METADATA.bgp_asn`` is written too (``show`` commands and
other SONiC services read it). BFD timers have no table in the models fabgen
validates against, so a BFD interval other than FRR's default (300 ms x 3) is
refused at validation (``limits.py``), never dropped.

**ECMP hashing.** ``SWITCH_HASH|GLOBAL.ecmp_hash`` (``sonic-hash.yang``) lists
the 5-tuple: RoCE NICs give each queue pair its own UDP source port, so
``L4_SRC_PORT`` is what spreads one host pair's QPs over the uplinks. SONiC has
no DLB or per-packet spray in CONFIG_DB; ``limits.py`` refuses both.

**Management.** ``MGMT_PORT|eth0`` always, when the plan gives the switch a
management address; ``MGMT_INTERFACE|eth0|ADDR`` only with
``fabric.addressing.mgmt_gateway``, because the model's ``must`` requires a
``gwaddr`` of the address's family, and fabgen does not guess one.
"""

from __future__ import annotations

from typing import Any

from fabgen.plan import FabricPlan, Switch

VRF = "default"
AFI = "ipv4_unicast"
MGMT_PORT = "eth0"
ROUTING_TABLES: frozenset[str] = frozenset({
    "LOOPBACK_INTERFACE", "DEVICE_NEIGHBOR", "SWITCH_HASH", "MGMT_PORT", "MGMT_INTERFACE", "BGP_GLOBALS",
    "BGP_GLOBALS_AF", "BGP_GLOBALS_AF_NETWORK", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF",
})
"""The tables this module writes (and ``config_db`` does not): kept out of the live QoS patch (``patch.py``)."""
ECMP_HASH_FIELDS = ("SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT")
"""The 5-tuple, in sonic-hash.yang's names; L4_SRC_PORT carries RoCE's per-QP entropy."""


def routing_tables(plan: FabricPlan, switch: Switch) -> dict[str, Any]:
    """The routing-related tables of one switch, to merge into its CONFIG_DB with :func:`merge_tables`."""
    loopback = switch.loopback
    tables: dict[str, Any] = {
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{loopback}": {}},
        "DEVICE_NEIGHBOR": {
            p.name: {"name": p.peer_device, "port": p.peer_port}
            for p in switch.ports
        },
        "SWITCH_HASH": {"GLOBAL": {"ecmp_hash": list(ECMP_HASH_FIELDS)}},
    }
    shut = {p.name: {"admin_status": "down"} for p in switch.ports if p.shutdown}
    if shut:
        tables["PORT"] = shut
    if switch.mgmt:
        tables["MGMT_PORT"] = {MGMT_PORT: {"admin_status": "up", "alias": MGMT_PORT}}
        gateway = plan.spec.fabric.addressing.mgmt_gateway
        if gateway is not None:  # sonic-mgmt_interface.yang: an IPv4 prefix needs an IPv4 gwaddr
            tables["MGMT_INTERFACE"] = {f"{MGMT_PORT}|{switch.mgmt}": {"gwaddr": str(gateway)}}
    bgp = switch.bgp
    if bgp is None:
        return tables
    tables["DEVICE_METADATA"] = {"localhost": {
        "bgp_asn": str(bgp.asn),
        "bgp_router_id": bgp.router_id,
        "docker_routing_config_mode": "unified",
        "frr_mgmt_framework_config": "true",
    }}
    glob: dict[str, str] = {"local_asn": str(bgp.asn), "router_id": bgp.router_id,
                            "load_balance_mp_relax": "true" if bgp.multipath_relax else "false"}
    if bgp.keepalive is not None and bgp.hold is not None:
        glob |= {"keepalive": str(bgp.keepalive), "holdtime": str(bgp.hold)}
    tables["BGP_GLOBALS"] = {VRF: glob}
    tables["BGP_GLOBALS_AF"] = {f"{VRF}|{AFI}": {"max_ebgp_paths": str(bgp.maximum_paths)}}
    tables["BGP_GLOBALS_AF_NETWORK"] = {f"{VRF}|{AFI}|{prefix}": {} for prefix in bgp.networks}
    local = {p.name: p.address.partition("/")[0] for p in switch.ports}
    neighbors: dict[str, Any] = {}
    families: dict[str, Any] = {}
    for n in bgp.neighbors:
        entry = {"asn": str(n.remote_asn), "name": n.peer_device, "local_addr": local[n.port],
                 "admin_status": "up"}
        if bgp.keepalive is not None and bgp.hold is not None:
            entry |= {"keepalive": str(bgp.keepalive), "holdtime": str(bgp.hold)}
        if bgp.bfd is not None:
            entry["bfd"] = "true"
        neighbors[f"{VRF}|{n.address}"] = entry
        families[f"{VRF}|{n.address}|{AFI}"] = {"admin_status": "up"}
    tables["BGP_NEIGHBOR"] = neighbors
    tables["BGP_NEIGHBOR_AF"] = families
    return tables


def merge_tables(tables: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``tables`` with ``extra`` merged in, table by table, entry by entry, field by field (new dicts)."""
    merged = dict(tables)
    for name, entries in extra.items():
        table = {key: dict(fields) for key, fields in merged.get(name, {}).items()}
        for key, fields in entries.items():
            table[key] = {**table.get(key, {}), **fields}
        merged[name] = table
    return merged
