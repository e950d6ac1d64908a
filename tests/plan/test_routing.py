"""The eBGP routing plan: ASNs per scheme, one session per /31 on each end, ECMP width, announcements.

Checked on the lab (2-tier, one NIC out of service) and on the Llama 3 fabric
(3-tier, 2,048 switches), and on specs edited to exercise overrides, the
``unique`` scheme, exclusions and every refusal (each at its spec line).
"""

from __future__ import annotations

import dataclasses
import ipaddress
from collections import Counter, defaultdict
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from ruamel.yaml import YAML

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.plan.model import BgpNeighbor, Switch
from fabgen.plan.routing import LEAF_BLOCK, SPINE_BLOCK
from tests.helpers import EXAMPLE_NAMES, ROOT, dump, edited, example

BASE = 4_200_000_000


@cache
def _plan(name: str) -> FabricPlan:
    return plan_fabric(load_spec(example(name)))


def _edited_plan(edit: Callable[[dict[str, Any]], None], name: str = "lab") -> FabricPlan:
    return plan_fabric(load_spec(edited(edit, name)))


def _routing(data: dict[str, Any]) -> dict[str, Any]:
    return data["fabric"].setdefault("routing", {})  # type: ignore[no-any-return]


def _refusal(edit: Callable[[dict[str, Any]], None], name: str = "lab") -> tuple[str, str, str]:
    """The one problem an edited spec is refused with: its data path, the spec line it points at, its message."""
    text = edited(edit, name)
    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(text))
    assert len(info.value.problems) == 1, info.value.lines()
    problem = info.value.problems[0]
    assert problem.line > 0, str(problem)
    return problem.path, text.splitlines()[problem.line - 1], problem.message


def _asn(fabric: FabricPlan, name: str) -> int:
    bgp = fabric.switch(name).bgp
    assert bgp is not None
    return bgp.asn


# --- ASN schemes ---------------------------------------------------------------------------------


def test_lab_asns_one_per_leaf_one_for_all_spines() -> None:
    fabric = _plan("lab")
    leaves = [s for s in fabric.switches if s.tier == "leaf"]
    spines = [s for s in fabric.switches if s.tier == "spine"]
    assert {_asn(fabric, s.name) for s in spines} == {BASE + SPINE_BLOCK}
    leaf_asns = [_asn(fabric, s.name) for s in leaves]
    assert len(set(leaf_asns)) == len(leaves) == 4
    # 32-port spines bound a pod to 32 leaves: rail r's leaves start at 32 * r.
    assert sorted(leaf_asns) == [BASE + LEAF_BLOCK + 32 * r for r in range(4)]
    assert all(BASE <= a <= 4_294_967_294 for a in leaf_asns)


def test_llama3_asns_leaves_unique_spines_per_pod_supers_per_plane() -> None:
    fabric = _plan("llama3-24k")
    by_tier: dict[str, list[Switch]] = defaultdict(list)
    for s in fabric.switches:
        by_tier[s.tier].append(s)
    leaf_asns = Counter(_asn(fabric, s.name) for s in by_tier["leaf"])
    assert len(leaf_asns) == 768 and max(leaf_asns.values()) == 1

    spine_asn_of_pod: dict[int, set[int]] = defaultdict(set)
    for s in by_tier["spine"]:
        assert s.pod is not None
        spine_asn_of_pod[s.pod].add(_asn(fabric, s.name))
    assert all(len(v) == 1 for v in spine_asn_of_pod.values())
    assert len({next(iter(v)) for v in spine_asn_of_pod.values()}) == 24  # pods differ
    assert spine_asn_of_pod[5] == {BASE + SPINE_BLOCK + 5}

    super_asn_of_plane: dict[int, set[int]] = defaultdict(set)
    for s in by_tier["super_spine"]:
        assert s.plane is not None
        super_asn_of_plane[s.plane].add(_asn(fabric, s.name))
    assert all(len(v) == 1 for v in super_asn_of_plane.values())
    assert {next(iter(v)) for v in super_asn_of_plane.values()} == {BASE + p for p in range(32)}

    tiers = [set(leaf_asns), {a for v in spine_asn_of_pod.values() for a in v},
             {a for v in super_asn_of_plane.values() for a in v}]
    assert not (tiers[0] & tiers[1] or tiers[0] & tiers[2] or tiers[1] & tiers[2])


def test_asns_come_from_position_not_from_fabric_size() -> None:
    """A fabric with fewer pods gives every switch it shares with the full one the same ASN."""
    full = _plan("llama3-24k")

    def fewer_hosts(data: dict[str, Any]) -> None:
        data["hosts"][0]["count"] = 1024

    small = _edited_plan(fewer_hosts, "llama3-24k")
    assert small.layout.pods < full.layout.pods
    for s in small.switches:
        assert s.bgp is not None and s.bgp.asn == _asn(full, s.name), s.name


def test_unique_scheme_gives_every_switch_its_own_asn_and_relaxes_multipath() -> None:
    def unique(data: dict[str, Any]) -> None:
        _routing(data)["asn_scheme"] = "unique"

    fabric = _edited_plan(unique)
    asns = [_asn(fabric, s.name) for s in fabric.switches]
    assert len(set(asns)) == len(asns)
    for s in fabric.switches:
        assert s.bgp is not None
        assert s.bgp.multipath_relax == (s.tier == "leaf"), s.name  # spines of a 2-tier lab have no uplinks
    default = _plan("lab")
    assert not any(s.bgp and s.bgp.multipath_relax for s in default.switches)


def test_asn_base_moves_every_asn() -> None:
    def base(data: dict[str, Any]) -> None:
        _routing(data)["asn_base"] = BASE + 7

    fabric = _edited_plan(base)
    for s in _plan("lab").switches:
        assert _asn(fabric, s.name) == _asn(_plan("lab"), s.name) + 7


# --- sessions ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_switch_link_has_one_matching_session_on_each_end(name: str) -> None:
    fabric = _plan(name)
    sessions: dict[tuple[str, str], list[BgpNeighbor]] = defaultdict(list)
    for s in fabric.switches:
        assert s.bgp is not None
        for n in s.bgp.neighbors:
            sessions[(s.name, n.port)].append(n)
    switch_links = [link for link in fabric.links if link.role != "host-leaf"]
    assert switch_links
    for link in switch_links:
        for me, my_port, peer, peer_port, peer_address in (
            (link.a_device, link.a_port, link.b_device, link.b_port, link.b_address),
            (link.b_device, link.b_port, link.a_device, link.a_port, link.a_address),
        ):
            found = sessions.pop((me, my_port))
            assert len(found) == 1
            n = found[0]
            assert n.peer_device == peer and n.address == peer_address.partition("/")[0]
            assert n.remote_asn == _asn(fabric, peer) != _asn(fabric, me)
            assert n.description == f"{peer}:{peer_port}"
            assert "/" not in n.address
    assert not sessions  # no session without a planned link


@pytest.mark.parametrize("name", ["lab", "llama3-24k"])
def test_neighbors_in_port_order_and_none_to_hosts(name: str) -> None:
    fabric = _plan(name)
    for s in fabric.switches:
        assert s.bgp is not None
        switch_ports = [p.name for p in s.ports if p.peer_kind == "switch"]
        assert [n.port for n in s.bgp.neighbors] == switch_ports
        hosts = {h.name for h in fabric.hosts}
        assert not any(n.peer_device in hosts for n in s.bgp.neighbors)


def test_llama3_session_count() -> None:
    fabric = _plan("llama3-24k")
    ends = sum(len(s.bgp.neighbors) for s in fabric.switches if s.bgp)
    assert ends == 2 * (24_576 + 24_576)


def test_neighbor_built_in_place_equals_the_dataclass() -> None:
    """The planner fills BgpNeighbor's slots directly (for speed); the objects must be the real thing."""
    n = _plan("lab").switches[0].bgp.neighbors[0]  # type: ignore[union-attr]
    twin = BgpNeighbor(**{f.name: getattr(n, f.name) for f in dataclasses.fields(BgpNeighbor)})
    assert n == twin and hash(n) == hash(twin) and repr(n) == repr(twin)
    with pytest.raises(dataclasses.FrozenInstanceError):
        n.remote_asn = 1  # type: ignore[misc]


# --- ECMP width, router-id, what is announced ----------------------------------------------------


@pytest.mark.parametrize("name", ["lab", "llama3-24k"])
def test_maximum_paths_sized_from_uplinks_and_parallel_links(name: str) -> None:
    fabric = _plan(name)
    layout = fabric.layout
    for s in fabric.switches:
        assert s.bgp is not None
        uplinks = sum(1 for p in s.ports if p.direction == "up")
        if s.tier == "leaf":
            assert s.bgp.maximum_paths == uplinks == layout.spines_per_pod * layout.leaf_spine_links
        elif s.tier == "spine" and layout.tiers == 3:
            assert s.bgp.maximum_paths == uplinks == layout.supers_per_plane * layout.spine_super_links
        elif s.tier == "spine":
            assert s.bgp.maximum_paths == layout.leaf_spine_links  # parallel links down to one leaf
        else:
            assert s.bgp.maximum_paths == layout.spine_super_links


def test_fixed_maximum_paths_is_taken_as_given() -> None:
    def fixed(data: dict[str, Any]) -> None:
        _routing(data)["maximum_paths"] = 64

    assert {s.bgp.maximum_paths for s in _edited_plan(fixed).switches if s.bgp} == {64}


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_router_id_is_the_loopback(name: str) -> None:
    for s in _plan(name).switches:
        assert s.bgp is not None and f"{s.bgp.router_id}/32" == s.loopback


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_networks_are_the_loopback_and_in_service_host_subnets(name: str) -> None:
    fabric = _plan(name)
    for s in fabric.switches:
        assert s.bgp is not None
        expected = {s.loopback} | {
            str(ipaddress.IPv4Interface(p.address).network) for p in s.ports if p.peer_kind == "host" and not p.shutdown}
        assert set(s.bgp.networks) == expected
        assert len(s.bgp.networks) == len(expected)
        nets = [ipaddress.IPv4Network(n) for n in s.bgp.networks]  # strict: no host bits set
        assert nets == sorted(nets)
        if s.tier != "leaf":
            assert s.bgp.networks == (s.loopback,)


def test_out_of_service_nic_shuts_its_leaf_port_and_withdraws_its_subnet() -> None:
    fabric = _plan("lab")
    nic = next(n for n in fabric.host("lab04").nics if n.name == "mlx5_3")
    assert not nic.in_service and nic.leaf is not None
    shut = [(s.name, p.name) for s in fabric.switches for p in s.ports if p.shutdown]
    assert shut == [(nic.leaf, nic.leaf_port)]
    leaf = fabric.switch(nic.leaf)
    port = next(p for p in leaf.ports if p.name == nic.leaf_port)
    assert leaf.bgp is not None
    assert str(ipaddress.IPv4Interface(port.address).network) not in leaf.bgp.networks
    assert len(leaf.bgp.networks) == 1 + 3  # loopback + the three hosts still in service


def test_no_bfd_or_timers_unless_asked_then_on_every_switch() -> None:
    assert all(s.bgp and s.bgp.bfd is None and s.bgp.keepalive is None for s in _plan("lab").switches)

    def both(data: dict[str, Any]) -> None:
        _routing(data).update(bfd={"interval": "100ms", "multiplier": 4}, timers={"keepalive": 1, "hold": 3})

    for s in _edited_plan(both).switches:
        assert s.bgp is not None and s.bgp.bfd is not None
        assert (s.bgp.bfd.interval_ms, s.bgp.bfd.multiplier, s.bgp.keepalive, s.bgp.hold) == (100, 4, 1, 3)

    def bfd_off(data: dict[str, Any]) -> None:
        _routing(data)["bfd"] = {"enabled": False}

    assert all(s.bgp and s.bgp.bfd is None for s in _edited_plan(bfd_off).switches)


def test_routing_off_plans_no_bgp_but_still_shuts_the_port() -> None:
    def off(data: dict[str, Any]) -> None:
        _routing(data)["enabled"] = False

    fabric = _edited_plan(off)
    assert all(s.bgp is None for s in fabric.switches)
    assert sum(p.shutdown for s in fabric.switches for p in s.ports) == 1


def test_excluded_switch_runs_no_bgp_and_its_peers_plan_no_session_to_it() -> None:
    def exclude(data: dict[str, Any]) -> None:
        _routing(data)["exclude"] = ["spine-02"]

    fabric = _edited_plan(exclude)
    assert fabric.switch("spine-02").bgp is None
    for s in fabric.switches:
        if s.bgp:
            assert all(n.peer_device != "spine-02" for n in s.bgp.neighbors)
    leaf = fabric.switch("leaf-r0-p00-01")
    assert leaf.bgp is not None and leaf.bgp.maximum_paths == 2


# --- overrides and refusals ----------------------------------------------------------------------


def test_override_sets_the_asn_of_matching_switches_first_match_wins() -> None:
    def overrides(data: dict[str, Any]) -> None:
        _routing(data)["asn_overrides"] = [
            {"match": "leaf-r0-*", "asn": 65001},
            {"match": "leaf-*", "asn": BASE + 999_999},
            {"match": "spine-*", "asn": 4_210_000_000},
        ]

    fabric = _edited_plan(overrides)
    assert _asn(fabric, "leaf-r0-p00-01") == 65001
    assert _asn(fabric, "leaf-r1-p00-01") == BASE + 999_999  # a later collision: lint's business (FG601)
    assert _asn(fabric, "spine-01") == _asn(fabric, "spine-02") == 4_210_000_000
    leaf = fabric.switch("leaf-r0-p00-01")
    assert leaf.bgp is not None and {n.remote_asn for n in leaf.bgp.neighbors} == {4_210_000_000}


def test_override_giving_a_leaf_its_spines_asn_is_refused_at_its_line() -> None:
    def collide(data: dict[str, Any]) -> None:
        _routing(data)["asn_overrides"] = [{"match": "leaf-r2-p00-01", "asn": BASE + SPINE_BLOCK}]

    path, line, _ = _refusal(collide)
    assert path == "fabric.routing.asn_overrides[0].asn"
    assert "asn:" in line and str(BASE + SPINE_BLOCK) in line


def test_override_matching_no_switch_is_refused_at_its_match() -> None:
    def typo(data: dict[str, Any]) -> None:
        _routing(data)["asn_overrides"] = [{"match": "laef-*", "asn": 65001}]

    path, line, _ = _refusal(typo)
    assert path == "fabric.routing.asn_overrides[0].match" and "laef-*" in line


@pytest.mark.parametrize("asn", [64511, 65535, 100, 4_199_999_999, 4_294_967_295])
def test_public_or_reserved_override_asn_refused(asn: int) -> None:
    def public(data: dict[str, Any]) -> None:
        _routing(data)["asn_overrides"] = [{"match": "spine-*", "asn": asn}]

    path, line, message = _refusal(public)
    assert path == "fabric.routing.asn_overrides[0].asn" and "not private" in message and str(asn) in line


@pytest.mark.parametrize("base", [64512, 4_199_999_999, 4_294_967_295])
def test_asn_base_outside_the_4_byte_private_range_refused(base: int) -> None:
    def bad(data: dict[str, Any]) -> None:
        _routing(data)["asn_base"] = base

    path, line, _ = _refusal(bad)
    assert path == "fabric.routing.asn_base" and str(base) in line


def test_asn_base_too_high_for_the_scheme_is_refused_at_asn_base() -> None:
    def high(data: dict[str, Any]) -> None:
        _routing(data)["asn_base"] = 4_294_900_000

    path, line, _ = _refusal(high)
    assert path == "fabric.routing.asn_base" and "4294900000" in line


@pytest.mark.parametrize(("timers", "ok"), [
    ({"keepalive": 3, "hold": 9}, True), ({"keepalive": 0, "hold": 0}, True), ({"keepalive": 10, "hold": 0}, True),
    ({"keepalive": 3, "hold": 8}, False), ({"keepalive": 0, "hold": 9}, False),
])
def test_hold_time_zero_or_three_keepalives(timers: dict[str, int], ok: bool) -> None:
    def set_timers(data: dict[str, Any]) -> None:
        _routing(data)["timers"] = timers

    if ok:
        assert _edited_plan(set_timers).switches[0].bgp is not None
    else:
        path, _, _ = _refusal(set_timers)
        assert path == "fabric.routing.timers"


@pytest.mark.parametrize("bfd", [{"interval": "10ms"}, {"multiplier": 2}, {"multiplier": 51}])
def test_bfd_outside_what_every_os_accepts_refused(bfd: dict[str, Any]) -> None:
    def set_bfd(data: dict[str, Any]) -> None:
        _routing(data)["bfd"] = bfd

    path, _, _ = _refusal(set_bfd)
    assert path.startswith("fabric.routing.bfd.")


def test_plan_summary_counts_asns_per_tier_and_sessions() -> None:
    from fabgen.plan.summary import summary, summary_table

    fabric = _plan("llama3-24k")
    routing = summary(fabric)["routing"]
    assert routing["asns"] == {  # type: ignore[index]
        "leaf": {"count": 768, "first": BASE + LEAF_BLOCK, "last": max(_asn(fabric, s.name) for s in fabric.switches)},
        "spine": {"count": 24, "first": BASE + SPINE_BLOCK, "last": BASE + SPINE_BLOCK + 23},
        "super-spine": {"count": 32, "first": BASE, "last": BASE + 31},
    }
    assert routing["sessions"] == 49_152 and routing["bgp_speakers"] == 2_048  # type: ignore[index]
    assert "sessions              49,152" in summary_table(fabric)

    def off(data: dict[str, Any]) -> None:
        _routing(data)["enabled"] = False

    assert "routing" not in summary(_edited_plan(off))


def test_explicit_cable_to_another_pods_spine_gets_sessions_and_multipath_relax() -> None:
    """A leaf whose uplinks reach two spine groups has ECMP over two peer ASNs: relax is needed there only."""
    data = YAML(typ="safe", pure=True).load((ROOT / "tests/data/lint/bases/three-tier.yaml").read_text())
    data["fabric"]["cabling"] = [{"a": "leaf-r0-p00-01:Ethernet4/1", "b": "spine-p01-02:Ethernet1/1"}]
    fabric = plan_fabric(load_spec(dump(data)))
    leaf = fabric.switch("leaf-r0-p00-01")
    assert leaf.bgp is not None
    by_port = {n.port: n for n in leaf.bgp.neighbors}
    assert by_port["Ethernet4/1"].peer_device == "spine-p01-02"
    assert by_port["Ethernet4/1"].remote_asn == _asn(fabric, "spine-p01-02") == BASE + SPINE_BLOCK + 1
    assert leaf.bgp.multipath_relax
    spine = fabric.switch("spine-p01-02")
    assert spine.bgp is not None
    assert any(n.peer_device == "leaf-r0-p00-01" and n.port == "Ethernet1/1" for n in spine.bgp.neighbors)
    relaxed = sorted(s.name for s in fabric.switches if s.bgp and s.bgp.multipath_relax)
    assert relaxed == ["leaf-r0-p00-01"]
