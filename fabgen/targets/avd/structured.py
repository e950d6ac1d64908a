"""Arista AVD structured config: fabgen's part of an EOS switch, for an AVD pipeline to merge.

An AVD user does not want a second EOS config beside the one AVD renders; they
want fabgen's QoS, PFC, load balancing, interfaces and BGP underlay as AVD data
(the ``eos_cli_config_gen`` schema) that their own structured config absorbs.
This module turns the same :class:`~fabgen.targets.eos.config.EosConfig` the
``eos`` target prints into that data, so the two can never disagree: the tests
feed it to pyavd (``validate_structured_config`` reports no violation, and
``get_device_config`` renders exactly the lines of fabgen's ``.cfg`` for every
section fabgen owns).

What AVD's schema does not model is carried in its own escape hatch, never
dropped: ``bgp bestpath as-path multipath-relax`` is a ``router_bgp.bgp_defaults``
line. fabgen's ``! note`` comments (why a value differs from the policy) have no
AVD key and are left out; the ``.cfg`` keeps them.
"""

from __future__ import annotations

from typing import Any

from fabgen.targets.eos.model import EosConfig, QosProfile, RouterBgp, TxQueue


def structured_config(eos: EosConfig) -> dict[str, Any]:
    """The AVD structured config of one switch; keys in AVD's documented spelling, values final."""
    config: dict[str, Any] = {
        "hostname": eos.hostname,
        "ip_routing": True,
        "qos": {"map": {
            "dscp": [f"{' '.join(map(str, m.dscps))} to traffic-class {m.traffic_class}" for m in eos.dscp_maps],
            "traffic_class": [f"{m.traffic_class} to tx-queue {m.tx_queue}" for m in eos.tx_queue_maps],
        }},
        "qos_profiles": [_qos_profile(p) for p in eos.qos_profiles],
        "priority_flow_control": {"watchdog": _watchdog_defaults(eos)},
        "ethernet_interfaces": [
            {"name": i.name, **({"description": i.description} if i.description else {}),
             "shutdown": i.shutdown, "mtu": i.mtu, "speed": i.speed, "switchport": {"enabled": False},
             "ip_address": i.address, "service_profile": i.service_profile}
            for i in eos.ethernet_interfaces
        ],
        "loopback_interfaces": [{"name": eos.loopback.name, "ip_address": eos.loopback.address}],
    }
    if eos.management:
        config["management_interfaces"] = [{"name": eos.management.name, "ip_address": eos.management.address}]
    sand = eos.load_balance.sand_profile
    if sand:
        config["load_balance"] = {"policies": {"sand_profiles": [
            {"name": sand.name, "fields": {"udp": {"dst_port": sand.udp_dst_port, "payload_bytes": sand.payload_bytes}}},
        ]}}
    if eos.load_balance.dynamic:
        config["ip_hardware"] = {"fib": {"load_balance_distribution": {"dynamic": {"enabled": True}}}}
    if eos.router_bgp:
        config["router_bgp"] = _router_bgp(eos.router_bgp)
    if eos.mmu:
        config["platform"] = {"trident": {"mmu": {"active_profile": eos.mmu.name, "queue_profiles": [
            {"name": eos.mmu.name, "ingress": {"headroom": {"unit": "bytes", "memory": eos.mmu.headroom_bytes}}},
        ]}}}
    return config


def _watchdog_defaults(eos: EosConfig) -> dict[str, Any]:
    wd = eos.watchdog_defaults
    out: dict[str, Any] = {"timeout": wd.timeout, "recovery_time": wd.recovery_time,
                           "polling_interval": wd.polling_interval}
    if wd.action:
        out["action"] = wd.action
    return out


def _qos_profile(profile: QosProfile) -> dict[str, Any]:
    pfc: dict[str, Any] = {"enabled": profile.pfc_enabled}
    if profile.pfc_enabled:
        pfc["priorities"] = [{"priority": p, "no_drop": True} for p in profile.no_drop_priorities]
    wd = profile.watchdog
    if wd.enabled:
        pfc["watchdog"] = {"enabled": True, "timer": {"timeout": wd.timeout, "polling_interval": wd.polling_interval,
                                                      "recovery_time": wd.recovery_time}}
        if wd.action:
            pfc["watchdog"]["action"] = wd.action
    return {"name": profile.name, "trust": profile.trust, "priority_flow_control": pfc,
            "tx_queues": [_tx_queue(q) for q in profile.tx_queues]}


def _tx_queue(queue: TxQueue) -> dict[str, Any]:
    out: dict[str, Any] = {"id": queue.id, "comment": queue.comment,
                           "priority": "priority strict" if queue.strict else "no priority"}
    if not queue.strict and queue.bandwidth_percent is not None:
        out["bandwidth_percent"] = queue.bandwidth_percent
    if queue.ecn:
        e = queue.ecn
        out["random_detect"] = {"ecn": {"threshold": {"units": e.units, "min": e.minimum, "max": e.maximum,
                                                      "max_probability": e.probability, "weight": e.weight}}}
    return out


def _router_bgp(bgp: RouterBgp) -> dict[str, Any]:
    out: dict[str, Any] = {
        "as": str(bgp.asn),
        "router_id": bgp.router_id,
        "bgp": {"default": {"ipv4_unicast": False}},
        "maximum_paths": {"paths": bgp.maximum_paths, "ecmp": bgp.maximum_paths},
    }
    if bgp.timers:
        out["timers"] = {"keepalive_time": bgp.timers[0], "hold_time": bgp.timers[1]}
    if bgp.multipath_relax:
        out["bgp_defaults"] = ["bgp bestpath as-path multipath-relax"]
    neighbors = []
    for n in bgp.neighbors:
        item: dict[str, Any] = {"ip_address": n.address, "remote_as": str(n.remote_as)}
        if n.description:
            item["description"] = n.description
        if n.bfd:
            item["bfd"] = True
            item["bfd_timers"] = {"interval": n.bfd.interval, "min_rx": n.bfd.interval, "multiplier": n.bfd.multiplier}
        neighbors.append(item)
    out["neighbors"] = neighbors
    out["address_family_ipv4"] = {
        "neighbors": [{"ip_address": n.address, "activate": True} for n in bgp.neighbors],
        "networks": [{"prefix": p} for p in bgp.networks],
    }
    return out
