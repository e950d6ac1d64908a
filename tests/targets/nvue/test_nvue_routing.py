"""NVUE routing and load balancing (fabgen.targets.nvue.routing): the plan's BGP underlay, ECMP hash and
adaptive routing in both files, checked against the NVUE model, and what NVUE cannot do refused at its line.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.plan import FabricPlan
from fabgen.targets.nvue.config import nvue_config, startup_yaml
from fabgen.targets.nvue.parse import check_nvue_startup, load_set_tree, parse_nv_set
from tests.helpers import dump, spec_data


def pod(**load_balancing: Any) -> str:
    data = spec_data("cumulus-pod")
    group = data["hosts"][0]
    group["overrides"] = {group["name"].format(index=1): {"nics_out_of_service": ["mlx5_1"]}}
    data["fabric"]["routing"] = {"asn_scheme": "unique", "bfd": {"interval": "250ms", "multiplier": 4},
                                 "timers": {"keepalive": 3, "hold": 9}}
    if load_balancing:
        data["fabric"]["load_balancing"] = load_balancing
    return dump(data)


@cache
def planned(mode: str) -> FabricPlan:
    return plan_fabric(load_spec(pod(mode=mode)))


@pytest.mark.parametrize("mode", ["ecmp", "spray"])
def test_both_files_carry_the_plan(mode: str) -> None:
    plan = planned(mode)
    files = render_fabric(plan, ["nvue"])  # runs the NVUE model check on both files
    shut_seen = False
    for switch in plan.switches:
        startup = files[f"switches/{switch.name}/startup.yaml"]
        tree = load_set_tree(startup)
        assert parse_nv_set(files[f"switches/{switch.name}/nvue.sh"]) == tree
        bgp = switch.bgp
        assert bgp is not None
        assert tree["router"]["bgp"] == {"enable": "on", "autonomous-system": bgp.asn, "router-id": bgp.router_id}
        vrf = tree["vrf"]["default"]["router"]["bgp"]
        family = vrf["address-family"]["ipv4-unicast"]
        assert list(family["network"]) == list(bgp.networks)
        assert family["multipaths"] == {"ebgp": bgp.maximum_paths}
        assert ("path-selection" in vrf) == bgp.multipath_relax
        assert set(vrf["neighbor"]) == {n.address for n in bgp.neighbors}
        for n in bgp.neighbors:
            assert vrf["neighbor"][n.address] == {
                "remote-as": n.remote_asn, "type": "numbered", "description": n.description,
                "timers": {"keepalive": 3, "hold": 9},
                "bfd": {"enable": "on", "detect-multiplier": 4, "min-rx-interval": 250, "min-tx-interval": 250},
                "address-family": {"ipv4-unicast": {"enable": "on"}},
            }
        assert tree["system"]["forwarding"]["ecmp-hash"]["source-port"] == "on"
        spray = mode == "spray"
        assert ("adaptive-routing" in tree["router"]) == spray
        for port in switch.ports:
            interface = tree["interface"][port.name]
            assert interface["link"]["state"] == ({"down": {}} if port.shutdown else {"up": {}})
            shut_seen |= port.shutdown
            wants_ar = spray and port.peer_kind == "switch"
            assert interface.get("router") == ({"adaptive-routing": {"enable": "on"}} if wants_ar else None)
    assert shut_seen


def test_relax_only_where_uplinks_lead_to_several_asns() -> None:
    plan = planned("ecmp")
    leaf = next(s for s in plan.switches if s.tier == "leaf")
    assert leaf.bgp is not None and leaf.bgp.multipath_relax  # unique: each spine its own ASN
    relaxed = load_set_tree(startup_yaml(nvue_config(leaf)))["vrf"]["default"]["router"]["bgp"]
    assert relaxed["path-selection"] == {"multipath": {"aspath-ignore": "on"}}


@pytest.mark.parametrize("old, new, needle", [
    (r"ebgp: \d+}", "ebgp: 129}", "129 is outside 1..128"),
    ("detect-multiplier: 4", "detect-multiplier: 1", "1 is outside 2..255"),
    ("remote-as: 42", "remote-az: 42", "unknown key 'remote-az'"),
    ('aspath-ignore: "on"', 'aspath-ignore: "yes"', "'yes' is not one of on, off"),
])
def test_the_model_catches_a_planted_error(old: str, new: str, needle: str) -> None:
    leaf = next(s for s in planned("ecmp").switches if s.tier == "leaf")
    text = startup_yaml(nvue_config(leaf))
    assert check_nvue_startup("startup.yaml", text) == []
    broken, count = re.subn(old, new, text, count=1)
    assert count == 1, old
    problems = check_nvue_startup("startup.yaml", broken)
    assert any(needle in p.message for p in problems), [p.message for p in problems]


def refused(text: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        plan_fabric(load_spec(text))
    return caught.value.lines()


def test_dlb_is_refused_at_the_mode_line() -> None:
    text = pod(mode="dlb")
    (line,) = refused(text)
    number = next(i for i, x in enumerate(text.splitlines(), 1) if re.fullmatch(r"\s+mode: dlb", x))
    assert line.startswith(f"<string>:{number}:") and "dlb cannot be configured on Cumulus NVUE" in line


def test_spray_needs_spectrum_4() -> None:
    def older(data: dict[str, Any]) -> None:
        for tier in data["fabric"]["tiers"].values():
            tier["asic"], tier["model"] = "spectrum3", "SN4700"
    data = spec_data("cumulus-pod")
    older(data)
    data["fabric"]["load_balancing"] = {"mode": "spray"}
    (line,) = refused(dump(data))
    assert "Spectrum-4 switches only, not on SN4700 (spectrum3)" in line


def test_spray_is_what_fg406_talks_about() -> None:
    """FG406 fires on spray without NCCL_IB_ADAPTIVE_ROUTING, and spray renders as adaptive routing."""
    from fabgen.pipeline import lint_fabric

    findings = [f for f in lint_fabric(load_spec(pod(mode="spray"))) if f.code == "FG406"]
    assert len(findings) == 1 and "adaptive routing" in findings[0].message
    assert not [f for f in lint_fabric(load_spec(pod())) if f.code == "FG406"]  # ecmp
