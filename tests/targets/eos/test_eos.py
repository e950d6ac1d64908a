"""Tests for the Arista EOS target: render, syntax check, parse back, safety, determinism.

Every rendered file must pass the grammar of :mod:`fabgen.targets.eos.syntax`;
every planted mistake must be caught at its line; the QoS picture read back
from each config must equal the plan's; no value may add a line.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from conftest import EXAMPLES, require_reference
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

import fabgen.pipeline as pipeline
import fabgen.targets.eos.config as eos
from fabgen._resources import resource_dir
from fabgen.errors import SpecError
from fabgen.natural import natural_key
from fabgen.plan import FabricPlan
from fabgen.targets.environment import environment
from fabgen.targets.eos.parse import EOS_DEFAULT_DSCP_TO_TC, parse_eos_interfaces, parse_eos_qos
from fabgen.targets.eos.syntax import check_text
from fabgen.targets.qos_common import CommonQos, from_intent
from fabgen.targets.registry import target_names

LAB = EXAMPLES / "lab" / "spec.yaml"


# -- helpers ----------------------------------------------------------------------------


def lab_data() -> dict[str, Any]:
    return YAML(typ="safe").load(LAB.read_text())


def plan_from(data: dict[str, Any]) -> FabricPlan:
    out = io.StringIO()
    YAML(typ="safe").dump(data, out)
    return pipeline.plan_fabric(pipeline.load_spec(out.getvalue()))


def variant(change: Callable[[dict[str, Any]], None]) -> FabricPlan:
    data = copy.deepcopy(lab_data())
    change(data)
    return plan_from(data)


def render_all(plan: FabricPlan) -> dict[str, str]:
    return pipeline.render_fabric(plan, targets=["eos"])


def render(plan: FabricPlan) -> dict[str, str]:
    """The ``.cfg`` files only (each ``.session`` beside one is tested in test_session.py and below)."""
    return {path: text for path, text in render_all(plan).items() if path.endswith(".cfg")}


def config_of(plan: FabricPlan, name: str) -> str:
    return render(plan)[f"switches/{name}.cfg"]


def expected_picture(qos: Any) -> CommonQos:
    """The plan's picture, with the MTU EOS can actually be given."""
    return dataclasses.replace(from_intent(qos), mtu=eos.eos_mtu(qos.mtu))


def pfc_only(data: dict[str, Any]) -> None:
    del data["qos"]["classes"]["roce"]["ecn"]


def spine_override(data: dict[str, Any]) -> None:
    qos = copy.deepcopy(data["qos"])
    qos["classes"]["roce"]["ecn"] = {"min": "300KB", "max": "3000KB", "probability": 7}
    qos["classes"]["roce"]["weight"] = 60
    qos["classes"]["default"]["weight"] = 40
    qos["mtu"] = 9214
    data["fabric"]["switch_overrides"] = [{"match": "spine-*", "qos": qos}]


def sand_spines(data: dict[str, Any]) -> None:
    data["fabric"]["tiers"]["spine"]["model"] = "7800R3-36D"


LAB_PLAN = pipeline.plan_fabric(pipeline.load_spec(LAB))
VARIANTS: dict[str, Callable[[], FabricPlan]] = {
    "lab": lambda: LAB_PLAN,
    "pfc-only": lambda: variant(pfc_only),
    "spine-override": lambda: variant(spine_override),
    "sand-spines": lambda: variant(sand_spines),
    "mtu-9214": lambda: variant(lambda d: d["qos"].__setitem__("mtu", 9214)),
    "watchdog-off": lambda: variant(lambda d: d["qos"]["pfc"]["watchdog"].__setitem__("enabled", False)),
    "cnp-queue-7": lambda: variant(lambda d: d["qos"]["classes"]["cnp"].__setitem__("queue", 7)),
    "nic-200g": lambda: variant(lambda d: [n.__setitem__("speed", "200G")
                                           for n in d["host_profiles"]["lab-node"]["nics"]]),
    "dlb": lambda: variant(lambda d: d["fabric"]["load_balancing"].__setitem__("mode", "dlb")),
}


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def rendered(request: pytest.FixtureRequest) -> tuple[FabricPlan, dict[str, str]]:
    plan = VARIANTS[request.param]()
    return plan, render_all(plan)


# -- registry and coverage --------------------------------------------------------------


def test_target_is_registered_for_eos_switches_only() -> None:
    assert "eos" in target_names()
    plan = variant(lambda d: d["fabric"]["tiers"]["leaf"].update(os="sonic", hwsku="ACS-SN5600"))
    assert sorted(render_all(plan)) == ["switches/spine-01.cfg", "switches/spine-01.session",
                                        "switches/spine-02.cfg", "switches/spine-02.session"]


def test_every_eos_switch_gets_a_config(rendered: tuple[FabricPlan, dict[str, str]]) -> None:
    plan, files = rendered
    assert sorted(files) == sorted(f"switches/{s.name}{suffix}" for s in plan.switches if s.os == "eos"
                                   for suffix in (".cfg", ".session"))


# -- validity ---------------------------------------------------------------------------


def test_every_rendered_file_passes_the_checker(rendered: tuple[FabricPlan, dict[str, str]]) -> None:
    _, files = rendered
    for path, text in files.items():
        assert eos.check_eos_config(path, text) == [], path


def test_reference_avd_excerpt_passes_and_parses() -> None:
    """The RoCE excerpt AVD 6.4.0 rendered (switch.md §1.3) is valid for our grammar and reads back right."""
    text = require_reference("switch.md").read_text()
    section = text[text.index("### 1.3"):]
    block = section.split("```")[1].split("\n", 1)[1]
    config = "\n".join(line for line in block.splitlines() if line.strip() != "…") + "\nend\n"
    assert check_text(config) == []
    picture = parse_eos_qos(config)
    assert picture.lossless == {3}
    assert picture.ecn == ((3, 150 * 1024, 1500 * 1024, 20),)
    assert picture.strict == {6} and picture.weights == ((3, 90),)
    assert picture.watchdog == (True, 200, 200, "drop")
    assert picture.mtu == 9214
    assert picture.dscp_to_tc[26] == 3 and picture.dscp_to_tc[48] == 6
    assert picture.dscp_to_tc[0] == EOS_DEFAULT_DSCP_TO_TC[0] == 1


# -- required content -------------------------------------------------------------------


def test_lab_leaf_content() -> None:
    leaf = LAB_PLAN.switches[0]
    text = config_of(LAB_PLAN, leaf.name)
    lines = text.splitlines()
    assert f"hostname {leaf.name}" in lines
    for cls in leaf.qos.classes:
        for dscp in cls.dscps:
            assert any(re.fullmatch(rf"qos map dscp ([0-9 ]+ )?{dscp}( [0-9 ]+)? to traffic-class {cls.priority}", line)
                       for line in lines), dscp
    assert "qos profile FABGEN-QOS" in lines
    profile = lines[lines.index("qos profile FABGEN-QOS"):lines.index("priority-flow-control pause watchdog "
                                                                         "default timeout 0.2") - 1]
    assert profile[1:7] == [
        "   qos trust dscp",
        "   priority-flow-control on",
        "   priority-flow-control priority 3 no-drop",
        "   priority-flow-control pause watchdog",
        "   priority-flow-control pause watchdog port timer timeout 0.2 polling-interval 0.1 recovery-time 0.4",
        "   priority-flow-control pause watchdog port action drop",
    ]
    queue3 = profile[profile.index("   tx-queue 3"):profile.index("   tx-queue 6")]
    assert "      no priority" in queue3 and "      bandwidth percent 50" in queue3
    assert ("      random-detect ecn minimum-threshold 153600 bytes maximum-threshold 1536000 bytes "
            "max-mark-probability 20 weight 0") in queue3
    assert not any("random-detect drop" in line for line in lines)
    assert profile[profile.index("   tx-queue 6") + 2] == "      priority strict"
    for line in ("priority-flow-control pause watchdog default recovery-time 0.4",
                 "priority-flow-control pause watchdog default polling-interval 0.1",
                 "priority-flow-control pause watchdog action drop", "ip routing", "interface Loopback0",
                 "   ip address 10.255.0.1/32", "interface Management1", "   ip address 192.0.2.5/24"):
        assert line in lines
    assert lines[-1] == "end" and text.endswith("end\n")
    # 7060DX5 is a Tomahawk: no sand profile, and the file says why.
    assert "load-balance policies" not in lines
    assert any(line.startswith("! RoCE QP hashing not configured: 7060DX5-32") for line in lines)
    assert not any("above the EOS maximum IP MTU" in line for line in lines)  # the lab asks for 9214 itself


def test_pfc_only_policy_has_no_ecn() -> None:
    plan = VARIANTS["pfc-only"]()
    for text in render(plan).values():
        assert "random-detect" not in text
        assert "   priority-flow-control priority 3 no-drop" in text.splitlines()


def test_sand_platform_gets_qp_hashing() -> None:
    plan = VARIANTS["sand-spines"]()
    spine = config_of(plan, "spine-01").splitlines()
    start = spine.index("load-balance policies")
    assert spine[start:start + 4] == [
        "load-balance policies",
        "   load-balance sand profile default",
        "      fields udp dst-port 4791",
        "         payload bytes 5-7",
    ]
    assert "interface Management0" in spine  # modular chassis
    assert "load-balance policies" not in config_of(plan, "leaf-r0-p00-01")


def test_dlb_mode_is_the_dynamic_fib_line() -> None:
    """The lab's 7060DX5 (Tomahawk 4) has DLB: one global line, said in a note; no other trace of it."""
    text = config_of(VARIANTS["dlb"](), "spine-01")
    assert "\nip hardware fib load-balance distribution dynamic\n" in text
    assert "! dynamic load balancing: ECMP members chosen by port load" in text


def test_dlb_on_a_platform_without_it_is_refused_at_the_mode_line() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["fabric"]["load_balancing"]["mode"] = "dlb"
        data["fabric"]["tiers"]["spine"]["model"] = "7804R3"
    with pytest.raises(SpecError) as caught:
        variant(edit)
    (line,) = caught.value.lines()
    assert "mode dlb" in line and "not on 7804R3" in line and "(at fabric.load_balancing.mode)" in line


def test_spray_is_refused_on_eos() -> None:
    with pytest.raises(SpecError) as caught:
        variant(lambda d: d["fabric"]["load_balancing"].__setitem__("mode", "spray"))
    (line,) = caught.value.lines()
    assert "spray cannot be configured on EOS" in line and "(at fabric.load_balancing.mode)" in line


@pytest.mark.parametrize("model, sand, dlb, chassis", [
    ("7280R3", True, False, False), ("DCS-7280CR3K-32P4", True, False, False), ("7804R3", True, False, True),
    ("7808R3", True, False, True), ("7812R3", True, False, True), ("7816R3", True, False, True),
    ("7700R4", True, False, True), ("7800R3", True, False, True), ("7500R3", True, False, True),
    ("7060DX5-64S", False, True, False), ("7060X6-64PE", False, True, False), ("7050X3", False, False, False),
    ("7280R", True, False, False), ("9999X", False, False, False),
])
def test_platform_table(model: str, sand: bool, dlb: bool, chassis: bool) -> None:
    from fabgen.platforms import features, is_modular

    assert features(model, None) == (sand, dlb)
    assert is_modular(model) is chassis


def test_asic_override_beats_the_model() -> None:
    from fabgen.platforms import features

    assert features("7060DX5-64S", "jericho2") == (True, False)
    assert features("7280R3", "tomahawk4") == (False, True)


def test_override_gets_its_own_profile_name() -> None:
    plan = VARIANTS["spine-override"]()
    names = {s.name: eos.profile_name(plan, s.qos) for s in plan.switches}
    assert names["leaf-r0-p00-01"] == "FABGEN-QOS"
    assert re.fullmatch(r"FABGEN-QOS-[0-9A-F]{8}", names["spine-01"])
    assert names["spine-01"] == names["spine-02"]
    assert names == {s.name: eos.profile_name(p, s.qos) for p in [VARIANTS["spine-override"]()] for s in p.switches}
    spine = config_of(plan, "spine-01")
    assert f"qos profile {names['spine-01']}" in spine and "FABGEN-QOS\n" not in spine
    assert "maximum-threshold 3072000 bytes max-mark-probability 7" in spine


def test_queue_differing_from_priority_is_mapped() -> None:
    text = config_of(VARIANTS["cnp-queue-7"](), "leaf-r0-p00-01").splitlines()
    assert "qos map traffic-class 6 to tx-queue 7" in text
    assert text[text.index("   tx-queue 7") + 2] == "      priority strict"


def test_speed_follows_link_speed() -> None:
    plan = VARIANTS["nic-200g"]()
    leaf = plan.switch("leaf-r0-p00-01")
    ports = parse_eos_interfaces(config_of(plan, leaf.name))
    assert {ports[p.name].speed for p in leaf.ports if p.direction == "down"} == {"200g-4"}
    assert {ports[p.name].speed for p in leaf.ports if p.direction == "up"} == {"400g-8"}


def test_watchdog_forward_is_refused_at_validation() -> None:
    with pytest.raises(SpecError, match=r"action forward cannot be carried out .only drop. on EOS") as info:
        variant(lambda d: d["qos"]["pfc"]["watchdog"].__setitem__("action", "forward"))
    assert info.value.problems[0].path == "qos.pfc.watchdog.action"
    off = variant(lambda d: d["qos"]["pfc"]["watchdog"].update(action="forward", enabled=False))
    for text in render(off).values():
        assert eos.check_eos_config("x", text) == [] and "watchdog action" not in text


def test_classes_sharing_a_queue_are_refused_at_validation() -> None:
    with pytest.raises(SpecError, match="share egress queue 0 on EOS") as info:
        variant(lambda d: d["qos"]["classes"]["cnp"].__setitem__("queue", 0))
    assert info.value.problems[0].path == "qos.classes"


# -- parse back -------------------------------------------------------------------------


def test_qos_reads_back_as_planned(rendered: tuple[FabricPlan, dict[str, str]]) -> None:
    plan, files = rendered
    for switch in plan.switches:
        assert parse_eos_qos(files[f"switches/{switch.name}.cfg"]) == expected_picture(switch.qos), switch.name


def test_qos_reads_back_exactly_when_mtu_fits_eos() -> None:
    plan = VARIANTS["mtu-9214"]()
    files = render(plan)
    for switch in plan.switches:
        assert parse_eos_qos(files[f"switches/{switch.name}.cfg"]) == from_intent(switch.qos)
        assert "maximum IP MTU" not in files[f"switches/{switch.name}.cfg"]


def test_interfaces_read_back_as_planned(rendered: tuple[FabricPlan, dict[str, str]]) -> None:
    plan, files = rendered
    for switch in plan.switches:
        interfaces = parse_eos_interfaces(files[f"switches/{switch.name}.cfg"])
        ethernet = {n: i for n, i in interfaces.items() if n.startswith("Ethernet")}
        assert sorted(ethernet) == sorted(p.name for p in switch.ports)
        for port in switch.ports:
            got = ethernet[port.name]
            assert got.description == port.description
            assert got.address == port.address
            assert got.mtu == eos.eos_mtu(switch.qos.mtu)
            assert got.service_profile == eos.profile_name(plan, switch.qos)
            assert got.routed and got.shutdown is port.shutdown
            assert got.speed == eos.interface_speed(switch, port)
        assert interfaces["Loopback0"].address == switch.loopback
        management = [i for n, i in interfaces.items() if n.startswith("Management")]
        assert [m.address for m in management] == ([switch.mgmt] if switch.mgmt else [])


def test_parse_rejects_ambiguous_profiles() -> None:
    text = config_of(LAB_PLAN, "leaf-r0-p00-01")
    lines = text.splitlines()
    i = lines.index("interface Ethernet2/1")
    lines[lines.index("   service-profile FABGEN-QOS", i)] = "   service-profile OTHER"
    with pytest.raises(ValueError, match="different service profiles"):
        parse_eos_qos("\n".join(lines) + "\n")


# -- planted mistakes -------------------------------------------------------------------

BASE = config_of(LAB_PLAN, "leaf-r0-p00-01")
BASE_LINES = BASE.splitlines()


def _find(line: str, after: str | None = None) -> int:
    start = BASE_LINES.index(after) if after else 0
    return BASE_LINES.index(line, start)


ECN_LINE = next(line for line in BASE_LINES if "random-detect ecn" in line)
TIMER_LINE = next(line for line in BASE_LINES if "port timer" in line)
PLANTS: list[tuple[str, str, str, str]] = [
    # (what, where, new text, expected message). ``where`` is the line replaced, or '+' + the line to insert
    # after, or '-' + the line to delete (the problem is then expected on the line that moves up).
    ("mtu over EOS maximum", "   mtu 9214", "   mtu 9216", "mtu 9216 is out of range 68-9214"),
    ("tab", "   no switchport", "\tno switchport", "tab is not allowed"),
    ("trailing space", "   no switchport", "   no switchport ", "trailing whitespace"),
    ("DSCP 64", "qos map dscp 26 to traffic-class 3", "qos map dscp 64 to traffic-class 3", "DSCP 64 is out of range"),
    ("TC 8", "qos map dscp 26 to traffic-class 3", "qos map dscp 26 to traffic-class 8", "traffic class 8"),
    ("tx-queue 8", "   tx-queue 6", "   tx-queue 8", "tx-queue 8 is out of range 0-7"),
    ("unknown command", "   no switchport", "   spanning-tree portfast", "unknown command in interface mode"),
    ("indent of 2", "   no switchport", "  no switchport", "not a multiple of 3"),
    ("too deep", "   no switchport", "      no switchport", "no block is open at depth 1"),
    ("ECN with WRED drop", "+" + ECN_LINE,
     "      random-detect drop minimum-threshold 100 kbytes maximum-threshold 200 kbytes drop-probability 10 weight 0",
     "has ECN and WRED-drop"),
    ("timeout with 3 decimals", TIMER_LINE, TIMER_LINE.replace("timeout 0.2", "timeout 0.015"),
     "at most 2 decimals"),
    ("polling too slow", TIMER_LINE, TIMER_LINE.replace("polling-interval 0.1", "polling-interval 0.15"),
     "at most half"),
    ("timeout above 60 s", TIMER_LINE, TIMER_LINE.replace("timeout 0.2", "timeout 61"), "out of range 0.01-60"),
    ("unknown service profile", "   service-profile FABGEN-QOS", "   service-profile NOPE", "no 'qos profile NOPE'"),
    ("address on a switchport", "-   no switchport", "", "is a switchport"),
    ("DSCP mapped twice", "+qos map dscp 48 to traffic-class 6", "qos map dscp 26 to traffic-class 0",
     "DSCP 26 is already mapped"),
    ("escape character", "   description lab01:ens1np0", "   description lab01\x1b[2J", "U+001B"),
    ("carriage return", "hostname leaf-r0-p00-01", "hostname leaf-r0-p00-01\r", "U+000D"),
    ("blank line", "+hostname leaf-r0-p00-01", "", "blank line"),
    ("'!!' at top level", "+hostname leaf-r0-p00-01", "!! note", "belong inside a block"),
    ("'! text' in a block", "+   no switchport", "   ! note", "written '!! text'"),
    ("bandwidth 0", "      bandwidth percent 50", "      bandwidth percent 0", "percent 0 is out of range"),
    ("probability 101", ECN_LINE, ECN_LINE.replace("probability 20", "probability 101"), "out of range 1-100"),
    ("ECN weight 16", ECN_LINE, ECN_LINE.replace("weight 0", "weight 16"), "weight 16 is out of range 0-15"),
    ("ECN min above max", ECN_LINE, ECN_LINE.replace("minimum-threshold 153600", "minimum-threshold 2000000"), "must be below maximum-threshold"),
    ("ECN mixed units", ECN_LINE, ECN_LINE.replace("153600 bytes", "150 kbytes"), "in kbytes but maximum"),
    ("speed 400g-3", "   speed 400g-8", "   speed 400g-3", "speed must look like"),
    ("speed 400g-1", "   speed 400g-8", "   speed 400g-1", "not a SerDes rate"),
    ("network address", "   ip address 10.10.0.0/31", "   ip address 10.10.0.0/24", "network or broadcast"),
    ("help character", "   description lab01:ens1np0", "   description lab01?", "'?' asks the EOS CLI"),
    ("two spaces", "   no switchport", "   no  switchport", "two spaces in a row"),
    ("strict and round-robin", "+      priority strict", "      no priority", "both strict and round-robin"),
    ("duplicate line", "+   mtu 9214", "   mtu 9214", "repeats line"),
    ("bad interface name", "interface Ethernet1/1", "interface Eth1/1", "not an EOS interface name"),
    ("watchdog action", "   priority-flow-control pause watchdog port action drop",
     "   priority-flow-control pause watchdog port action forward", "must be one of drop, notify-only"),
    ("PFC priority 8", "   priority-flow-control priority 3 no-drop",
     "   priority-flow-control priority 8 no-drop", "PFC priority 8 is out of range 0-7"),
    ("loopback /31", "   ip address 10.255.0.1/32", "   ip address 10.255.0.1/31", "must be a /32"),
    ("incomplete", "   no switchport", "   no", "incomplete command"),
    ("truncated ECN", ECN_LINE, ECN_LINE.split(" max-mark")[0] + " max-mark-probability", "incomplete command"),
]


@pytest.mark.parametrize(("what", "where", "new", "message"), PLANTS, ids=[p[0] for p in PLANTS])
def test_planted_mistake_is_caught_at_its_line(what: str, where: str, new: str, message: str) -> None:
    lines = list(BASE_LINES)
    if where.startswith("+"):
        index = _find(where[1:]) + 1
        lines.insert(index, new)
    elif where.startswith("-"):
        index = _find(where[1:])
        del lines[index]
    else:
        index = _find(where)
        lines[index] = new
    problems = eos.check_eos_config("switches/leaf.cfg", "\n".join(lines) + "\n")
    at = [p for p in problems if p.line == index + 1]
    assert at, f"{what}: nothing at line {index + 1}; got {[str(p) for p in problems]}"
    assert any(message in p.message for p in at), [str(p) for p in at]
    assert all(p.file == "switches/leaf.cfg" for p in problems)
    assert str(at[0]).startswith(f"switches/leaf.cfg:{index + 1}:")


def test_missing_end_and_text_after_end() -> None:
    without = BASE.replace("!\nend\n", "!\n")
    assert any("must finish with 'end'" in p.message for p in eos.check_eos_config("x", without))
    after = BASE + "hostname again\n"
    problems = eos.check_eos_config("x", after)
    assert [(p.line, p.message) for p in problems] == [(len(BASE_LINES) + 1, "text after 'end'")]
    assert any("end with a newline" in p.message for p in eos.check_eos_config("x", BASE.rstrip("\n")))


# -- nothing can add a line -------------------------------------------------------------


def hostile(data: dict[str, Any]) -> None:
    """Names and descriptions at the edge of what the spec allows."""
    data["hosts"][0]["name"] = "x.-_end{index:02d}"
    data["hosts"][0]["overrides"] = {"x.-_end04": {"description": "end / (interface Ethernet9) = +@,:.-",
                                                   "nics_out_of_service": ["mlx5_3"]}}
    for n, nic in enumerate(data["host_profiles"]["lab-node"]["nics"]):
        nic["netdev"] = f"e.n-d_{n}"
    data["cluster"]["description"] = "end (hostname evil) = +@"


def test_hostile_but_valid_names_cannot_add_lines() -> None:
    plan = variant(hostile)
    for path, text in render(plan).items():
        assert eos.check_eos_config(path, text) == [], path
        switch = plan.switch(path.split("/")[1][:-4])
        lines = text.splitlines()
        assert sum(line.startswith("interface ") for line in lines) == len(switch.ports) + 2
        assert lines.count("end") == 1 and [line for line in lines if line.startswith("hostname")] == [
            f"hostname {switch.name}"]
        interfaces = parse_eos_interfaces(text)
        for port in switch.ports:
            assert interfaces[port.name].description == port.description
    for path, text in render_all(plan).items():
        assert not path.endswith(".session") or eos.check_eos_config(path, text) == [], path


def test_injected_line_breaks_are_neutralised() -> None:
    """Even if a plan value carried a newline, no template could turn it into a command."""
    switch = LAB_PLAN.switches[0]
    evil = "lab01\nusername evil secret 0 x\r\n   ip address 1.2.3.4/32?\t\x00"
    ports = (dataclasses.replace(switch.ports[0], description=evil), *switch.ports[1:])
    bad = dataclasses.replace(switch, ports=ports)
    text = eos.render_eos(environment(None), LAB_PLAN, bad)
    assert eos.check_eos_config("x", text) == []
    assert not any(line.startswith(("username", "   ip address 1.2.3.4")) for line in text.splitlines())
    assert parse_eos_interfaces(text)["Ethernet1/1"].description == (
        "lab01_username evil secret 0 x__ ip address 1.2.3.4/32___")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_config_text_is_always_one_safe_line(value: str) -> None:
    text = eos.config_text(value)
    assert "\n" not in text and "\r" not in text and "?" not in text
    assert text == text.strip() and len(text) <= 240
    assert all(" " <= c <= "~" for c in text)


# -- determinism ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lab", "spine-override"])
def test_render_is_deterministic(name: str) -> None:
    first = render(VARIANTS[name]())
    second = render(VARIANTS[name]())
    assert first == second
    assert list(first) == sorted(first)


def test_units() -> None:
    assert [eos.seconds(ms) for ms in (200, 10, 5, 1000, 60000, 15)] == ["0.2", "0.01", "0.005", "1", "60", "0.015"]
    assert eos.eos_mtu(9216) == 9214 and eos.eos_mtu(9000) == 9000
    assert natural_key("Ethernet2/1") < natural_key("Ethernet10/1") < natural_key("Ethernet10/1/2")
    assert natural_key("10.0.0.9") < natural_key("10.0.0.10") and natural_key("1a") < natural_key("a1")


def test_templates_are_one_per_feature() -> None:
    entry = (resource_dir("templates") / "eos" / "switch.cfg.j2").read_text()
    includes = re.findall(r'\{% include "eos/([a-z-]+\.j2)" %\}', entry)
    assert includes[:3] == ["header.j2", "hostname.j2", "qos-maps.j2"] and includes[-1] == "end.j2"
    assert len(includes) == len(set(includes)) >= 10


def test_profile_names_ignore_key_order() -> None:
    """A reordered spec (classes, keys) renders the same bytes, override profile names included."""

    def reordered(data: dict[str, Any]) -> None:
        spine_override(data)
        for qos in (data["qos"], data["fabric"]["switch_overrides"][0]["qos"]):
            qos["classes"] = dict(reversed(list(qos["classes"].items())))
        for key in list(data)[::-1]:
            data[key] = data.pop(key)

    assert render(variant(reordered)) == render(VARIANTS["spine-override"]())


# -- router bgp grammar ---------------------------------------------------------------------


_R3_PEER = LAB_PLAN.switch("leaf-r3-p00-01").bgp.neighbors[0].address  # type: ignore[union-attr]


@pytest.mark.parametrize("old, new, needle", [
    (r"maximum-paths (\d+) ecmp \d+", r"maximum-paths \1 ecmp 1", "ecmp 1 must be at least maximum-paths"),
    (r"maximum-paths \d+ ecmp \d+", "maximum-paths 601 ecmp 601", "maximum-paths 601 is out of range 1-600"),
    (r"(?m)^   neighbor (\S+) remote-as \d+\n", "", "has no 'remote-as' in this router bgp"),
    (r"router bgp \d+", "router bgp 4294967296", "AS number 4294967296 is out of range"),
    (r"network 10\.255\.0\.4/32", "network 10.255.0.4/24", "has host bits set"),
    (r"   no bgp default ipv4-unicast\n", "   no bgp default ipv4-unicast\n   timers bgp 3 2\n",
     "hold time 2 is out of range"),
    (r"   no bgp default ipv4-unicast\n",
     f"   no bgp default ipv4-unicast\n   neighbor {_R3_PEER} bfd interval 300 min-rx 300 multiplier 3\n",
     f"BFD timers for {_R3_PEER} without 'neighbor {_R3_PEER} bfd'"),
    (r"      neighbor (\S+) activate", r"   neighbor \1 activate", "expected 'remote-as', found 'activate'"),
    (r"router-id 10\.255\.0\.4", "router-id 10.255.0.256", "is not an IPv4 address"),
])
def test_router_bgp_grammar_catches_a_planted_error(old: str, new: str, needle: str) -> None:
    text = config_of(LAB_PLAN, "leaf-r3-p00-01")
    assert check_text(text) == []
    broken, count = re.subn(old, new, text, count=1)
    assert count == 1, old
    issues = check_text(broken)
    assert any(needle in i.message for i in issues), [i.message for i in issues]


def test_a_second_router_bgp_is_refused() -> None:
    text = config_of(LAB_PLAN, "spine-01")
    block = text[text.index("router bgp "):text.index("\n!\nend")]
    issues = check_text(text.replace("\n!\nend", f"\n!\n{block.replace('router bgp 4200010000', 'router bgp 65000')}\n!\nend"))
    assert any("a second 'router bgp'" in i.message for i in issues), [i.message for i in issues]


def test_router_bgp_says_what_the_plan_says() -> None:
    for switch in LAB_PLAN.switches:
        bgp = switch.bgp
        assert bgp is not None
        lines = config_of(LAB_PLAN, switch.name).splitlines()
        assert f"router bgp {bgp.asn}" in lines and f"   router-id {bgp.router_id}" in lines
        assert f"   maximum-paths {bgp.maximum_paths} ecmp {bgp.maximum_paths}" in lines
        for n in bgp.neighbors:
            assert f"   neighbor {n.address} remote-as {n.remote_asn}" in lines
            assert f"      neighbor {n.address} activate" in lines
        assert [x[len("      network "):] for x in lines if x.startswith("      network ")] == list(bgp.networks)
        assert ("   bgp bestpath as-path multipath-relax" in lines) == bgp.multipath_relax


def test_maximum_paths_above_eos_range_is_refused_at_its_line() -> None:
    def edit(data: dict[str, Any]) -> None:
        data["fabric"]["routing"] = {"maximum_paths": 700}
    with pytest.raises(SpecError) as caught:
        variant(edit)
    (line,) = caught.value.lines()
    assert "maximum-paths 700 is above EOS's 600" in line and "(at fabric.routing.maximum_paths)" in line
