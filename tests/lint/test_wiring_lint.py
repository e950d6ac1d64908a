"""``lint --wiring``: observed cabling against the plan.

The generated cabling.csv fed back gives nothing; the miswired lab (lldpd's
``-f json`` shape: two swapped cables, one rail crossing, one missing link) gives
exactly those three findings; real lldpd captures from ../shared/reference/lldp
match their plan once names are normalised.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import require_reference
from lint_support import DATA, EXAMPLES, WIRING, base_path

from fabgen.cli import main
from fabgen.errors import FabgenError
from fabgen.lint import lint
from fabgen.lint.observed import Names, evidence_from_links, normalise, read_evidence
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.cabling import cabling_csv
from fabgen.wiring import ObservedLink, read_lldp

LAB = EXAMPLES / "lab" / "spec.yaml"
MISWIRED = WIRING / "miswired-lab"


@pytest.fixture(scope="module")
def lab():  # type: ignore[no-untyped-def]
    spec = load_spec(LAB)
    return spec, plan_fabric(spec)


def test_generated_cabling_csv_gives_no_findings(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["generate", str(LAB), "-o", str(out), "--only", "cabling", "-q"]) == 0
    assert main(["lint", str(LAB), "--wiring", str(out / "cabling.csv")]) == 0


def test_llama3_cabling_round_trip_is_clean(tmp_path: Path) -> None:
    """73,728 observed links read back with zero findings (their speed is bench/run.py's lint row)."""
    spec = load_spec(EXAMPLES / "llama3-24k" / "spec.yaml")
    fabric = plan_fabric(spec)
    csv = tmp_path / "cabling.csv"
    csv.write_text(cabling_csv(fabric))
    assert lint(spec, fabric, wiring=[csv]) == []


def test_miswired_lab_gives_exactly_its_three_mistakes(lab) -> None:  # type: ignore[no-untyped-def]
    spec, fabric = lab
    findings = lint(spec, fabric, wiring=[MISWIRED])
    got = sorted((f.code, Path(f.file).name, f.line, f.col) for f in findings)
    assert got == [
        ("FG251", "lab01.json", 5, 9),
        ("FG252", "spec.yaml", 38, 7),
        ("FG254", "lab03.json", 46, 9),
    ]
    by_code = {f.code: f for f in findings}
    swap = by_code["FG251"]
    assert "lab01:ens1np0 is on leaf-r0-p00-01:Ethernet2/1" in swap.message
    assert "lab02:ens1np0 is on leaf-r0-p00-01:Ethernet1/1" in swap.message
    assert swap.hint == "swap the cables at leaf-r0-p00-01:Ethernet1/1 and leaf-r0-p00-01:Ethernet2/1"
    assert Path(swap.related[0].file).name == "lab02.example.net.json", "the other cable, reported under an FQDN"
    crossing = by_code["FG254"]
    assert crossing.message.startswith("lab03:ens2np0 (rail 1) is cabled to leaf-r2-p00-01:Ethernet7/1")
    assert crossing.hint == "move the cable to leaf-r1-p00-01:Ethernet3/1"
    missing = by_code["FG252"]
    assert "lab04:ens1np0 -- leaf-r0-p00-01:Ethernet4/1" in missing.message
    assert missing.path == "hosts[0].overrides.lab04"
    assert Path(missing.related[0].file).name == "lab04.json"


def test_miswired_lab_files_one_by_one_and_in_any_order(lab) -> None:  # type: ignore[no-untyped-def]
    spec, fabric = lab
    files = sorted(MISWIRED.iterdir())
    forward = lint(spec, fabric, wiring=files)
    backward = lint(spec, fabric, wiring=list(reversed(files)))
    assert forward == backward
    assert [f.code for f in forward] == ["FG252", "FG251", "FG254"]


def test_fixture_is_lldpd_json_shape() -> None:
    """Exactly lldpctl -f json: several neighbours give a list of one-key objects; chassis keyed by name."""
    for path in MISWIRED.iterdir():
        data = json.loads(path.read_text())
        interfaces = data["lldp"]["interface"]
        assert isinstance(interfaces, list)
        for item in interfaces:
            ((_name, body),) = item.items()
            assert body["via"] == "LLDP" and set(body) >= {"rid", "age", "chassis", "port"}
            ((_chassis_name, chassis),) = body["chassis"].items()
            assert chassis["id"]["type"] == "mac"
            assert body["port"]["id"]["type"] == "ifname"
        assert read_lldp(path), f"{path.name} reads with fabgen.wiring"


def test_host_out_of_service_nic_is_not_expected(lab) -> None:  # type: ignore[no-untyped-def]
    spec, fabric = lab
    links = [ObservedLink(link.a_device, link.a_port, link.b_device, link.b_port, "site.csv", i + 2, "csv")
             for i, link in enumerate(fabric.links) if (link.a_device, link.a_port) != ("lab04", "ens4np0")]
    assert lint(spec, fabric, wiring=links) == []


def test_unreported_devices_are_not_missing(lab) -> None:  # type: ignore[no-untyped-def]
    """Only lab01 reported: the other hosts' and the uplinks' cables are not expected."""
    spec, fabric = lab
    findings = lint(spec, fabric, wiring=[MISWIRED / "lab01.json"])
    assert [f.code for f in findings] == ["FG253"], "half a swap is a cable in the wrong port"
    assert "the plan has lab01:ens1np0 -- leaf-r0-p00-01:Ethernet1/1" in findings[0].message


def test_frontend_neighbours_are_ignored(lab) -> None:  # type: ignore[no-untyped-def]
    spec, fabric = lab
    links = [ObservedLink("lab01", "eno1", "oob-sw1", "Gi1/0/11", "x", 1, "lldp"),
             ObservedLink("leaf-r0-p00-01", "Management1", "oob-sw1", "Gi1/0/1", "y", 1, "lldp")]
    findings = lint(spec, fabric, wiring=links, config={"select": ["FG25"]})
    # lab01 has 4 cables, leaf-r0-p00-01 has 4 hosts and 4 uplinks; they share one cable.
    assert [f.code for f in findings] == ["FG252"] * 11, "only the two reporters' planned cables are missing"


def test_empty_capture_means_every_cable_is_missing(tmp_path: Path, lab) -> None:  # type: ignore[no-untyped-def]
    spec, fabric = lab
    (tmp_path / "lab02.json").write_text('{"lldp": {}}\n')
    findings = lint(spec, fabric, wiring=[tmp_path])
    assert sorted(f.message.split()[2] for f in findings) == [f"lab02:ens{n}np0" for n in range(1, 5)]


def test_bad_evidence_is_bad_input(tmp_path: Path, lab) -> None:  # type: ignore[no-untyped-def]
    spec, fabric = lab
    with pytest.raises(FabgenError, match="no such file"):
        lint(spec, fabric, wiring=[tmp_path / "absent.json"])
    (tmp_path / "cabling.csv").write_text("a,b\n")
    with pytest.raises(FabgenError, match="header must be exactly"):
        lint(spec, fabric, wiring=[tmp_path])


# --------------------------------------------------------------------------- names


def test_names_for_eos_and_hosts(lab) -> None:  # type: ignore[no-untyped-def]
    names = Names(lab[1])
    assert names.device("LAB02.example.net") == "lab02"
    assert names.device("leaf-r0-p00-01.dc1.example.net") == "leaf-r0-p00-01"
    assert names.device("stranger") == "stranger"
    for spelling in ("Ethernet3/1", "Ethernet3", "Et3/1", "et3"):
        assert names.port("leaf-r0-p00-01", spelling) == "Ethernet3/1"
    assert names.port("leaf-r0-p00-01", "Management1") == "Management1"
    assert names.port("lab01", "mlx5_1") == "ens2np0", "an RDMA device name is the host's netdev"


def test_names_for_sonic_aliases() -> None:
    spec = load_spec(EXAMPLES / "sonic-pod" / "spec.yaml")
    fabric = plan_fabric(spec)
    names = Names(fabric)
    # Mellanox-SN5600-O128: cage 33 is broken out 2x400G, etp33a = Ethernet256, etp33b = Ethernet260.
    assert names.port("leaf-r0-p00-01", "etp33a") == "Ethernet256"
    assert names.port("leaf-r0-p00-01", "ETP33B") == "Ethernet260"
    assert names.port("leaf-r0-p00-01", "etp33") == "etp33", "a cage, not a port, on this SKU"
    assert names.port("leaf-r0-p00-01", "Ethernet256") == "Ethernet256"
    assert names.port("leaf-r0-p00-01", "Ethernet257") == "Ethernet257", "not a port's first lane"
    # A spine's capture: its own port by name, the leaf's by the alias SONiC advertises.
    spine_view = [ObservedLink("spine-01", "Ethernet0", "leaf-r0-p00-01", "etp33a", "spine-01.json", 7, "lldp")]
    observed = normalise(evidence_from_links(spine_view), fabric)
    assert observed.links[0].remote_port == "Ethernet256"
    findings = lint(spec, fabric, wiring=spine_view, config={"select": ["FG251", "FG253", "FG254"]})
    assert findings == []


def test_cumulus_ports() -> None:
    spec = load_spec(EXAMPLES / "cumulus-pod" / "spec.yaml")
    names = Names(plan_fabric(spec))
    leaf = next(s for s in names.switches.values() if s.tier == "leaf")
    assert names.port(leaf.name, "SWP5") == "swp5"


# --------------------------------------------------------------------------- real lldpd output


def test_reference_captures_match_their_plan() -> None:
    host = require_reference("lldp", "host-gt00001-two-neighbors.json")
    leaf = require_reference("lldp", "leaf-r0-p00-01-one-neighbor.json")
    spec = load_spec(base_path("gt-two-rails"))
    fabric = plan_fabric(spec)
    links = read_lldp(host, local_device="gt00001") + read_lldp(leaf, local_device="leaf-r0-p00-01")
    findings = lint(spec, fabric, wiring=links)
    # EOS sent "Ethernet1" for Ethernet1/1 and the host "ens1np0" as a port description: both match.
    # The leaf's capture has no spine neighbour, so its uplink is reported missing, and only that.
    assert [(f.code, f.message) for f in findings] == [
        ("FG252", "planned cable leaf-r0-p00-01:Ethernet5/1 -- spine-01:Ethernet1/1 is not in the observed wiring"),
    ]


def test_reference_formats_agree() -> None:
    spec = load_spec(base_path("gt-two-rails"))
    fabric = plan_fabric(spec)
    reports = []
    for name in ("host-gt00001-two-neighbors.json", "host-gt00001-two-neighbors.json0.json",
                 "host-gt00001-two-neighbors.keyvalue.txt"):
        path = require_reference("lldp", name)
        reports.append(lint(spec, fabric, wiring=read_lldp(path, local_device="gt00001")))
    assert reports == [[], [], []]


def test_read_evidence_records_reporters(tmp_path: Path) -> None:
    (tmp_path / "gt00009.json").write_text('{"lldp": {}}\n')
    evidence = read_evidence([tmp_path, MISWIRED / "lab01.json"])
    assert evidence.reporters == {"gt00009": str(tmp_path / "gt00009.json"), "lab01": str(MISWIRED / "lab01.json")}
    assert DATA.exists()
