"""The Cumulus NVUE target: schema-valid, QoS faithful to the plan, script and YAML in agreement."""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

import fabgen.targets.qos_common as qos_common
from fabgen.errors import OutputError, SpecError
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.plan import FabricPlan
from fabgen.plan.model import Switch
from fabgen.targets.environment import environment
from fabgen.targets.nvue.config import nvue_config, nvue_script, startup_yaml
from fabgen.targets.nvue.parse import (
    _PLAIN_WORDS,
    NvueFormatError,
    _words,
    check_nvue_output,
    check_nvue_script,
    check_nvue_startup,
    load_set_tree,
    parse_nv_set,
    parse_nvue_qos,
)
from fabgen.targets.registry import target_names
from tests.helpers import edited, example

# ---- fixtures ---------------------------------------------------------------------


def _without_ecn(data: dict[str, Any]) -> None:
    for cls in data["qos"]["classes"].values():
        cls.pop("ecn", None)


def _watchdog_off(data: dict[str, Any]) -> None:
    data["qos"]["pfc"]["watchdog"]["enabled"] = False


def _lab_watchdog(data: dict[str, Any]) -> None:
    data["qos"]["pfc"]["watchdog"] = {"detect": "300ms", "restore": "400ms", "action": "drop", "poll": "100ms"}


VARIANTS = {"example": None, "pfc-only": _without_ecn, "watchdog-off": _watchdog_off}


@cache
def _plan(variant: str) -> FabricPlan:
    edit = VARIANTS[variant]
    source: Path | str = example("cumulus-pod") if edit is None else edited(edit, "cumulus-pod")
    return plan_fabric(load_spec(source))


@cache
def _files(variant: str) -> dict[str, str]:
    return render_fabric(_plan(variant), targets=["nvue"])


def _pairs(variant: str) -> list[tuple[Switch, str, str]]:
    files = _files(variant)
    return [(s, files[f"switches/{s.name}/startup.yaml"], files[f"switches/{s.name}/nvue.sh"])
            for s in _plan(variant).switches]


def _safe_load(text: str, version: tuple[int, int] | None = None) -> Any:
    yaml = YAML(typ="safe", pure=True)
    if version:
        yaml.version = version
    return yaml.load(text)


# ---- what is rendered -------------------------------------------------------------------


def test_target_is_registered_for_cumulus_switches_only() -> None:
    assert "nvue" in target_names()
    names = {s.name for s in _plan("example").switches}
    assert set(_files("example")) == {f"switches/{n}/{f}" for n in names for f in ("startup.yaml", "nvue.sh", "patch.yaml")}
    lab = plan_fabric(load_spec(example("lab")))  # EOS switches
    assert render_fabric(lab, targets=["nvue"]) == {}


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_file_passes_the_validator(variant: str) -> None:
    for path, text in _files(variant).items():
        assert path.endswith("/patch.yaml") or check_nvue_output(path, text) == [], path


@pytest.mark.parametrize("variant", VARIANTS)
def test_parsed_qos_equals_the_plan(variant: str) -> None:
    for switch, startup, _ in _pairs(variant):
        assert parse_nvue_qos(startup) == qos_common.from_intent(switch.qos), switch.name


@pytest.mark.parametrize("variant", VARIANTS)
def test_script_sets_exactly_what_startup_yaml_holds(variant: str) -> None:
    for switch, startup, script in _pairs(variant):
        assert parse_nv_set(script) == load_set_tree(startup), switch.name


def test_content_of_a_leaf() -> None:
    switch, startup, _ = _pairs("example")[0]
    tree = load_set_tree(startup)
    qos = tree["qos"]
    assert tree["system"]["hostname"] == switch.name  # and forwarding (tests/targets/nvue/test_nvue_routing.py)
    mapping = qos["mapping"]["default-global"]
    assert mapping["trust"] == "l3"
    assert sorted(map(int, mapping["dscp"])) == list(range(64))
    assert mapping["dscp"]["26"] == {"switch-priority": 3} and mapping["dscp"]["48"] == {"switch-priority": 6}
    assert qos["egress-queue-mapping"]["default-global"]["switch-priority"]["3"] == {"traffic-class": 3}
    assert qos["pfc"]["default-global"] == {"switch-priority": {"3": {}}, "tx": "enable", "rx": "enable",
                                            "cable-length": 30}
    assert qos["traffic-pool"]["default-lossless"]["switch-priority"] == {"3": {}}
    assert "3" not in qos["traffic-pool"]["default-lossy"]["switch-priority"]
    ecn = qos["congestion-control"]["default-global"]["traffic-class"]
    assert ecn["3"] == {"ecn": "enable", "min-threshold": 150000, "max-threshold": 1500000, "probability": 100,
                        "red": "disable"}
    assert ecn["0"] == ecn["6"] == {"ecn": "disable", "red": "disable"}
    sched = qos["egress-scheduler"]["default-global"]["traffic-class"]
    assert sched == {"0": {"mode": "dwrr", "bw-percent": 50}, "3": {"mode": "dwrr", "bw-percent": 50},
                     "6": {"mode": "strict"}}
    assert qos["pfc-watchdog"] == {"polling-interval": 100, "robustness": 3}
    port = switch.ports[0]
    assert tree["interface"][port.name] == {
        "type": "swp", "description": port.description,
        "link": {"mtu": 9216, "speed": "400G", "state": {"up": {}}},
        "ip": {"address": {port.address: {}}},
        "qos": {"pfc-watchdog": {"state": "enable"}},
    }
    assert tree["interface"]["lo"] == {"type": "loopback", "ip": {"address": {switch.loopback: {}}}}


def test_comments_compare_with_qos_roce_defaults() -> None:
    _, startup, script = _pairs("example")[0]
    for text in (startup, script):
        assert "Equals the NVUE `qos roce` lossless default; written out anyway." in text  # the scheduler
        assert "NVUE `qos roce` lossless default differs: PFC on switch-priority 3, cable-length 100." in text
        assert "Equals NVUE's default watchdog (100 ms x 3)" in text


def test_pfc_only_policy_marks_nothing() -> None:
    for _switch, startup, _ in _pairs("pfc-only"):
        tree = load_set_tree(startup)["qos"]
        assert all(tc["ecn"] == "disable" for tc in tree["congestion-control"]["default-global"]["traffic-class"]
                   .values())
        assert tree["pfc"]["default-global"]["switch-priority"] == {"3": {}}
        assert parse_nvue_qos(startup).ecn == ()


def test_watchdog_off_still_sets_timers_and_turns_ports_off() -> None:
    _, startup, _ = _pairs("watchdog-off")[0]
    tree = load_set_tree(startup)
    states = {c["qos"]["pfc-watchdog"]["state"] for n, c in tree["interface"].items() if n != "lo"}
    assert states == {"disable"}
    assert parse_nvue_qos(startup).watchdog == qos_common.WATCHDOG_OFF


def test_watchdog_restore_nvue_cannot_set_is_explained() -> None:
    fabric = plan_fabric(load_spec(edited(_lab_watchdog, "cumulus-pod")))
    switch = fabric.switches[0]
    startup = startup_yaml(nvue_config(switch))
    assert check_nvue_startup("startup.yaml", startup) == []
    assert load_set_tree(startup)["qos"]["pfc-watchdog"] == {"polling-interval": 100, "robustness": 3}
    assert "Spec restore 400 ms cannot be set: NVUE restores after one quiet poll (100 ms)." in startup
    # The parse reports what the switch will do, which is not what the plan asked.
    assert parse_nvue_qos(startup).watchdog == (True, 300, 100, "drop")


@pytest.mark.parametrize(("watchdog", "field", "message"), [
    ({"detect": "250ms"}, "detect", "detect 250 ms is not poll (100 ms) x robustness 1..1000"),
    ({"action": "forward"}, "action", "action forward cannot be carried out (only drop)"),
])
def test_watchdog_nvue_cannot_do_is_refused_at_validation(watchdog: dict[str, str], field: str, message: str) -> None:
    def change(data: dict[str, Any]) -> None:
        _lab_watchdog(data)
        data["qos"]["pfc"]["watchdog"].update(watchdog)

    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(edited(change, "cumulus-pod")))
    problem = info.value.problems[0]
    assert message in problem.message and problem.path == f"qos.pfc.watchdog.{field}" and problem.line


def test_policy_without_lossless_class_has_no_pfc_nor_port_watchdog() -> None:
    def lossy(data: dict[str, Any]) -> None:
        data["qos"]["classes"]["roce"]["lossless"] = False
        data["nic"]["dcqcn"]["enabled"] = False  # the NIC plan ties DCQCN to the lossless priorities
    fabric = plan_fabric(load_spec(edited(lossy, "cumulus-pod")))
    switch = fabric.switches[0]
    startup = startup_yaml(nvue_config(switch))
    assert check_nvue_startup("startup.yaml", startup) == []
    tree = load_set_tree(startup)
    assert "pfc" not in tree["qos"] and "traffic-pool" not in tree["qos"]
    assert all("qos" not in c for c in tree["interface"].values())


# ---- the files as files ---------------------------------------------------------------------


def test_startup_yaml_reads_the_same_as_yaml_1_1_and_1_2() -> None:
    for _, startup, _ in _pairs("example"):
        assert _safe_load(startup, (1, 1)) == _safe_load(startup)


def test_every_string_value_is_quoted() -> None:
    _, startup, _ = _pairs("example")[0]
    for line in startup.splitlines():
        body = line.strip()
        if body.startswith("#") or body.endswith(":") or body == "- set:":
            continue
        value = body.split(": ", 1)[1]
        if value.startswith("{"):
            continue
        assert value.isdigit() or value.startswith('"'), line


@pytest.mark.parametrize("variant", VARIANTS)
def test_scripts_pass_bash_syntax_check(variant: str, tmp_path: Path) -> None:
    for switch, _, script in _pairs(variant):
        path = tmp_path / f"{switch.name}.sh"
        path.write_text(script)
        subprocess.run(["bash", "-n", str(path)], check=True)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_scripts_pass_shellcheck(tmp_path: Path) -> None:
    paths = []
    for switch, _, script in _pairs("example"):
        path = tmp_path / f"{switch.name}.sh"
        path.write_text(script)
        paths.append(str(path))
    result = subprocess.run(["shellcheck", *paths], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


FAKE_NV = """() { printf '%s\\0' "$@" >> "$NV_LOG"; printf '\\n' >> "$NV_LOG"; }"""
"""A stand-in ``nv`` (an exported bash function): records each call as a line of NUL-separated arguments."""


def _run_script(script: str, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], list[list[str]]]:
    path = tmp_path / "nvue.sh"
    path.write_text(script)
    log = tmp_path / "nv.log"
    log.write_bytes(b"")
    env = {**os.environ, "BASH_FUNC_nv%%": FAKE_NV, "NV_LOG": str(log)}
    result = subprocess.run(["bash", str(path), *args], capture_output=True, text=True, env=env)
    calls = [line.split("\0")[:-1] for line in log.read_text().split("\n") if line]
    return result, calls


def test_script_runs_nv_set_and_applies_only_when_asked(tmp_path: Path) -> None:
    _switch, _startup, script = _pairs("example")[0]
    staged, calls = _run_script(script, tmp_path)
    assert staged.returncode == 0, staged.stderr
    assert all(call[0] == "set" for call in calls)
    assert len(calls) == len([line for line in script.splitlines() if line.startswith("nv set ")])
    applied, calls = _run_script(script, tmp_path, "--apply")
    assert applied.returncode == 0
    assert calls[-1] == ["config", "apply", "--assume-yes"]
    usage, calls = _run_script(script, tmp_path, "--bogus")
    assert usage.returncode == 2 and calls == []


# ---- untrusted strings --------------------------------------------------------------------------

HOSTILE_VALID = [
    "key: value, - item (x) @y +z =w /v",
    "  leading and trailing  ",
    "yes", "on", "null", "0x1F", "1e3", "12", ":", "a:b", ". . .", "=(", "@x",
]


@pytest.mark.parametrize("description", HOSTILE_VALID)
def test_hostile_but_valid_description_stays_one_value(description: str, tmp_path: Path) -> None:
    switch = _pairs("example")[0][0]
    port = dataclasses.replace(switch.ports[0], description=description)
    switch = dataclasses.replace(switch, ports=(port, *switch.ports[1:]))
    config = nvue_config(switch)
    startup = startup_yaml(config)
    script = nvue_script(config, environment(None))
    assert check_nvue_output("x/startup.yaml", startup) == []
    assert check_nvue_output("x/nvue.sh", script) == []
    assert load_set_tree(startup)["interface"][port.name]["description"] == description
    assert _safe_load(startup, (1, 1))[0]["set"]["interface"][port.name]["description"] == description
    assert parse_nv_set(script)["interface"][port.name]["description"] == description
    _, calls = _run_script(script, tmp_path)
    assert ["set", "interface", port.name, "description", description] in calls


@pytest.mark.parametrize("description", ["two\nlines", "tab\there", "caf\u00e9", "-rf", "x\x00y"])
def test_description_that_could_escape_is_refused(description: str) -> None:
    switch = _pairs("example")[0][0]
    port = dataclasses.replace(switch.ports[0], description=description)
    with pytest.raises(OutputError):
        nvue_config(dataclasses.replace(switch, ports=(port,)))


@pytest.mark.parametrize("description", ["$(reboot)", "`id`", "'; rm -rf / #", '"quoted"', "a\\b", "{x: [1]}"])
def test_shell_and_yaml_metacharacters_stay_literal(description: str, tmp_path: Path) -> None:
    switch = _pairs("example")[0][0]
    port = dataclasses.replace(switch.ports[0], description=description)
    config = nvue_config(dataclasses.replace(switch, ports=(port,)))
    startup = startup_yaml(config)
    assert load_set_tree(startup)["interface"][port.name]["description"] == description
    script = nvue_script(config, environment(None))
    _, calls = _run_script(script, tmp_path)
    assert ["set", "interface", port.name, "description", description] in calls


# ---- determinism ----------------------------------------------------------------------------------


def test_rendering_is_deterministic() -> None:
    """Within a process; tests/test_determinism.py renders every example across processes and hash seeds."""
    first = render_fabric(plan_fabric(load_spec(example("cumulus-pod"))), targets=["nvue"])
    second = render_fabric(plan_fabric(load_spec(example("cumulus-pod"))), targets=["nvue"])
    assert first == second == _files("example")


# ---- the validator and parsers on other input --------------------------------------------------------


def _problems(startup: str) -> list[str]:
    return [p.message for p in check_nvue_startup("s.yaml", startup)]


@pytest.mark.parametrize(("edit", "expected"), [
    (("probability: 100", "probability: 101"), "101 is outside 0..100"),
    (("mtu: 9216", "mtu: 9300"), "9300 is outside 552..9216"),
    (('trust: "l3"', 'trust: "dscp"'), "'dscp' is not one of l2, l3, port, both"),
    (("polling-interval: 100", "polling-interval: 50"), "50 is outside 100..5000"),
    (("robustness: 3", "robustness: 0"), "0 is outside 1..1000"),
    (("cable-length: 30", "cable-length: 0"), "0 is outside 1..100000"),
    (("bw-percent: 50", "bw-percent: 70"), "bw-percent of the traffic classes sums to 120; at most 100"),
    (('"26": {switch-priority: 3}', '"64": {switch-priority: 3}'), "DSCP '64' is not an integer 0..63"),
    (("min-threshold: 150000", "min-threshold: 1500000"), "min-threshold 1500000 is not below max-threshold"),
    (('speed: "400G"', 'speed: "300G"'), "'300G' is not one of"),
    (('ecn: "enable"', 'ecn: "enabled"'), "'enabled' is not one of enable, disable"),
    (("tx: \"enable\"", "tx: \"enable\"\n          xon: 5"), "unknown key 'xon'"),
    (("egress-scheduler:", "egress-schedular:"), "unknown key 'egress-schedular'"),
    (('type: "swp"', 'type: "bond"'), "PFC watchdog can only be enabled on a swp interface"),
    (("memory-percent: 50", "memory-percent: 60"), "memory-percent of the traffic pools sums to 110"),
    (("mtu: 9216", 'mtu: "9216"'), "expected an integer 552..9216, got '9216'"),
])
def test_validator_catches_planted_errors(edit: tuple[str, str], expected: str) -> None:
    _, startup, _ = _pairs("example")[0]
    assert edit[0] in startup
    messages = _problems(startup.replace(edit[0], edit[1], 1))
    assert any(expected in m for m in messages), messages


def test_validator_points_at_the_line() -> None:
    _, startup, _ = _pairs("example")[0]
    bad = startup.replace("robustness: 3", "robustness: 0")
    line = next(i for i, text in enumerate(bad.splitlines(), start=1) if "robustness: 0" in text)
    (problem,) = check_nvue_startup("s.yaml", bad)
    assert (problem.file, problem.line, problem.path) == ("s.yaml", line, "set.qos.pfc-watchdog.robustness")


def test_watchdog_without_pfc_is_rejected() -> None:
    text = "- set:\n    interface:\n      swp1: {type: swp, qos: {pfc-watchdog: {state: enable}}}\n"
    assert _problems(text) == ["PFC watchdog needs PFC on the port (qos pfc default-global switch-priority)"]


@pytest.mark.parametrize("text", ["", "a: b\n", "- set: [1]\n", "- [x\n", "- get: {}\n", "- set: {qos: {a: 1}, qos: {}}\n"])
def test_validator_reports_malformed_documents(text: str) -> None:
    assert check_nvue_startup("s.yaml", text)


def test_script_validator_rejects_unknown_commands_and_missing_strict_mode() -> None:
    _, _, script = _pairs("example")[0]
    assert check_nvue_script("nvue.sh", script) == []
    assert check_nvue_script("nvue.sh", script.replace("set -euo pipefail\n", ""))
    broken = script.replace("nv set qos pfc-watchdog robustness 3", "nv set qos pfc-watchdog robust 3")
    assert any("unknown key 'robust'" in p.message for p in check_nvue_script("nvue.sh", broken))
    ranged = script.replace("nv set qos pfc-watchdog robustness 3", "nv set qos pfc-watchdog robustness 5000")
    assert any("5000 is outside 1..1000" in p.message for p in check_nvue_script("nvue.sh", ranged))


def test_nv_set_parser_tells_keys_from_values() -> None:
    script = "\n".join([
        "nv set qos pfc default-global switch-priority 3",
        "nv set qos pfc default-global cable-length 50",
        "nv set interface swp1 ip address 10.0.0.0/31",
        "nv set interface swp1 description 'a b # c'",
        "echo not an nv line",
    ])
    assert parse_nv_set(script) == {
        "qos": {"pfc": {"default-global": {"switch-priority": {"3": {}}, "cable-length": 50}}},
        "interface": {"swp1": {"ip": {"address": {"10.0.0.0/31": {}}}, "description": "a b # c"}},
    }
    for bad in ("nv set qos pfc default-global cable-length", "nv set qos pfc default-global cable-length 1 2",
                "nv set qos nothing 1", "nv set interface swp1 description 'open"):
        with pytest.raises(NvueFormatError):
            parse_nv_set(bad)


@settings(max_examples=300)
@given(st.text(alphabet="nv set'\"\\#\t\x0b\u00a0aZ09_@%+=:,./-", max_size=30))
def test_bare_words_are_cut_as_shlex_cuts_them(tail: str) -> None:
    line = "nv set " + tail
    try:
        expected = shlex.split(line, comments=True)
    except ValueError:
        return
    assert _words(line, 1) == expected


def test_every_written_nv_set_line_is_bare_words() -> None:
    lines = [line for _, _, script in _pairs("example") for line in script.splitlines() if line.startswith("nv set ")]
    assert lines and all(_PLAIN_WORDS.fullmatch(line) for line in lines)


def test_a_remembered_nv_set_line_builds_the_same_tree() -> None:
    """Each line's placement is remembered across scripts: the trees stay those of a first reading."""
    scripts = [script for _, _, script in _pairs("example")]
    with mock.patch("fabgen.targets.nvue.parse._PLACEMENTS", {}):
        first = [parse_nv_set(script) for script in scripts]
        again = [parse_nv_set(script) for script in scripts]
        assert first == again
        first[0]["interface"]["lo"]["x"] = 1
        assert parse_nv_set(scripts[0]) == again[0] and "x" not in again[0]["interface"]["lo"]
        known = next(line for line in scripts[0].splitlines() if line.startswith("nv set interface"))
        with pytest.raises(NvueFormatError, match=r"^line 2: unknown key 'nothing'"):
            parse_nv_set(known + "\nnv set qos nothing 1\n")


def test_parse_fills_nvue_factory_defaults() -> None:
    text = "- set:\n    interface:\n      swp1: {type: swp}\n"
    picture = parse_nvue_qos(text)
    assert picture.dscp_to_tc == tuple([0] * 64)  # trust l2 by default: no DSCP classification
    assert picture.ecn == ((0, 150000, 1500000, 100),)
    assert picture.weights == tuple((tc, 12 if tc % 2 == 0 else 13) for tc in range(8))
    assert picture.strict == frozenset() and picture.lossless == frozenset()
    assert picture.watchdog == qos_common.WATCHDOG_OFF
    with_watchdog = parse_nvue_qos("- set:\n    qos: {pfc: {default-global: {switch-priority: {'3': {}}}}}\n"
                                   "    interface: {swp1: {type: swp, qos: {pfc-watchdog: {state: enable}}}}\n")
    assert with_watchdog.watchdog == (True, 300, 100, "drop")
    assert picture.mtu == 9216
    trusted = parse_nvue_qos("- set:\n    qos: {mapping: {default-global: {trust: l3}}}\n"
                             "    interface: {swp1: {type: swp}}\n")
    assert trusted.dscp_to_tc == tuple(d // 8 for d in range(64))
    with pytest.raises(NvueFormatError):
        parse_nvue_qos("- set: {}\n")
