"""The BGP sessions the planner builds in its one pass over the links equal a plain walk over the finished ports.

``fabgen.plan.build`` makes each switch's :class:`BgpNeighbor` list while it makes the ports, before the ports
are sorted into front-panel order and before out-of-service NICs' ports are shut. Here the same intent is
derived the obvious way, from each finished switch's ports in order, with the dataclasses' own constructors,
on specs that plant what the pass has to get right: ports cabled out of panel order (explicit cables, so the
sessions must be re-sorted like the ports), two cables on one port, shut ports (not announced), excluded
switches (no session to them) and ASN overrides.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from typing import Any

import pytest
from ruamel.yaml import YAML

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan.model import BgpIntent, BgpNeighbor, FabricPlan
from tests.helpers import EXAMPLE_NAMES, ROOT, dump, edited, example


def _walked(fabric: FabricPlan) -> dict[str, BgpIntent]:
    asns = {s.name: s.bgp.asn for s in fabric.switches if s.bgp is not None}
    out = {}
    for switch in fabric.switches:
        bgp = switch.bgp
        if bgp is None:
            continue
        sessions = [p for p in switch.ports if p.peer_device in asns]
        neighbors = tuple(BgpNeighbor(p.peer_address, asns[p.peer_device], p.name, p.peer_device, p.description)
                          for p in sessions)
        up = [asns[p.peer_device] for p in sessions if p.direction == "up"]
        down = Counter(asns[p.peer_device] for p in sessions if p.direction == "down")
        fixed = fabric.spec.fabric.routing.maximum_paths
        nets = {p.address for p in switch.ports if p.peer_kind == "host" and not p.shutdown}
        nets.add(f"{bgp.router_id}/32")
        out[switch.name] = BgpIntent(
            asn=asns[switch.name], router_id=switch.loopback.split("/")[0], neighbors=neighbors,
            maximum_paths=fixed if fixed is not None else max(len(up), max(down.values(), default=0), 1),
            multipath_relax=len(set(up)) > 1,
            networks=tuple(sorted(nets, key=lambda n: ipaddress.ip_interface(n).ip)),
            bfd=bgp.bfd, keepalive=bgp.keepalive, hold=bgp.hold)
    return out


def _out_of_order(fabric: FabricPlan) -> list[str]:
    """Switches whose ports the links list in another order than the front panel's."""
    cabled: dict[str, list[str]] = {}
    for link in fabric.links:
        cabled.setdefault(link.a_device, []).append(link.a_port)
        cabled.setdefault(link.b_device, []).append(link.b_port)
    return [s.name for s in fabric.switches if cabled.get(s.name) != [p.name for p in s.ports]]


def _three_tier(edit: Any) -> FabricPlan:
    data = YAML(typ="safe", pure=True).load((ROOT / "tests/data/lint/bases/three-tier.yaml").read_text())
    edit(data)
    return plan_fabric(load_spec(dump(data)))


def _cross_pod(data: dict[str, Any]) -> None:
    data["fabric"]["cabling"] = [{"a": "leaf-r0-p00-01:Ethernet4/1", "b": "spine-p01-02:Ethernet8/1"}]


def _exclude_and_override(data: dict[str, Any]) -> None:
    routing = data["fabric"].setdefault("routing", {})
    routing["exclude"] = ["spine-02"]
    routing["asn_overrides"] = [{"match": "leaf-r1-*", "asn": 4200000001}]


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n not in ("llama3-24k", "meta-24k")])
def test_examples(name: str) -> None:
    fabric = plan_fabric(load_spec(example(name)))
    assert _walked(fabric) == {s.name: s.bgp for s in fabric.switches if s.bgp is not None}


def test_lab_has_shut_ports_and_they_are_not_announced() -> None:
    fabric = plan_fabric(load_spec(example("lab")))
    shut = [(s, p) for s in fabric.switches for p in s.ports if p.shutdown]
    assert shut
    for switch, port in shut:
        assert switch.bgp is not None and port.address not in switch.bgp.networks


@pytest.mark.parametrize("plan", ["cross-pod", "moved-uplink", "exclude-override"])
def test_planted(plan: str) -> None:
    if plan == "cross-pod":
        fabric = _three_tier(_cross_pod)
        assert _out_of_order(fabric)  # the sessions of these switches are re-sorted with their ports
    elif plan == "moved-uplink":  # (two cables on one port, planted here before, are refused at load now)
        def moved(data: dict[str, Any]) -> None:
            data["fabric"]["cabling"] = [{"a": "leaf-r0-p00-01:Ethernet2/1", "b": "spine-p00-02:Ethernet9/1"}]
        fabric = _three_tier(moved)
        assert _out_of_order(fabric)
    else:
        fabric = plan_fabric(load_spec(edited(_exclude_and_override, "lab")))
        assert any(s.bgp is None for s in fabric.switches)
    assert _walked(fabric) == {s.name: s.bgp for s in fabric.switches if s.bgp is not None}
