"""The SONiC target: config_db.json per switch, its parser, and the PFC headroom it carries.

Every generated file is validated with libyang against the SONiC YANG models in
../shared/reference/sonic-yang (skipped without them or without libyang, failed
under FABGEN_REQUIRE_REFERENCE=1), read back into the common QoS picture and
compared with the plan's intent, and rendered twice to prove it is byte-stable.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import require_reference

import fabgen.targets.qos_common as qos_common
import fabgen.targets.sonic.config_db as sonic
from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.plan.model import FabricPlan
from fabgen.spec.buffers import SonicBuffers
from fabgen.targets.sonic.buffers import resolve_constants, switch_buffers
from fabgen.targets.sonic.parse import parse_sonic_qos, qos_ports
from tests.helpers import edited, example

# -- fixtures --------------------------------------------------------------------------------


def _pfc_only(data: dict[str, Any]) -> None:
    """Meta's 400G profile: PFC without ECN, DCQCN off."""
    del data["qos"]["classes"]["roce"]["ecn"]
    data["nic"]["dcqcn"]["enabled"] = False


def _watchdog_off(data: dict[str, Any]) -> None:
    data["qos"]["pfc"]["watchdog"]["enabled"] = False


VARIANTS = {
    "pod": None,
    "pfc-only": _pfc_only,
    "watchdog-off": _watchdog_off,
}


def _plan(variant: str) -> FabricPlan:
    edit = VARIANTS[variant]
    if edit is None:
        return plan_fabric(load_spec(example("sonic-pod")))
    return plan_fabric(load_spec(edited(edit, "sonic-pod")))


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def variant(request: pytest.FixtureRequest) -> tuple[str, FabricPlan]:
    return request.param, _plan(request.param)


@pytest.fixture(scope="module")
def pod() -> FabricPlan:
    return _plan("pod")


@pytest.fixture(scope="module")
def yang_dir() -> Path:
    try:
        import libyang  # noqa: F401
    except ImportError:
        message = "libyang not importable: apt-get install libyang2-dev && pip install 'fabgen[yang]'"
        if os.environ.get("FABGEN_REQUIRE_REFERENCE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return require_reference("sonic-yang")


def _configs(fabric: FabricPlan) -> dict[str, dict[str, Any]]:
    return {s.name: sonic.config_db(fabric, s) for s in fabric.switches if s.os == "sonic"}


# -- the target ------------------------------------------------------------------------------


def test_one_file_per_sonic_switch(pod: FabricPlan) -> None:
    files = render_fabric(pod, ["sonic"])
    assert sorted(files) == sorted(f"switches/{s.name}/config_db.json" for s in pod.switches)
    for path, text in files.items():
        name = path.split("/")[1]
        assert json.loads(text) == sonic.config_db(pod, pod.switch(name))
        assert text == json.dumps(json.loads(text), indent=4, sort_keys=True) + "\n"


def test_eos_switches_get_no_sonic_file() -> None:
    assert render_fabric(plan_fabric(load_spec(example("lab"))), ["sonic"]) == {}


def test_required_tables_are_present(pod: FabricPlan) -> None:
    config = sonic.config_db(pod, pod.switches[0])
    assert set(config) == {
        "DEVICE_METADATA", "PORT", "INTERFACE", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP",
        "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PORT_QOS_MAP", "WRED_PROFILE",
        "SCHEDULER", "QUEUE", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "CABLE_LENGTH",
        "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST",
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN", "PFC_WD", "FLEX_COUNTER_TABLE",
    } | {  # fabgen.targets.sonic.routing
        "LOOPBACK_INTERFACE", "DEVICE_NEIGHBOR", "SWITCH_HASH", "MGMT_PORT", "MGMT_INTERFACE", "BGP_GLOBALS",
        "BGP_GLOBALS_AF", "BGP_GLOBALS_AF_NETWORK", "BGP_NEIGHBOR", "BGP_NEIGHBOR_AF",
    }


def test_values_come_from_the_plan(pod: FabricPlan) -> None:
    leaf = pod.switches[0]
    config = sonic.config_db(pod, leaf)
    first = leaf.ports[0]
    port = config["PORT"][first.name]
    assert port["speed"] == str(first.speed * 1000) == "400000"
    assert port["lanes"] == ",".join(map(str, first.lanes)) and port["mtu"] == "9100"
    assert port["description"] == first.description and port["admin_status"] == "up"
    assert f"{first.name}|{first.address}" in config["INTERFACE"]
    assert config["DSCP_TO_TC_MAP"]["ROCE"] == {str(d): str(p) for d, p in enumerate(leaf.qos.dscp_to_priority)}
    assert len(config["DSCP_TO_TC_MAP"]["ROCE"]) == 64
    assert config["PORT_QOS_MAP"][first.name]["pfc_enable"] == "3"
    assert config["PORT_QOS_MAP"][first.name]["pfcwd_sw_enable"] == "3"
    assert config["PORT_QOS_MAP"]["global"] == {"dscp_to_tc_map": "ROCE"}
    assert config["WRED_PROFILE"]["roce"]["green_min_threshold"] == str(150 * 1024)
    assert config["WRED_PROFILE"]["roce"]["green_max_threshold"] == str(1500 * 1024)
    assert config["WRED_PROFILE"]["roce"]["ecn"] == "ecn_all"
    assert config["SCHEDULER"] == {"cnp": {"type": "STRICT"}, "default": {"type": "DWRR", "weight": "50"},
                                   "roce": {"type": "DWRR", "weight": "50"}}
    assert config["QUEUE"][f"{first.name}|3"] == {"scheduler": "roce", "wred_profile": "roce"}
    assert config["BUFFER_PG"][f"{first.name}|3"] == {"profile": "NULL"}  # dynamic: buffermgrd sizes it
    assert config["BUFFER_PG"][f"{first.name}|0"] == {"profile": "ingress_lossy_profile"}
    assert config["BUFFER_QUEUE"][f"{first.name}|3"] == {"profile": "egress_lossless_profile"}
    assert config["BUFFER_QUEUE"][f"{first.name}|0-2"] == {"profile": "q_lossy_profile"}
    uplink = next(p for p in leaf.ports if p.direction == "up")
    assert config["CABLE_LENGTH"]["AZURE"][first.name] == "3m"  # host DAC
    assert config["CABLE_LENGTH"]["AZURE"][uplink.name] == "40m"  # leaf-spine fibre
    assert config["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "100"}
    assert config["PFC_WD"][first.name]["detection_time"] == "200"
    assert config["PFC_WD"][first.name]["restoration_time"] == "400"
    meta = config["DEVICE_METADATA"]["localhost"]
    assert meta["hostname"] == leaf.name and meta["type"] == "BackEndToRRouter"
    assert (meta["hwsku"], meta["platform"], meta["buffer_model"]) == (
        "Mellanox-SN5600-O128", "x86_64-nvidia_sn5600-r0", "dynamic")
    assert (port["alias"], port["index"], port["lanes"], port["autoneg"]) == ("etp1a", "1", "0,1,2,3", "off")
    # 'enable' would let `pfcwd start_default` overwrite the timers above.
    assert meta["default_pfcwd_status"] == "disable"


def test_pfc_only_has_no_ecn() -> None:
    for config in _configs(_plan("pfc-only")).values():
        assert "WRED_PROFILE" not in config
        assert all("wred_profile" not in q for q in config["QUEUE"].values())
        assert parse_sonic_qos(config).ecn == ()


def test_watchdog_off_leaves_no_pfc_wd() -> None:
    fabric = _plan("watchdog-off")
    for config in _configs(fabric).values():
        assert "PFC_WD" not in config and "FLEX_COUNTER_TABLE" not in config
        assert {q["pfcwd_sw_enable"] for p, q in config["PORT_QOS_MAP"].items() if p != "global"} == {""}
        assert parse_sonic_qos(config).watchdog == (False, 0, 0, "")


# -- YANG validation -----------------------------------------------------------------------


def test_every_file_validates_against_the_yang_models(variant: tuple[str, FabricPlan], yang_dir: Path) -> None:
    from fabgen.targets.sonic.yang import validate_config_db

    _, fabric = variant
    for name, config in _configs(fabric).items():
        problems = validate_config_db(config, yang_dir, file=f"{name}/config_db.json")
        assert problems == [], "\n".join(map(str, problems))


def test_generation_validates_with_libyang_when_configured(
    pod: FabricPlan, yang_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(sonic.YANG_DIR_ENV, str(yang_dir))
    assert render_fabric(pod, ["sonic"])  # would raise OutputError on any problem
    config = sonic.config_db(pod, pod.switches[0])
    config["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,8"
    problems = sonic.validate_config_db_text("x/config_db.json", json.dumps(config))
    assert any("pfc_enable" in p.message for p in problems)


def test_generation_without_yang_dir_runs_fabgen_checks_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(sonic.YANG_DIR_ENV, raising=False)
    assert sonic.validate_config_db_text("x.json", "{}") == []
    assert "invalid JSON" in sonic.validate_config_db_text("x.json", "{")[0].message


# -- parse back ------------------------------------------------------------------------------


def test_parse_matches_the_intent_on_every_switch(variant: tuple[str, FabricPlan]) -> None:
    name, fabric = variant
    for switch in fabric.switches:
        config = sonic.config_db(fabric, switch)
        expected = qos_common.from_intent(switch.qos)
        if not switch.qos.watchdog.enabled:
            # No PFC_WD entries when off (what `pfcwd stop` leaves): the timers are not in the file.
            expected = qos_common.CommonQos(**{**expected.__dict__, "watchdog": (False, 0, 0, "")})
        for port in qos_ports(config):
            assert parse_sonic_qos(config, port) == expected, (name, switch.name, port)


def test_parse_reads_ranges_and_defaults() -> None:
    config = {
        "PORT": {"Ethernet8": {"lanes": "8", "speed": "100000"}},
        "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": "M"}, "Ethernet8": {"pfc_enable": "3,4"}},
        "DSCP_TO_TC_MAP": {"M": {"26": "3"}},
        "SCHEDULER": {"s": {"weight": "7"}, "p": {"type": "STRICT"}},
        "QUEUE": {"Ethernet8|0-2": {"scheduler": "s"}, "Ethernet8|6": {"scheduler": "p"}},
        "PFC_WD": {"Ethernet8": {"action": "drop", "detection_time": "300", "restoration_time": "300"}},
    }
    picture = parse_sonic_qos(config)
    assert picture.dscp_to_tc[26] == 3 and sum(picture.dscp_to_tc) == 3
    assert picture.lossless == {3, 4} and picture.strict == {6}
    assert picture.weights == ((0, 7), (1, 7), (2, 7))
    assert picture.watchdog == (True, 300, 300, "drop")  # no pfcwd_sw_enable: the PFC priorities
    assert picture.mtu == 9100
    with pytest.raises(ValueError):
        parse_sonic_qos({})
    assert picture.no_headroom == frozenset(), "no BUFFER_PG at all: a document that says nothing of buffers"


def test_parse_reads_which_pfc_priorities_have_a_lossless_buffer() -> None:
    """A PG is lossless by ``profile: NULL`` (dynamic model) or a profile with ``xoff`` (static), through the
    port's PFC-priority-to-PG map; a lossy profile, an unknown one or no entry leaves the priority without."""
    config = {
        "PORT_QOS_MAP": {"Ethernet0": {"pfc_enable": "2,3,4,5", "pfc_to_pg_map": "P"}},
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {"P": {"2": "3", "3": "3", "4": "4"}},  # 5: PG 5, its number
        "BUFFER_PROFILE": {"static": {"xoff": "30000", "pool": "ingress_lossless_pool"},
                           "lossy": {"pool": "ingress_lossy_pool", "size": "0"}},
        "BUFFER_PG": {"Ethernet0|3": {"profile": "NULL"}, "Ethernet0|4": {"profile": "lossy"},
                      "Ethernet0|5-6": {"profile": "static"}},
    }
    assert parse_sonic_qos(config).no_headroom == {4}
    config["BUFFER_PG"]["Ethernet0|4"] = {"profile": "[BUFFER_PROFILE|static]"}  # the older reference form
    assert parse_sonic_qos(config).no_headroom == frozenset()
    config["BUFFER_PG"]["Ethernet0|4"] = {"profile": "gone"}
    del config["BUFFER_PG"]["Ethernet0|3"]
    assert parse_sonic_qos(config).no_headroom == {2, 3, 4}


# -- buffers (headroom against SONiC's own Lua: test_sonic_headroom.py) -------------------


def _traditional(data: dict[str, Any]) -> None:
    for tier in ("leaf", "spine"):
        data["fabric"]["tiers"][tier]["buffers"] = {"model": "traditional"}


def test_traditional_model_writes_the_skus_lookup_row(pod: FabricPlan) -> None:
    fabric = plan_fabric(load_spec(edited(_traditional, "sonic-pod")))
    leaf = fabric.switches[0]
    config = sonic.config_db(fabric, leaf)
    assert config["DEVICE_METADATA"]["localhost"]["buffer_model"] == "traditional"
    # pg_profile_lookup.ini: 400000 40m -> size 303104, xon 19456, xoff 283648, threshold 0.
    assert config["BUFFER_PROFILE"]["pg_lossless_400000_40m_profile"] == {
        "pool": "ingress_lossless_pool", "size": "303104", "xon": "19456", "xoff": "283648", "dynamic_th": "0"}
    # The 3 m host cables take the table's 5 m row: buffermgrd matches CABLE_LENGTH exactly.
    assert config["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]["xoff"] == "231424"
    first, uplink = leaf.ports[0], next(p for p in leaf.ports if p.direction == "up")
    assert config["CABLE_LENGTH"]["AZURE"][first.name] == "5m"
    assert config["BUFFER_PG"][f"{first.name}|3"] == {"profile": "pg_lossless_400000_5m_profile"}
    assert config["BUFFER_PG"][f"{uplink.name}|3"] == {"profile": "pg_lossless_400000_40m_profile"}
    # Traditional pools carry the SKU's sizes (t0 on a leaf, t1 on a spine).
    assert config["BUFFER_POOL"]["ingress_lossless_pool"]["size"] == "67737959"
    spine = sonic.config_db(fabric, fabric.switch("spine-01"))
    assert spine["BUFFER_POOL"]["ingress_lossless_pool"]["size"] == "52161690"
    assert "LOSSLESS_TRAFFIC_PATTERN" not in config and "DEFAULT_LOSSLESS_BUFFER_PARAMETER" not in config
    assert sonic.check_config_db(config) == []


def test_traditional_refuses_what_its_table_cannot_cover() -> None:
    def long(data: dict[str, Any]) -> None:
        _traditional(data)
        data["fabric"]["tiers"]["spine"]["buffers"]["shared_headroom_pool"] = "16MB"
        data["qos"]["cable_length"] = {"host_leaf": "3m", "leaf_spine": "500m"}

    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(edited(long, "sonic-pod")))
    messages = [str(p) for p in info.value.problems]
    assert any("500 m cable" in m and "covers 300 m at most" in m and "qos.cable_length" in m for m in messages)
    assert any("shared headroom pool needs the dynamic model" in m for m in messages)


def test_shared_headroom_pool_is_the_pools_xoff(pod: FabricPlan) -> None:
    config = sonic.config_db(pod, pod.switch("spine-01"))
    assert config["BUFFER_POOL"]["ingress_lossless_pool"] == {
        "type": "ingress", "mode": "dynamic", "xoff": str(16 * 1024 * 1024)}
    headroom = dict(switch_buffers(pod, pod.switch("spine-01")).headroom)
    assert all(h.size == h.xon for h in headroom.values())  # what the Lua gives with a shared pool


def test_asic_presets_and_overrides() -> None:
    assert resolve_constants("Spectrum-6", None).cell_size == 256
    assert resolve_constants("spectrum6", None).pipeline_latency_kb == 42
    assert resolve_constants("spectrum2", None).cell_size == 144
    assert resolve_constants("td4", None) == SonicBuffers()  # unknown ASIC: documented defaults
    override = SonicBuffers.model_validate({"ingress_lossless_pool": "64MB"})
    merged = resolve_constants("spectrum6", override)
    assert merged.cell_size == 256 and merged.ingress_lossless_pool == 64 * 1024 * 1024


# -- fabgen-side checks ----------------------------------------------------------------------


def test_generated_files_pass_fabgen_checks(variant: tuple[str, FabricPlan]) -> None:
    _, fabric = variant
    for name, config in _configs(fabric).items():
        assert sonic.check_config_db(config, name) == []


def test_checks_catch_what_the_models_cannot(pod: FabricPlan) -> None:
    good = sonic.config_db(pod, pod.switches[0])
    port = pod.switches[0].ports[0].name

    def problems(edit: Any) -> list[str]:
        config = copy.deepcopy(good)
        edit(config)
        return [p.message for p in sonic.check_config_db(config)]

    assert any("needs profile NULL" in m for m in problems(lambda c: c["BUFFER_PG"].pop(f"{port}|3")))
    assert any("PFC does not pause" in m
               for m in problems(lambda c: c["PORT_QOS_MAP"][port].update(pfcwd_sw_enable="3,4")))
    assert any("lands in PG" in m
               for m in problems(lambda c: c["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"].update({"3": "0"})))
    assert any("unmapped" in m for m in problems(lambda c: c["DSCP_TO_TC_MAP"]["ROCE"].pop("63")))
    assert any("not a profile of egress_lossless_pool" in m
               for m in problems(lambda c: c["BUFFER_QUEUE"].update({f"{port}|3": {"profile": "egress_lossy_profile"}})))
    traditional = plan_fabric(load_spec(edited(_traditional, "sonic-pod")))
    config = sonic.config_db(traditional, traditional.switches[0])
    config["BUFFER_POOL"]["ingress_lossless_pool"]["size"] = "1000"
    assert any("reserve" in p.message for p in sonic.check_config_db(config))


def test_watchdog_outside_sonic_ranges_points_at_the_spec() -> None:
    def fast(data: dict[str, Any]) -> None:
        data["qos"]["pfc"]["watchdog"].update(detect="50ms", poll="50ms")

    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(edited(fast, "sonic-pod")))
    messages = [str(p) for p in info.value.problems]
    assert any("detect 50 ms is outside 100..5000 ms on SONiC" in m and "qos.pfc.watchdog.detect" in m
               for m in messages)
    assert any("poll 50 ms" in m for m in messages)


# -- determinism -----------------------------------------------------------------------------


def test_rendering_is_deterministic() -> None:
    first = render_fabric(_plan("pod"), ["sonic"])
    second = render_fabric(_plan("pod"), ["sonic"])
    assert first == second
    text = first["switches/spine-01/config_db.json"]
    assert "\"Ethernet0\"" in text and text.endswith("}\n")
