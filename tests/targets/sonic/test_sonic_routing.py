"""SONiC routing tables (fabgen.targets.sonic.routing): the plan's BGP underlay, neighbours, management
and ECMP hash in CONFIG_DB, valid against SONiC's YANG models, and what SONiC cannot do refused at its line.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import dump, spec_data
from test_sonic_yang import yang_dir  # noqa: F401  (fixture: libyang and the reference models)

from fabgen import pipeline
from fabgen.errors import SpecError
from fabgen.plan import FabricPlan
from fabgen.targets.sonic.config_db import config_db
from fabgen.targets.sonic.routing import ECMP_HASH_FIELDS
from fabgen.targets.sonic.yang import validate_config_db


def sonic_pod(edit: Any = None) -> str:
    data = spec_data("sonic-pod")
    data["hosts"][0].setdefault("overrides", {})
    first = data["hosts"][0]
    name = first["name"].format(index=1) if "{" in first["name"] else first["name"]
    first["overrides"][name] = {"nics_out_of_service": ["mlx5_2"]}
    data["fabric"]["routing"] = {"asn_scheme": "unique", "bfd": {"interval": "300ms", "multiplier": 3},
                                 "timers": {"keepalive": 3, "hold": 9}}
    if edit:
        edit(data)
    return dump(data)


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return pipeline.plan_fabric(pipeline.load_spec(sonic_pod()))


def test_every_switch_with_everything_on_validates(plan: FabricPlan, yang_dir: Path) -> None:  # noqa: F811
    for switch in plan.switches:
        assert validate_config_db(config_db(plan, switch), yang_dir, file=switch.name) == [], switch.name


def test_tables_say_what_the_plan_says(plan: FabricPlan) -> None:
    shut_seen = False
    for switch in plan.switches:
        db = config_db(plan, switch)
        bgp = switch.bgp
        assert bgp is not None
        assert db["DEVICE_METADATA"]["localhost"]["bgp_asn"] == str(bgp.asn)
        assert db["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"] == "true"
        assert db["LOOPBACK_INTERFACE"] == {"Loopback0": {}, f"Loopback0|{switch.loopback}": {}}
        assert db["BGP_GLOBALS"]["default"]["router_id"] == bgp.router_id
        assert db["BGP_GLOBALS"]["default"]["load_balance_mp_relax"] == ("true" if bgp.multipath_relax else "false")
        assert db["BGP_GLOBALS_AF"]["default|ipv4_unicast"]["max_ebgp_paths"] == str(bgp.maximum_paths)
        assert sorted(db["BGP_GLOBALS_AF_NETWORK"]) == sorted(f"default|ipv4_unicast|{p}" for p in bgp.networks)
        neighbors = db["BGP_NEIGHBOR"]
        assert set(neighbors) == {f"default|{n.address}" for n in bgp.neighbors}
        for n in bgp.neighbors:
            entry = neighbors[f"default|{n.address}"]
            port = next(p for p in switch.ports if p.name == n.port)
            assert entry == {"asn": str(n.remote_asn), "name": n.peer_device, "local_addr": port.address[:-3],
                             "admin_status": "up", "keepalive": "3", "holdtime": "9", "bfd": "true"}
            assert db["BGP_NEIGHBOR_AF"][f"default|{n.address}|ipv4_unicast"] == {"admin_status": "up"}
        assert db["DEVICE_NEIGHBOR"] == {p.name: {"name": p.peer_device, "port": p.peer_port} for p in switch.ports}
        assert db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] == list(ECMP_HASH_FIELDS)
        assert "L4_SRC_PORT" in ECMP_HASH_FIELDS  # RoCE's per-QP entropy
        assert db["MGMT_INTERFACE"] == {f"eth0|{switch.mgmt}": {"gwaddr": "192.0.2.254"}}
        for port in switch.ports:
            assert db["PORT"][port.name]["admin_status"] == ("down" if port.shutdown else "up")
            shut_seen |= port.shutdown
    assert shut_seen, "the out-of-service NIC's leaf port should be shut"


def test_relax_follows_the_scheme() -> None:
    """rfc7938: a leaf's uplinks lead to one spine ASN, so no relax; unique: several, so relax."""
    def rfc(data: dict[str, Any]) -> None:
        data["fabric"]["routing"] = {}
    plan = pipeline.plan_fabric(pipeline.load_spec(sonic_pod(rfc)))
    leaf = next(s for s in plan.switches if s.tier == "leaf")
    assert config_db(plan, leaf)["BGP_GLOBALS"]["default"]["load_balance_mp_relax"] == "false"
    assert "keepalive" not in config_db(plan, leaf)["BGP_GLOBALS"]["default"]


@pytest.mark.parametrize("plant, needle", [
    (lambda db: db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"].append("L4_SRC_PORTS"), "L4_SRC_PORTS"),
    (lambda db: db["BGP_NEIGHBOR"][next(iter(db["BGP_NEIGHBOR"]))].update(asn="AS65000"), "AS65000"),
    (lambda db: db["BGP_NEIGHBOR_AF"].update({"default|10.99.0.1|ipv4_unicast": {"admin_status": "up"}}),
     "10.99.0.1"),
    (lambda db: db["MGMT_INTERFACE"][next(iter(db["MGMT_INTERFACE"]))].pop("gwaddr"), "gwaddr"),
    (lambda db: db["BGP_GLOBALS_AF"]["default|ipv4_unicast"].update(max_ebgp_paths="300"), "300"),
])
def test_yang_catches_a_planted_error(plan: FabricPlan, yang_dir: Path, plant: Any, needle: str) -> None:  # noqa: F811
    db = copy.deepcopy(config_db(plan, plan.switches[0]))
    plant(db)
    problems = validate_config_db(db, yang_dir, file="leaf.json")
    assert problems and any(needle in p.message for p in problems), [p.message for p in problems]


def refused(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        pipeline.plan_fabric(pipeline.load_spec(text))
    return caught.value.lines()


def line_of(text: str, pattern: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if re.search(pattern, line))


@pytest.mark.parametrize("mode", ["spray", "dlb"])
def test_load_balancing_mode_sonic_cannot_do_is_refused_at_its_line(mode: str) -> None:
    def edit(data: dict[str, Any]) -> None:
        data["fabric"]["load_balancing"] = {"mode": mode}
    text = sonic_pod(edit)
    (line,) = [x for x in refused(text) if "load-balancing" in x]
    assert line.startswith(f"<string>:{line_of(text, r'^    mode: ' + mode)}:"), line
    assert f"mode {mode} cannot be configured on SONiC" in line


def test_bfd_timers_sonic_cannot_carry_are_refused() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["fabric"]["routing"]["bfd"] = {"interval": "250ms", "multiplier": 3}
    text = sonic_pod(edit)
    (line,) = refused(text)
    assert "BFD 250 ms x 3 cannot be configured on SONiC" in line and "(at fabric.routing.bfd)" in line


def test_a_gateway_on_a_device_address_is_refused() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["fabric"]["addressing"]["mgmt_gateway"] = "192.0.2.3"
    (line,) = refused(sonic_pod(edit))
    assert "mgmt_gateway 192.0.2.3 is the management address of a device" in line


def test_no_gateway_no_mgmt_interface(yang_dir: Path) -> None:  # noqa: F811
    """Without a gateway SONiC's model refuses MGMT_INTERFACE, so only MGMT_PORT is written."""
    def edit(data: dict[str, Any]) -> None:
        del data["fabric"]["addressing"]["mgmt_gateway"]
    plan = pipeline.plan_fabric(pipeline.load_spec(sonic_pod(edit)))
    db = config_db(plan, plan.switches[0])
    assert "MGMT_INTERFACE" not in db and db["MGMT_PORT"] == {"eth0": {"admin_status": "up", "alias": "eth0"}}
    assert validate_config_db(db, yang_dir) == []
