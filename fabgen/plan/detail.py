"""``fabgen plan --format json --detail``: every device, port, peer and address, streamed.

A 24k fabric is ~150k switch ports and ~74k links; building it as one object
and dumping it would hold the whole document in memory twice. So the document
is written piece by piece, one device or link per ``json.dumps``, in plan order:
linear in the plan's size and byte-identical between runs (keys in a fixed order).

Shape: ``{"summary": {...}, "switches": [...], "hosts": [...], "links": [...]}``,
``summary`` being what ``plan --format json`` prints. A switch carries its
ports (peer, addresses, rail, shutdown) and, when routed, its BGP (ASN,
router-id, neighbours, maximum-paths, networks); a host its NICs (rail,
address, leaf and leaf port, in service or not).
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from fabgen.plan.model import FabricPlan, Host, Link, Switch
from fabgen.plan.summary import summary


def _switch(s: Switch) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": s.name, "tier": s.tier, "os": s.os, "model": s.model, "pod": s.pod, "rail": s.rail,
        "plane": s.plane, "index": s.index, "loopback": s.loopback, "mgmt": s.mgmt,
        "ports": [{"name": p.name, "index": p.index, "speed": p.speed, "direction": p.direction,
                   "peer": p.peer_device, "peer_port": p.peer_port, "peer_kind": p.peer_kind,
                   "address": p.address, "peer_address": p.peer_address, "rail": p.rail,
                   "shutdown": p.shutdown} for p in s.ports],
    }
    if s.bgp is not None:
        b = s.bgp
        out["bgp"] = {"asn": b.asn, "router_id": b.router_id, "maximum_paths": b.maximum_paths,
                      "multipath_relax": b.multipath_relax, "networks": list(b.networks),
                      "neighbors": [{"address": n.address, "remote_asn": n.remote_asn, "port": n.port,
                                     "peer": n.peer_device} for n in b.neighbors]}
    return out


def _host(h: Host) -> dict[str, Any]:
    return {"name": h.name, "profile": h.profile, "pod": h.pod, "mgmt": h.mgmt,
            "nics": [{"name": n.name, "netdev": n.netdev, "pci": n.pci, "rail": n.rail, "speed": n.speed,
                      "in_service": n.in_service, "address": n.address, "leaf": n.leaf, "leaf_port": n.leaf_port}
                     for n in h.nics]}


def _link(k: Link) -> dict[str, Any]:
    return {"a": k.a_device, "a_port": k.a_port, "a_address": k.a_address, "b": k.b_device, "b_port": k.b_port,
            "b_address": k.b_address, "role": k.role, "rail": k.rail, "speed": k.speed, "explicit": k.explicit}


def write_detail(plan: FabricPlan, out: TextIO) -> None:
    """Write the detailed plan to ``out`` as one JSON document, one array element per line."""
    out.write('{"summary": ')
    out.write(json.dumps(summary(plan), sort_keys=True))
    sections: tuple[tuple[str, Any, Any], ...] = (
        ("switches", plan.switches, _switch), ("hosts", plan.hosts, _host), ("links", plan.links, _link))
    for key, items, convert in sections:
        out.write(f',\n"{key}": [')
        for i, item in enumerate(items):
            out.write(",\n" if i else "\n")
            out.write(json.dumps(convert(item)))
        out.write("\n]")
    out.write("}\n")
