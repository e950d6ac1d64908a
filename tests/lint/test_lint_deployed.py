"""``lint --deployed``: semantic drift between a collected tree and the plan, for every switch OS and NCCL files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lint_support import base_path, write_deployed

from fabgen.cli import main
from fabgen.errors import FabgenError
from fabgen.lint import lint
from fabgen.lint.deployed import read_deployed
from fabgen.lint.engine import run_lint
from fabgen.pipeline import load_spec, plan_fabric


def site(base: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    spec = load_spec(base_path(base))
    fabric = plan_fabric(spec)
    root = tmp_path / "collected"
    write_deployed(fabric, root)
    return spec, fabric, root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("base", ["lab", "sonic-pod", "cumulus-pod"])
def test_a_site_running_the_plan_has_no_drift(base: str, tmp_path: Path) -> None:
    spec, fabric, root = site(base, tmp_path)
    result = run_lint(spec, fabric, deployed=root)
    assert result.findings == []
    assert result.notes == (), "every switch OS of the examples is read back"
    found = read_deployed(root, fabric)
    assert len(found.switches) == len(fabric.switches)
    assert set(found.hosts) == {h.name for h in fabric.hosts}


def test_edited_eos_dscp_map(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    config = root / "switches" / "leaf-r1-p00-01.cfg"
    edit(config, "qos map dscp 26 to traffic-class 3", "qos map dscp 26 to traffic-class 1")
    findings = lint(spec, fabric, deployed=root)
    assert [(f.code, Path(f.file).name) for f in findings] == [("FG501", "leaf-r1-p00-01.cfg")]
    assert "DSCP 26 -> TC 1 (plan 3)" in findings[0].message
    line = config.read_text().splitlines()[findings[0].line - 1]
    assert line.startswith("qos map dscp"), "the finding points at the DSCP map"


def test_edited_sonic_watchdog_and_pfc(tmp_path: Path) -> None:
    spec, fabric, root = site("sonic-pod", tmp_path)
    path = root / "switches" / "spine-02" / "config_db.json"
    data = json.loads(path.read_text())
    for key, entry in data["PORT_QOS_MAP"].items():
        if key != "global":
            entry["pfc_enable"] = "3,4"
    data["PFC_WD"] = {k: {**v, "detection_time": "800"} if k != "GLOBAL" else v for k, v in data["PFC_WD"].items()}
    path.write_text(json.dumps(data, indent=4))
    (finding,) = lint(spec, fabric, deployed=root)
    assert finding.code == "FG501"
    assert "PFC no-drop priorities {3, 4} (plan {3})" in finding.message
    assert "PFC watchdog" in finding.message


def _no_qos_map(data: dict) -> None:  # type: ignore[type-arg]
    del data["PORT_QOS_MAP"]["Ethernet8"]


def _no_wred(data: dict) -> None:  # type: ignore[type-arg]
    del data["QUEUE"]["Ethernet8|3"]["wred_profile"]


def _small_mtu(data: dict) -> None:  # type: ignore[type-arg]
    data["PORT"]["Ethernet8"]["mtu"] = "1500"


def _no_pfc(data: dict) -> None:  # type: ignore[type-arg]
    data["PORT_QOS_MAP"]["Ethernet8"]["pfc_enable"] = ""


def _lossy_pg(data: dict) -> None:  # type: ignore[type-arg]
    """RoCE's priority group moved to the lossy profile: PFC still on, but no headroom behind it."""
    data["BUFFER_PG"]["Ethernet8|3"]["profile"] = "ingress_lossy_profile"


def _no_pg(data: dict) -> None:  # type: ignore[type-arg]
    del data["BUFFER_PG"]["Ethernet8|3"]


@pytest.mark.parametrize("change", [_no_qos_map, _no_wred, _small_mtu, _no_pfc, _lossy_pg, _no_pg])
def test_one_sonic_port_edited_is_drift_on_that_port(tmp_path: Path, change) -> None:  # type: ignore[no-untyped-def]
    """SONiC binds QoS port by port: an edit on a port other than the first (whose picture used to stand for
    the switch) is named by port, the rest of the switch still as planned."""
    spec, fabric, root = site("sonic-pod", tmp_path)
    path = root / "switches" / "leaf-r0-p00-01" / "config_db.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=4))
    (finding,) = lint(spec, fabric, deployed=root)
    assert finding.code == "FG501" and Path(finding.file).parts[-2] == "leaf-r0-p00-01"
    assert finding.message.endswith("runs other QoS than planned: ports without that QoS (missing, or other than "
                                    "on the rest): Ethernet8"), finding.message


def test_sonic_pfc_without_its_lossless_buffer_is_drift(tmp_path: Path) -> None:
    """Every port's RoCE priority group on the lossy profile: PFC still says no-drop, but with no headroom
    behind the pause the switch drops RoCE, which pfc_enable alone would not show."""
    spec, fabric, root = site("sonic-pod", tmp_path)
    path = root / "switches" / "spine-01" / "config_db.json"
    data = json.loads(path.read_text())
    for key, entry in data["BUFFER_PG"].items():
        if key.endswith("|3"):
            entry["profile"] = "ingress_lossy_profile"
    path.write_text(json.dumps(data, indent=4))
    (finding,) = lint(spec, fabric, deployed=root)
    assert "PFC priorities without a lossless buffer (BUFFER_PG) {3} (plan {})" in finding.message, finding.message
    assert '"BUFFER_PG"' in path.read_text().splitlines()[finding.line - 1]


def test_a_sonic_port_the_plan_leaves_bare_is_counted_not_named(tmp_path: Path) -> None:
    spec, fabric, root = site("sonic-pod", tmp_path)
    path = root / "switches" / "leaf-r0-p00-01" / "config_db.json"
    data = json.loads(path.read_text())
    for table in ("PORT_QOS_MAP", "PFC_WD", "PORT"):
        data[table]["Ethernet999x"] = dict(data[table]["Ethernet8"])
    for queue in ("0", "3", "6"):
        data["QUEUE"][f"Ethernet999x|{queue}"] = dict(data["QUEUE"][f"Ethernet8|{queue}"])
    for pg in ("0", "3"):
        data["BUFFER_PG"][f"Ethernet999x|{pg}"] = dict(data["BUFFER_PG"][f"Ethernet8|{pg}"])
    path.write_text(json.dumps(data, indent=4))
    (finding,) = lint(spec, fabric, deployed=root)
    assert "1 port the plan gives no QoS carry it" in finding.message and "999x" not in finding.message


_PROFILED_PORT = "   ip address 10.10.0.2/31\n   service-profile FABGEN-QOS\n"
"""Ethernet2/1 of the lab's first leaf, as fabgen writes it."""


@pytest.mark.parametrize(("base", "file", "old", "new", "says"), [
    # EOS: the profile's trust, a traffic class's tx-queue, one port without the profile
    ("lab", "leaf-r0-p00-01.cfg", "   qos trust dscp\n", "   qos trust cos\n", "trust pcp (plan dscp)"),
    ("lab", "leaf-r0-p00-01.cfg", "qos map traffic-class 3 to tx-queue 3", "qos map traffic-class 3 to tx-queue 2",
     "egress queues: TC 3 -> queue 2 (plan 3)"),
    ("lab", "leaf-r0-p00-01.cfg", "   ip address 10.10.0.2/31\n   service-profile FABGEN-QOS\n",
     "   ip address 10.10.0.2/31\n", "ports without that QoS (missing, or other than on the rest): Ethernet2/1"),
    # EOS: a QoS line on one interface itself, which takes that port's QoS away from the profile's
    *(("lab", "leaf-r0-p00-01.cfg", _PROFILED_PORT, _PROFILED_PORT + own, "ports without that QoS (missing, or "
       "other than on the rest): Ethernet2/1") for own in ("   qos trust cos\n", "   no priority-flow-control\n",
                                                          "   priority-flow-control priority 3 drop\n",
                                                          "   tx-queue 3\n      no random-detect ecn\n")),
    # NVUE: RoCE's switch priority sent to another traffic class, trust taken off DSCP
    ("cumulus-pod", "leaf-r0-p00-01/startup.yaml", '"3": {traffic-class: 3}', '"3": {traffic-class: 2}',
     "egress queues: TC 3 -> queue 2 (plan 3)"),
    ("cumulus-pod", "leaf-r0-p00-01/startup.yaml", 'trust: "l3"', 'trust: "port"', "trust none (plan dscp)"),
])
def test_trust_queues_and_bare_ports_are_drift(tmp_path: Path, base: str, file: str, old: str, new: str,
                                               says: str) -> None:
    """What the QoS picture did not hold before: a port's trust, the queue a traffic class leaves by, and (EOS)
    an Ethernet port without the service-profile, each of which makes RoCE lossy or unmarked on the port."""
    spec, fabric, root = site(base, tmp_path)
    edit(root / "switches" / file, old, new)
    findings = lint(spec, fabric, deployed=root)
    assert [f.code for f in findings] == ["FG501"], findings
    assert says in findings[0].message, findings[0].message


def test_an_eos_interface_line_that_is_not_qos_is_not_drift(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    edit(root / "switches" / "leaf-r0-p00-01.cfg", _PROFILED_PORT, _PROFILED_PORT + "   load-interval 5\n")
    assert lint(spec, fabric, deployed=root) == []


def test_a_sonic_traffic_class_sent_to_another_queue_is_drift(tmp_path: Path) -> None:
    spec, fabric, root = site("sonic-pod", tmp_path)
    path = root / "switches" / "spine-01" / "config_db.json"
    data = json.loads(path.read_text())
    (name,) = data["TC_TO_QUEUE_MAP"]
    data["TC_TO_QUEUE_MAP"][name]["3"] = "2"
    path.write_text(json.dumps(data, indent=4))
    (finding,) = lint(spec, fabric, deployed=root)
    assert "egress queues: TC 3 -> queue 2 (plan 3)" in finding.message, finding.message


def test_changed_nccl_variables(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    conf = root / "hosts" / "lab03" / "nccl.conf"
    edit(conf, "NCCL_IB_TC=106", "NCCL_IB_TC=96")
    edit(conf, "NCCL_IB_RETRY_CNT=7\n", "")
    (root / "hosts" / "lab03" / "nccl.env").write_text("NCCL_IB_TC=106\nNCCL_DEBUG=INFO\n")
    findings = lint(spec, fabric, deployed=root, config={"select": ["FG5"]})
    messages = [f.message for f in findings]
    # the deployed 96 is not shown: the plan has no such value, and a report must not leak what a file holds
    assert "lab03: nccl.conf has another NCCL_IB_TC, the plan NCCL_IB_TC=106" in messages
    assert "lab03: nccl.conf lacks NCCL_IB_RETRY_CNT (the plan sets 7)" in messages
    assert "lab03: nccl.env sets NCCL_DEBUG, which the plan does not have" in messages
    assert not any("96" in m or "INFO" in m for m in messages)
    assert all(f.code == "FG502" for f in findings)


def test_deployed_values_are_checked_like_hand_set_ones(tmp_path: Path) -> None:
    spec, fabric, root = site("lab", tmp_path)
    edit(root / "hosts" / "lab01" / "nccl.conf", "NCCL_IB_TC=106", "NCCL_IB_TC=0106")
    codes = sorted(f.code for f in lint(spec, fabric, deployed=root))
    assert codes == ["FG403", "FG502"]


def test_unreadable_and_stray_files(tmp_path: Path) -> None:
    spec, fabric, root = site("sonic-pod", tmp_path)
    (root / "switches" / "leaf-r0-p00-01" / "config_db.json").write_text('{"PORT": ')
    shutil.copytree(root / "hosts" / "gpu01", root / "hosts" / "gpu99")
    (root / "switches" / "old-leaf.cfg").write_text("hostname old-leaf\n")
    findings = lint(spec, fabric, deployed=root)
    assert sorted((f.code, f.message.split(":")[0]) for f in findings) == [
        ("FG503", "hosts/gpu99 is not a device of the plan"),
        ("FG503", "switches/old-leaf.cfg is not a device of the plan"),
        ("FG504", "cannot read this configuration back"),
    ]


@pytest.mark.parametrize(("old", "new", "says"), [
    # Decimal refuses these with an ArithmeticError, not a ValueError: it used to escape as a traceback
    ("port timer timeout 0.2", "port timer timeout SECRET", "watchdog time '...' is not a number of seconds"),
    ("port timer timeout 0.2", "port timer timeout Infinity", "watchdog time '...' s is not a whole number"),
    ("port timer timeout 0.2", "port timer timeout sNaN", "watchdog time '...' is not a number of seconds"),
    # names the reader could not agree on are quoted, so that a value the plan lacks is not echoed
    ("   ip address 10.10.0.2/31\n   service-profile FABGEN-QOS\n",
     "   ip address 10.10.0.2/31\n   service-profile SECRET-QOS\n", "carry different service profiles: '...', '...'"),
])
def test_an_eos_file_the_reader_refuses_is_a_finding_without_its_values(tmp_path: Path, old: str, new: str,
                                                                        says: str) -> None:
    spec, fabric, root = site("lab", tmp_path)
    edit(root / "switches" / "leaf-r0-p00-01.cfg", old, new)
    (finding,) = lint(spec, fabric, deployed=root)
    assert finding.code == "FG504" and says in finding.message, finding.message
    assert "SECRET" not in finding.message and "Infinity" not in finding.message


def test_every_switch_os_reads_back() -> None:
    """``lint --deployed`` finds each OS's reader in the registry: no OS the spec accepts is left unread."""
    from typing import get_args

    from fabgen.spec.fabric import SwitchOs
    from fabgen.targets.registry import read_backs

    assert set(read_backs()) == set(get_args(SwitchOs))


def test_not_a_deployed_tree(tmp_path: Path) -> None:
    spec = load_spec(base_path("lab"))
    with pytest.raises(FabgenError, match="no such directory"):
        lint(spec, deployed=tmp_path / "absent")
    with pytest.raises(FabgenError, match="neither hosts/ nor switches/"):
        lint(spec, deployed=tmp_path)


def test_cli_deployed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, root = site("lab", tmp_path)
    spec_file = str(base_path("lab"))
    assert main(["lint", spec_file, "--deployed", str(root)]) == 0
    edit(root / "hosts" / "lab02" / "nccl.conf", "NCCL_IB_TC=106", "NCCL_IB_TC=96")
    capsys.readouterr()
    assert main(["lint", spec_file, "--deployed", str(root), "--format", "parsable"]) == 1
    out = capsys.readouterr().out
    assert f"{root}/hosts/lab02/nccl.conf:3:1: [error] lab02: nccl.conf has another NCCL_IB_TC, the plan NCCL_IB_TC=106" in out


def test_a_generated_tree_is_read_through_the_profiles_shared_pair(tmp_path: Path) -> None:
    """In ``fabgen generate``'s tree lab01..lab03 have no nccl.conf of their own: they install the profile's.

    The shared copy is compared once (all its hosts plan the same variables) and a change in it is reported at
    its line, for the profile; a change in lab04's own file for lab04; no host counts as missing.
    """
    spec = load_spec(base_path("lab"))
    fabric = plan_fabric(spec)
    root = tmp_path / "out"
    assert main(["generate", str(base_path("lab")), "-o", str(root), "-q"]) == 0
    assert not (root / "hosts" / "lab01" / "nccl.conf").exists()
    assert lint(spec, fabric, deployed=root, config={"select": ["FG4", "FG5"]}) == []
    shared = root / "hosts" / "_profiles" / "lab-node" / "nccl.conf"
    edit(shared, "NCCL_IB_TC=106", "NCCL_IB_TC=96")
    edit(root / "hosts" / "lab04" / "nccl.env", "NCCL_IB_TIMEOUT=20", "NCCL_IB_TIMEOUT=21")
    found = [(f.code, f.message, f.location.file, f.location.line)
             for f in lint(spec, fabric, deployed=root, config={"select": ["FG5"]})]
    line = shared.read_text().splitlines().index("NCCL_IB_TC=96") + 1
    env_line = (root / "hosts" / "lab04" / "nccl.env").read_text().splitlines().index("NCCL_IB_TIMEOUT=21") + 1
    assert sorted(found) == [
        ("FG502", "lab04: nccl.env has another NCCL_IB_TIMEOUT, the plan NCCL_IB_TIMEOUT=20",
         str(root / "hosts" / "lab04" / "nccl.env"), env_line),
        ("FG502", "profile lab-node: nccl.conf has another NCCL_IB_TC, the plan NCCL_IB_TC=106", str(shared), line),
    ]


def test_a_file_that_is_fabgens_text_is_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deployed file with the bytes of fabgen's render takes the plan's pictures and no routing is parsed, its
    own or the render's (at 2,048 switches that was half the read); an edited one is parsed, and so is its render."""
    from dataclasses import replace

    import fabgen.targets.registry as registry

    parsed: list[str] = []
    rows = registry.read_backs()

    def counting() -> dict[str, object]:
        def wrap(os_name: str, parse: object) -> object:
            def counted(data: object) -> object:
                parsed.append(os_name)
                return parse(data)  # type: ignore[operator]
            return counted
        return {os_name: (target, replace(row, parse_routing=wrap(os_name, row.parse_routing)))
                for os_name, (target, row) in rows.items()}

    monkeypatch.setattr(registry, "read_backs", counting)
    fabric = plan_fabric(load_spec(base_path("lab")))
    root = tmp_path / "collected"
    write_deployed(fabric, root)
    found = read_deployed(root, fabric)
    assert len(found.switches) == 6 and parsed == [], "nothing parsed: every file is fabgen's bytes"
    assert all(s.routing is None and s.expected_routing is None and s.qos == s.expected for s in found.switches)
    cfg = root / "switches" / "leaf-r0-p00-01.cfg"
    cfg.write_text(cfg.read_text() + "! collected by hand\n")
    parsed.clear()
    found = read_deployed(root, fabric)
    assert parsed == ["eos", "eos"], "the edited file and its switch's render"
    edited = next(s for s in found.switches if s.name == "leaf-r0-p00-01")
    assert edited.routing is not None and edited.routing == edited.expected_routing, "a comment is no drift"
    assert all(s.routing is None for s in found.switches if s is not edited)


@pytest.mark.parametrize("base", ["lab", "sonic-pod", "cumulus-pod"])
def test_switch_files_read_in_workers_give_the_same_tree(base: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``-j 2``: the switch files are parsed in forked workers (forced here below the size that would fork) and
    the result is the serial one: pictures, drift, an unreadable file and its redaction, in switch order."""
    import os

    import fabgen.lint.deployed as deployed_module

    spec, fabric, root = site(base, tmp_path)
    files = sorted(p for p in (root / "switches").rglob("*")
                   if p.suffix == ".cfg" or p.name in ("config_db.json", "startup.yaml"))
    files[0].write_text(files[0].read_text().replace("4", "7", 3))  # drift, or a file the reader refuses
    files[1].write_text(files[1].read_text()[: len(files[1].read_text()) // 2] + "\n SECRET {[\n")
    serial = read_deployed(root, fabric)
    monkeypatch.setattr(deployed_module, "PARALLEL_SWITCHES", 1)
    pids = tmp_path / "pids"
    read_range = deployed_module._read_range

    def spy(*args: object) -> object:  # records, from each worker, the process that read the files
        with pids.open("a") as out:
            out.write(f"{os.getpid()}\n")
        yield from read_range(*args)  # type: ignore[arg-type]
    monkeypatch.setattr(deployed_module, "_read_range", spy)
    parallel = read_deployed(root, fabric, jobs=2)
    readers = set(pids.read_text().split())
    assert readers and str(os.getpid()) not in readers, "the switch files were read in worker processes"
    assert parallel == serial
    assert serial.unreadable or any(s.qos != s.expected or s.routing != s.expected_routing for s in serial.switches)
    assert lint(spec, fabric, deployed=parallel) == lint(spec, fabric, deployed=serial)


def test_cli_lint_takes_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, root = site("lab", tmp_path)
    spec_file = str(base_path("lab"))
    assert main(["lint", spec_file, "--deployed", str(root), "-j", "2"]) == 0
    with pytest.raises(SystemExit):
        main(["lint", spec_file, "--deployed", str(root), "-j", "0"])
    assert "must be between 1 and" in capsys.readouterr().err
