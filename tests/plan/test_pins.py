"""Pinning: fabric.devices and fabric.ipam over positional names and addresses; conflicts at their lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.plan import FabricPlan
from fabgen.plan.pins import SWITCH_FILE_SUFFIXES
from tests.helpers import EXAMPLE_NAMES, edited, example, run_cli, spec_data


def _write(tmp_path: Path, edit: Any, ipam: tuple[str, str] | None = None) -> Path:
    def with_ipam(d: dict[str, Any]) -> None:
        edit(d)
        if ipam is not None:
            d["fabric"]["ipam"] = ipam[0]

    if ipam is not None:
        (tmp_path / ipam[0]).write_text(ipam[1])
    spec = tmp_path / "spec.yaml"
    spec.write_text(edited(with_ipam))
    return spec


def _plan(tmp_path: Path, edit: Any, ipam: tuple[str, str] | None = None) -> FabricPlan:
    return plan_fabric(load_spec(_write(tmp_path, edit, ipam)))


def _refused(tmp_path: Path, edit: Any, ipam: tuple[str, str] | None = None) -> list[str]:
    with pytest.raises(SpecError) as info:
        _plan(tmp_path, edit, ipam)
    return [str(p) for p in info.value.problems]


def _devices(**pins: dict[str, str]) -> Any:
    return lambda d: d["fabric"].update(devices=pins)


def _line(path: Path, needle: str) -> int:
    """1-based line of the first row containing ``needle``."""
    return next(n for n, row in enumerate(path.read_text().splitlines(), 1) if needle in row)


BASE = plan_fabric(load_spec(edited(lambda d: None)))


def test_spec_pins_move_only_the_pinned_devices(tmp_path: Path) -> None:
    plan = _plan(tmp_path, _devices(**{"spine-01": {"loopback": "10.255.0.200", "mgmt": "192.0.2.200"},
                                       "lab03": {"mgmt": "192.0.2.201"}}))
    assert plan.switch("spine-01").loopback == "10.255.0.200/32" and plan.switch("spine-01").mgmt == "192.0.2.200/24"
    assert plan.switch("spine-01").bgp.router_id == "10.255.0.200"  # type: ignore[union-attr]
    assert plan.host("lab03").mgmt == "192.0.2.201/24"
    for switch in plan.switches:
        if switch.name != "spine-01":
            assert (switch.loopback, switch.mgmt) == (BASE.switch(switch.name).loopback, BASE.switch(switch.name).mgmt)
    assert [h.mgmt for h in plan.hosts if h.name != "lab03"] == [h.mgmt for h in BASE.hosts if h.name != "lab03"]


def test_a_renamed_switch_keeps_its_position(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["fabric"]["devices"] = {"leaf-r0-p00-01": {"name": "rtsw-a01"}}
        d["fabric"]["cabling"] = [{"a": "lab01:ens1np0", "b": "rtsw-a01:Ethernet2/1"},
                                  {"a": "lab02:ens1np0", "b": "rtsw-a01:Ethernet1/1"}]

    plan = _plan(tmp_path, edit)
    names = {s.name for s in plan.switches}
    assert "rtsw-a01" in names and "leaf-r0-p00-01" not in names
    renamed, before = plan.switch("rtsw-a01"), BASE.switch("leaf-r0-p00-01")
    assert (renamed.loopback, renamed.mgmt, renamed.bgp.asn) == (before.loopback, before.mgmt, before.bgp.asn)  # type: ignore[union-attr]
    assert plan.host("lab01").nics[0].leaf == "rtsw-a01" and plan.host("lab01").nics[0].leaf_port == "Ethernet2/1"
    assert any(p.peer_device == "rtsw-a01" for p in plan.switch("spine-01").ports)


@pytest.mark.parametrize(("pins", "message"), [
    ({"spine-01": {"loopback": "10.255.0.1"}}, "spine-01: loopback 10.255.0.1 is also leaf-r0-p00-01's"),
    ({"spine-01": {"mgmt": "192.0.2.1"}}, "spine-01: mgmt 192.0.2.1 is also lab01's"),
    ({"spine-01": {"loopback": "10.9.9.9"}}, "loopback 10.9.9.9 is outside its pool 10.255.0.0/24"),
    ({"lab01": {"loopback": "10.255.0.99"}}, "lab01 is a host: hosts have no loopback"),
    ({"lab01": {"name": "x1"}}, "lab01 is a host: its name comes from its host group"),
    ({"spine-09": {"mgmt": "192.0.2.99"}}, "fabric.devices names 'spine-09', which this plan does not have"),
    ({"spine-01": {"name": "spine-02"}}, "spine-01 cannot be renamed spine-02: spine-02 already has that name"),
    ({"spine-01": {"name": "lab01"}}, "spine-01 cannot be renamed lab01: lab01 already has that name"),
    # a name whose files would be another switch's: refused here, not halfway through generate's writing
    ({"spine-01": {"name": "leaf-r0-p00-01.install.json"}},
     "leaf-r0-p00-01.install.json cannot be a switch name beside leaf-r0-p00-01"),
    ({"spine-01": {"name": "leaf-r0-p00-01.cfg"}}, "leaf-r0-p00-01's switches/leaf-r0-p00-01.cfg is where"),
    ({"spine-02": {"name": "core.session"}, "spine-01": {"name": "core"}}, "core.session cannot be a switch name"),
])
def test_conflicting_pins_are_refused_at_their_line(tmp_path: Path, pins: dict[str, Any], message: str) -> None:
    (problem,) = _refused(tmp_path, _devices(**pins))
    assert message in problem
    device = next(iter(pins))
    field = next(iter(pins[device]))
    rows = (tmp_path / "spec.yaml").read_text().splitlines()
    at_devices = next(n for n, row in enumerate(rows) if row.strip() == "devices:")
    at_device = next(n for n in range(at_devices, len(rows)) if rows[n].strip() == f"{device}:")
    at_field = next(n for n in range(at_device, len(rows)) if rows[n].strip().startswith(f"{field}:"))
    expected = at_field + 1  # an unknown device: its mapping, which starts on the same line
    assert int(problem.split(":")[1]) == expected, (problem, rows[at_devices:at_field + 1])


def test_two_pins_on_one_address(tmp_path: Path) -> None:
    (problem,) = _refused(tmp_path, _devices(**{"spine-01": {"loopback": "10.255.0.100"},
                                               "spine-02": {"loopback": "10.255.0.100"}}))
    assert "spine-02: loopback 10.255.0.100 is also spine-01's" in problem


CSV = "device,loopback,mgmt\nspine-01,10.255.0.150,192.0.2.150\nlab02,,192.0.2.151\n"


def test_ipam_csv_pins_addresses(tmp_path: Path) -> None:
    plan = _plan(tmp_path, lambda d: None, ("ipam.csv", CSV))
    assert plan.switch("spine-01").loopback == "10.255.0.150/32"
    assert plan.switch("spine-01").mgmt == "192.0.2.150/24" and plan.host("lab02").mgmt == "192.0.2.151/24"
    assert plan.switch("spine-02").loopback == BASE.switch("spine-02").loopback


@pytest.mark.parametrize(("text", "line", "col", "message"), [
    (CSV + "spine-02,10.1.1.1,\n", 4, 2, "spine-02: loopback 10.1.1.1 is outside its pool"),
    (CSV + "spine-07,,192.0.2.9\n", 4, 3, "spine-07 is not a device of this plan"),
    (CSV + "spine-02,,192.0.2.150\n", 4, 3, "spine-02: mgmt 192.0.2.150 is also spine-01's"),
    (CSV + "spine-01,10.255.0.151,\n", 4, 2, "spine-01 has a second loopback (first at line 2)"),
    (CSV + "spine-02,not-an-ip,\n", 4, 2, "spine-02: loopback 'not-an-ip' is not an IPv4 address"),
    ("name,loopback\n", 1, 1, "needs a header with a 'device' column"),
    # a record the csv module itself refuses: located, never a traceback
    (CSV + 'spine-02,"' + "x" * 200_000 + '"\n', 4, 1, "malformed CSV: field larger than field limit"),
    ('device,"loopback\n' + "x" * 200_000 + '"\n', 2, 1, "malformed CSV: field larger than field limit"),
])
def test_ipam_csv_conflicts_point_at_the_row(tmp_path: Path, text: str, line: int, col: int, message: str) -> None:
    (problem,) = _refused(tmp_path, lambda d: None, ("ipam.csv", text))
    assert problem.startswith(f"{tmp_path / 'ipam.csv'}:{line}:{col}: ") and message in problem


def test_ipam_yaml_pins_and_locates(tmp_path: Path) -> None:
    good = "spine-02:\n  loopback: 10.255.0.160\n  mgmt: 192.0.2.160\n"
    plan = _plan(tmp_path, lambda d: None, ("ipam.yaml", good))
    assert plan.switch("spine-02").loopback == "10.255.0.160/32"
    bad = good + "leaf-r1-p00-01:\n  mgmt: 198.51.100.7\n"
    (problem,) = _refused(tmp_path, lambda d: None, ("ipam.yaml", bad))
    assert problem.startswith(f"{tmp_path / 'ipam.yaml'}:5:9: ") and "outside its pool 192.0.2.0/24" in problem


def test_pinned_in_both_spec_and_ipam_is_refused(tmp_path: Path) -> None:
    (problem,) = _refused(tmp_path, _devices(**{"spine-01": {"loopback": "10.255.0.170"}}), ("ipam.csv", CSV))
    assert "spine-01's loopback is pinned in the spec too" in problem and ":2:2: " in problem


def test_missing_ipam_file_is_refused_at_the_spec_line(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(edited(lambda d: d["fabric"].update(ipam="nowhere.csv")))
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    (problem,) = info.value.problems
    assert problem.line == _line(spec, "ipam:") and "cannot read the IPAM file nowhere.csv" in problem.message


def test_a_fifo_as_ipam_file_is_refused_without_hanging(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "ipam.csv")
    spec = tmp_path / "spec.yaml"
    spec.write_text(edited(lambda d: d["fabric"].update(ipam="ipam.csv")))
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    (problem,) = info.value.problems
    assert problem.line == _line(spec, "ipam:") and "not a regular file" in problem.message


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_switch_file_suffixes_are_every_file_beside_a_switch(name: str) -> None:
    """:data:`~fabgen.plan.pins.SWITCH_FILE_SUFFIXES` is complete: every path under ``switches/`` of every
    example is a switch's name plus one of them, or inside a directory of a switch's name."""
    plan = plan_fabric(load_spec(example(name)))
    names = {s.name for s in plan.switches}
    for path in render_fabric(plan):
        if not path.startswith("switches/"):
            continue
        rest = path.removeprefix("switches/")
        if "/" in rest:
            assert rest.split("/", 1)[0] in names, path
        else:
            assert any(rest.endswith(suffix) and rest[:-len(suffix)] in names for suffix in SWITCH_FILE_SUFFIXES), path


def test_a_pinned_name_clash_refused_by_validate_is_what_generate_would_fail_on(tmp_path: Path) -> None:
    """On SONiC a switch's files are a directory of its name: a spine named after a leaf's install map would be
    written over it (generate stopped with the writer's 'File exists' at a temporary path before the refusal)."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(edited(_devices(**{"spine-01": {"name": "leaf-r0-p00-01.install.json"}}), "sonic-pod"))
    code, _, err = run_cli("validate", str(spec))
    assert code == 2 and f"{spec}:" in err and "(at fabric.devices.spine-01.name)" in err, err
    code, _, err = run_cli("generate", str(spec), "-o", str(tmp_path / "out"))
    assert code == 2 and "File exists" not in err and not (tmp_path / "out").exists(), err


def test_a_device_pinned_to_the_management_gateway_is_refused(tmp_path: Path) -> None:
    """The gateway is the management network's router; a switch or host given its address would answer for it
    (sonic-pod's switches would route to themselves), so neither a spec pin nor an IPAM row may take it."""
    gateway = spec_data("sonic-pod")["fabric"]["addressing"]["mgmt_gateway"]
    spec = tmp_path / "spec.yaml"
    spec.write_text(edited(_devices(**{"spine-01": {"mgmt": gateway}}), "sonic-pod"))
    line = _line(spec, f"mgmt: {gateway}")
    code, _, err = run_cli("validate", str(spec))
    assert code == 2 and err.startswith(f"{spec}:{line}:") and "is fabric.addressing.mgmt_gateway" in err, err

    def with_ipam(d: dict[str, Any]) -> None:
        d["fabric"]["ipam"] = "ipam.csv"

    (tmp_path / "ipam.csv").write_text(f"device,mgmt\ngpu02,{gateway}\n")
    spec.write_text(edited(with_ipam, "sonic-pod"))
    code, _, err = run_cli("validate", str(spec))
    assert code == 2 and err.startswith(f"{tmp_path / 'ipam.csv'}:2:") and "gpu02: mgmt" in err, err
