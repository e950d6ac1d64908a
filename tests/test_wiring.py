"""Observed-wiring readers: real lldpctl output, the lab fixtures, cabling CSV, errors.

The reference samples (real lldpd 1.0.16 output) are read from ../shared/reference;
the lab fixtures under tests/data/wiring/lab are hand-built in lldpd's exact shapes
(gpu01 host -> leaf01 Cumulus -> spine01 SONiC) in json, json0 and keyvalue form.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
from pathlib import Path

import pytest
from conftest import require_reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabgen.errors import FabgenError, Problem
from fabgen.wiring import (
    CABLING_COLUMNS,
    CABLING_ROLES,
    ObservedLink,
    dedupe_links,
    device_name_from_path,
    read_cabling_csv,
    read_lldp,
)
from tests.helpers import read_wiring

DATA = Path(__file__).parent / "data" / "wiring"
LAB = DATA / "lab"
HEADER = ",".join(CABLING_COLUMNS)

Ends = tuple[str, str, str, str]


def ends(links: list[ObservedLink]) -> list[Ends]:
    return [(link.local_device, link.local_port, link.remote_device, link.remote_port) for link in links]


def line_at(path: Path, line: int) -> str:
    return path.read_text().splitlines()[line - 1]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems_of(excinfo: pytest.ExceptionInfo[FabgenError]) -> list[Problem]:
    return excinfo.value.problems


# --------------------------------------------------------------------------- reference samples

HOST_VIEW: list[Ends] = [
    ("gt00001", "ens1np0", "leaf-r0-p00-01", "Ethernet1"),
    ("gt00001", "ens2np0", "leaf-r1-p00-01", "Ethernet1"),
]


@pytest.mark.parametrize(
    "name",
    [
        "host-gt00001-two-neighbors.json",
        "host-gt00001-two-neighbors.json0.json",
        "host-gt00001-two-neighbors.keyvalue.txt",
    ],
)
def test_reference_host_view_all_formats(name: str) -> None:
    path = require_reference("lldp", name)
    links = read_lldp(path, local_device="gt00001")
    # Switch sends port id subtype ifname: the neighbour port is the switch's name, not its descr.
    assert ends(links) == HOST_VIEW
    assert {link.origin for link in links} == {"lldp"}
    assert {link.source for link in links} == {str(path)}
    for link in links:  # each line points at the neighbour's interface entry
        assert link.local_port in line_at(path, link.line)


@pytest.mark.parametrize(
    ("name", "device", "expected"),
    [
        # -f json, single neighbour: "interface" is an object, not a list
        ("leaf-r0-p00-01-one-neighbor.json", "leaf-r0-p00-01", ("Ethernet1", "gt00001", "ens1np0")),
        # -f json0, single neighbour: still lists; the host sends port id mac, netdev in descr
        ("leaf-r1-p00-01-one-neighbor.json0.json", "leaf-r1-p00-01", ("Ethernet1", "gt00001", "ens2np0")),
    ],
)
def test_reference_switch_view(name: str, device: str, expected: tuple[str, str, str]) -> None:
    path = require_reference("lldp", name)
    links = read_lldp(path, local_device=device)
    assert ends(links) == [(device, *expected)]
    assert "Ethernet1" in line_at(path, links[0].line)


def test_reference_both_ends_deduplicate() -> None:
    host = read_lldp(require_reference("lldp", "host-gt00001-two-neighbors.json"), "gt00001")
    leaf0 = read_lldp(require_reference("lldp", "leaf-r0-p00-01-one-neighbor.json"), "leaf-r0-p00-01")
    leaf1 = read_lldp(require_reference("lldp", "leaf-r1-p00-01-one-neighbor.json0.json"), "leaf-r1-p00-01")
    assert host[0].key() == leaf0[0].key()
    assert host[1].key() == leaf1[0].key()
    merged = dedupe_links([*leaf1, *leaf0, *host])
    assert [link.key() for link in merged] == [link.key() for link in host]
    assert len(merged) == 2


def test_reference_files_read_through_read_wiring_with_file_name_device(tmp_path: Path) -> None:
    """Renamed per the HOSTNAME.* convention, the reference capture reads with no arguments."""
    for name, device in [
        ("host-gt00001-two-neighbors.json0.json", "gt00001.json0.json"),
        ("leaf-r0-p00-01-one-neighbor.json", "leaf-r0-p00-01.json"),
        ("leaf-r1-p00-01-one-neighbor.json0.json", "leaf-r1-p00-01.lldp.json"),
    ]:
        shutil.copy(require_reference("lldp", name), tmp_path / device)
    assert ends(read_wiring([tmp_path])) == HOST_VIEW


# --------------------------------------------------------------------------- lab fixtures

LAB_VIEWS: dict[str, list[Ends]] = {
    "gpu01": [
        ("gpu01", "ens1np0", "leaf01", "swp1"),
        ("gpu01", "ens2np0", "leaf01", "swp2"),
    ],
    "leaf01": [
        ("leaf01", "swp1", "gpu01", "ens1np0"),
        ("leaf01", "swp2", "gpu01", "ens2np0"),
        # SONiC advertises port id subtype local = its PORT alias, not Ethernet0
        ("leaf01", "swp63", "spine01", "etp1"),
    ],
    "spine01": [("spine01", "Ethernet0", "leaf01", "swp63")],
}

LAB_WIRING: list[Ends] = [
    ("gpu01", "ens1np0", "leaf01", "swp1"),
    ("gpu01", "ens2np0", "leaf01", "swp2"),
    ("leaf01", "swp63", "spine01", "etp1"),
    # Not folded into the line above: the two ends name the SONiC port differently
    # (alias vs OS name); mapping is the linter's job.
    ("spine01", "Ethernet0", "leaf01", "swp63"),
]


@pytest.mark.parametrize("device", sorted(LAB_VIEWS))
def test_lab_json_and_json0_agree(device: str) -> None:
    as_json = read_lldp(LAB / "json" / f"{device}.json")  # device from the file name
    as_json0 = read_lldp(LAB / "json0" / f"{device}.json0.json")
    assert ends(as_json) == LAB_VIEWS[device]
    assert ends(as_json0) == LAB_VIEWS[device]
    for link in as_json + as_json0:
        assert json.dumps(link.local_port) in line_at(Path(link.source), link.line)


def test_lab_shapes_are_the_traps_we_claim() -> None:
    """Guard the fixtures themselves: they must keep lldpd's count-dependent shapes."""
    spine = json.loads((LAB / "json" / "spine01.json").read_text())
    assert isinstance(spine["lldp"]["interface"], dict)  # one neighbour: object
    leaf = json.loads((LAB / "json" / "leaf01.json").read_text())
    assert isinstance(leaf["lldp"]["interface"], list)  # several: list
    assert isinstance(spine["lldp"]["interface"]["Ethernet0"]["chassis"]["leaf01"]["mgmt-ip"], str)
    leaf0 = json.loads((LAB / "json0" / "leaf01.json0.json").read_text())
    assert leaf0["lldp"][0]["interface"][2]["chassis"][0]["name"] == [{"value": "spine01"}]


def test_lab_keyvalue_matches_json() -> None:
    kv = read_lldp(LAB / "keyvalue" / "gpu01.keyvalue.txt")
    assert ends(kv) == LAB_VIEWS["gpu01"]
    assert [link.line for link in kv] == [1, 17]


@pytest.mark.parametrize("folder", ["json", "json0"])
def test_lab_read_wiring_dedupes_both_ends(folder: str) -> None:
    links = read_wiring([LAB / folder])
    assert ends(links) == LAB_WIRING
    host_links = [link for link in links if link.local_device == "gpu01"]
    assert all(Path(link.source).name.startswith("gpu01.") for link in host_links)  # first source kept


def test_lab_everything_together_prefers_lldp_over_csv() -> None:
    links = read_wiring([LAB])  # json, json0, keyvalue and cabling.csv
    assert ends(links) == LAB_WIRING
    assert {link.origin for link in links} == {"lldp"}
    assert read_wiring([LAB / "cabling.csv", LAB / "json"]) == read_wiring([LAB / "json", LAB / "cabling.csv"])


def test_lab_cabling_csv() -> None:
    links = read_cabling_csv(LAB / "cabling.csv")
    assert ends(links) == [
        ("gpu01", "ens1np0", "leaf01", "swp1"),
        ("gpu01", "ens2np0", "leaf01", "swp2"),
        ("leaf01", "swp63", "spine01", "Ethernet0"),
    ]
    assert [link.line for link in links] == [2, 3, 4]
    assert {link.origin for link in links} == {"csv"}


def test_csv_and_lldp_of_the_same_cable_dedupe() -> None:
    csv_links = read_cabling_csv(LAB / "cabling.csv")
    spine = read_lldp(LAB / "json" / "spine01.json")
    assert csv_links[2].key() == spine[0].key()
    assert dedupe_links([*csv_links, *spine])[-1] == spine[0]


# --------------------------------------------------------------------------- determinism


def test_read_wiring_order_independent_and_repeatable() -> None:
    paths = sorted(LAB.rglob("*.*"))
    first = read_wiring(paths)
    for seed in range(5):
        shuffled = paths[:]
        random.Random(seed).shuffle(shuffled)
        assert read_wiring(shuffled) == first
    assert read_wiring([LAB]) == first
    assert read_wiring([str(LAB)]) == first  # str paths too


def test_natural_port_order(tmp_path: Path) -> None:
    rows = [f"h{i},ens1np0,leaf01,swp{i},host-leaf,0,400G" for i in (10, 2, 1)]
    path = write(tmp_path, "c.csv", "\n".join([HEADER, *rows]) + "\n")
    assert [link.remote_port for link in read_wiring([path])] == ["swp1", "swp2", "swp10"]


# --------------------------------------------------------------------------- ObservedLink


def test_observed_link_key_and_immutability() -> None:
    a = ObservedLink("gpu01", "ens1np0", "leaf01", "swp1", "a.json", 5, "lldp")
    b = ObservedLink("leaf01", "swp1", "gpu01", "ens1np0", "b.json", 9, "lldp")
    c = ObservedLink("leaf01", "swp1", "gpu01", "ens2np0", "b.json", 9, "lldp")
    assert a.key() == b.key() != c.key()
    assert hash(a.key()) == hash(b.key())
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.local_port = "x"  # type: ignore[misc]
    assert not hasattr(a, "__dict__")  # slots
    assert str(a) == "gpu01:ens1np0 -> leaf01:swp1 (a.json:5)"
    assert dataclasses.replace(a, line=0).where == "a.json"


def test_dedupe_keeps_one_per_cable_regardless_of_order() -> None:
    a = ObservedLink("gpu01", "ens1np0", "leaf01", "swp1", "a.json", 5, "lldp")
    b = ObservedLink("leaf01", "swp1", "gpu01", "ens1np0", "b.json", 9, "lldp")
    c = ObservedLink("gpu01", "ens1np0", "leaf01", "swp1", "cabling.csv", 2, "csv")
    assert dedupe_links([a, b, c]) == dedupe_links([c, b, a]) == [a]


# --------------------------------------------------------------------------- local device name


@pytest.mark.parametrize(
    ("name", "device"),
    [
        ("gpu01.json", "gpu01"),
        ("gpu01.lldp.json", "gpu01"),
        ("gpu01.json0.json", "gpu01"),
        ("gpu01.keyvalue.txt", "gpu01"),
        ("LEAF01.KV", "LEAF01"),
        ("gt00001.example.com.json", "gt00001.example.com"),
        ("leaf-r0-p00-01", "leaf-r0-p00-01"),
        ("lldp output.json", None),
        (".json", None),
        ("-bad.json", None),
    ],
)
def test_device_name_from_path(name: str, device: str | None) -> None:
    assert device_name_from_path(Path("/x") / name) == device


def neighbour_json(local_if: str, chassis: object, port: object) -> dict[str, object]:
    return {local_if: {"via": "LLDP", "rid": "1", "age": "0 day, 00:00:07", "chassis": chassis, "port": port}}


LEAF01_CHASSIS = {"leaf01": {"id": {"type": "mac", "value": "9c:05:91:2e:7a:00"}}}
SWP1 = {"id": {"type": "ifname", "value": "swp1"}, "descr": "gpu01 rail0"}


def test_local_chassis_document_names_the_device(tmp_path: Path) -> None:
    chassis_doc = {"local-chassis": {"chassis": {"gpu07": {"id": {"type": "mac", "value": "7c:c2:55:9a:41:08"}}}}}
    neighbours = {"lldp": {"interface": neighbour_json("ens1np0", LEAF01_CHASSIS, SWP1)}}
    text = json.dumps(chassis_doc, indent=2) + "\n\n" + json.dumps(neighbours, indent=2) + "\n\n"
    path = write(tmp_path, "capture.json", text)
    links = read_lldp(path)
    assert ends(links) == [("gpu07", "ens1np0", "leaf01", "swp1")]
    assert '"ens1np0"' in line_at(path, links[0].line)
    assert ends(read_lldp(path, local_device="gpu99"))[0][0] == "gpu99"  # the argument wins


def test_local_chassis_json0_and_keyvalue(tmp_path: Path) -> None:
    j0 = {"local-chassis": [{"chassis": [{"id": [{"type": "mac", "value": "aa"}], "name": [{"value": "gpu08"}]}]}]}
    n0 = {
        "lldp": [
            {
                "interface": [
                    {
                        "name": "ens1np0",
                        "via": "LLDP",
                        "chassis": [{"name": [{"value": "leaf01"}]}],
                        "port": [{"id": [{"type": "ifname", "value": "swp1"}]}],
                    }
                ]
            }
        ]
    }
    path = write(tmp_path, "x y.json", json.dumps(n0) + "\n" + json.dumps(j0) + "\n")
    assert ends(read_lldp(path)) == [("gpu08", "ens1np0", "leaf01", "swp1")]
    kv = (
        "local-chassis.chassis.mac=aa\nlocal-chassis.chassis.name=gpu09\nlldp.eth0.via=LLDP\n"
        "lldp.eth0.chassis.name=leaf01\nlldp.eth0.port.ifname=swp9\n"
    )
    assert ends(read_lldp(write(tmp_path, "a b.txt", kv))) == [("gpu09", "eth0", "leaf01", "swp9")]


def test_no_local_device_is_a_located_error(tmp_path: Path) -> None:
    path = write(
        tmp_path, "lldp output.json", json.dumps({"lldp": {"interface": neighbour_json("eth0", LEAF01_CHASSIS, SWP1)}})
    )
    with pytest.raises(FabgenError) as excinfo:
        read_lldp(path)
    assert "HOSTNAME.json" in str(excinfo.value)
    assert problems_of(excinfo)[0].file == str(path)


# --------------------------------------------------------------------------- LLDP shape corners


def test_neighbour_without_system_name_is_named_by_chassis_id(tmp_path: Path) -> None:
    # -f json with no SysName: the chassis is not keyed by a name
    unnamed = {"id": {"type": "mac", "value": "00:1c:73:aa:bb:cc"}, "descr": "unmanaged"}
    port = {"id": {"type": "mac", "value": "00:1c:73:aa:bb:cd"}}  # mac id, no descr: the mac is all we have
    path = write(tmp_path, "gpu01.json", json.dumps({"lldp": {"interface": neighbour_json("eth3", unnamed, port)}}))
    assert ends(read_lldp(path)) == [("gpu01", "eth3", "00:1c:73:aa:bb:cc", "00:1c:73:aa:bb:cd")]


def test_chassis_named_id_is_still_a_name(tmp_path: Path) -> None:
    chassis = {"id": {"id": {"type": "mac", "value": "aa"}, "descr": "x"}}
    path = write(tmp_path, "gpu01.json", json.dumps({"lldp": {"interface": neighbour_json("eth0", chassis, SWP1)}}))
    assert ends(read_lldp(path)) == [("gpu01", "eth0", "id", "swp1")]


@pytest.mark.parametrize(
    ("port", "expected"),
    [
        ({"id": {"type": "ifname", "value": "Ethernet1/1"}, "descr": "gpu01:mlx5_0"}, "Ethernet1/1"),  # EOS
        ({"id": {"type": "local", "value": "etp5"}, "descr": "to gpu01"}, "etp5"),  # SONiC alias
        ({"id": {"type": "ifalias", "value": "uplink-1"}}, "uplink-1"),
        ({"id": {"type": "mac", "value": "7c:c2:55:9a:41:08"}, "descr": "ens1np0"}, "ens1np0"),  # Linux default
        ({"id": {"type": "ip", "value": "10.0.0.1"}, "descr": "eth0"}, "eth0"),
        ({"id": {"type": "ifname", "value": ""}, "descr": "swp4"}, "swp4"),
    ],
)
def test_which_port_field_names_the_port(tmp_path: Path, port: dict[str, object], expected: str) -> None:
    path = write(tmp_path, "h.json", json.dumps({"lldp": {"interface": neighbour_json("eth0", LEAF01_CHASSIS, port)}}))
    assert read_lldp(path)[0].remote_port == expected


def test_two_neighbours_on_one_interface(tmp_path: Path) -> None:
    """A hub or a misconfigured breakout: the same interface key twice in the list."""
    other = {"leaf02": {"id": {"type": "mac", "value": "bb"}}}
    swp7 = {"id": {"type": "ifname", "value": "swp7"}}
    doc = {
        "lldp": {"interface": [neighbour_json("ens1np0", LEAF01_CHASSIS, SWP1), neighbour_json("ens1np0", other, swp7)]}
    }
    path = write(tmp_path, "gpu01.json", json.dumps(doc, indent=2))
    links = read_lldp(path)
    assert ends(links) == [("gpu01", "ens1np0", "leaf01", "swp1"), ("gpu01", "ens1np0", "leaf02", "swp7")]
    assert links[0].line < links[1].line
    kv = (
        "lldp.ens1np0.via=LLDP\nlldp.ens1np0.chassis.name=leaf01\nlldp.ens1np0.port.ifname=swp1\n"
        "lldp.ens1np0.via=LLDP\nlldp.ens1np0.chassis.name=leaf02\nlldp.ens1np0.port.ifname=swp7\n"
    )
    kv_links = read_lldp(write(tmp_path, "gpu01.kv", kv))
    assert ends(kv_links) == ends(links)
    assert [link.line for link in kv_links] == [1, 4]


def test_keyvalue_interface_names_with_dots_and_unknown_fields(tmp_path: Path) -> None:
    kv = (
        "lldp.bond0.100.via=LLDP\nlldp.bond0.100.chassis.mac=aa\nlldp.bond0.100.chassis.name=leaf01\n"
        "lldp.bond0.100.port.local=etp3\nlldp.bond0.100.port.descr=x\nlldp.bond0.100.future-tlv.x=1\n"
    )
    assert ends(read_lldp(write(tmp_path, "gpu01.keyvalue.txt", kv))) == [("gpu01", "bond0.100", "leaf01", "etp3")]


def test_json_object_keyed_by_several_interfaces(tmp_path: Path) -> None:
    """Not what lldpctl prints, but the obvious hand-written form: accept it."""
    doc = {
        "lldp": {
            "interface": {
                **neighbour_json("eth0", LEAF01_CHASSIS, SWP1),
                **neighbour_json("eth1", LEAF01_CHASSIS, {"id": {"type": "ifname", "value": "swp2"}}),
            }
        }
    }
    assert ends(read_lldp(write(tmp_path, "gpu01.json", json.dumps(doc)))) == [
        ("gpu01", "eth0", "leaf01", "swp1"),
        ("gpu01", "eth1", "leaf01", "swp2"),
    ]


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("gpu01.json", '{\n  "lldp": {\n    \n  }\n}\n\n'),  # -f json, no neighbours
        ("gpu01.json0.json", '{\n  "lldp": [\n    {\n      \n    }\n  ]\n}\n\n'),  # -f json0
        ("gpu01.keyvalue.txt", ""),  # -f keyvalue prints nothing
        ("gpu01.kv", "\n\n"),
    ],
)
def test_no_neighbours(tmp_path: Path, name: str, text: str) -> None:
    assert read_lldp(write(tmp_path, name, text)) == []


# --------------------------------------------------------------------------- LLDP errors


def single_problem(excinfo: pytest.ExceptionInfo[FabgenError]) -> Problem:
    problems = problems_of(excinfo)
    assert len(problems) == 1, problems
    text = str(problems[0])
    assert "\n" not in text and "Traceback" not in text
    return problems[0]


def test_truncated_json_is_located(tmp_path: Path) -> None:
    full = (LAB / "json" / "leaf01.json").read_text()
    path = write(tmp_path, "leaf01.json", full[: len(full) // 2])
    with pytest.raises(FabgenError) as excinfo:
        read_lldp(path)
    problem = single_problem(excinfo)
    assert problem.message.startswith("invalid JSON")
    assert problem.line > 1 and problem.col >= 1
    assert str(problem).startswith(f"{path}:{problem.line}:{problem.col}: invalid JSON")


def test_json_syntax_error_position(tmp_path: Path) -> None:
    path = write(tmp_path, "gpu01.json", '{\n  "lldp": {\n    "interface": {,\n  }\n}\n')
    with pytest.raises(FabgenError) as excinfo:
        read_lldp(path)
    problem = single_problem(excinfo)
    assert (problem.line, problem.col) == (3, 19)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"configuration": {}}', 'no top-level "lldp" key'),
        ("[1, 2]", "expected a JSON object"),
        ('{"lldp": "x"}', "neither an object nor a list"),
        ('{"lldp": [1]}', 'unrecognised "lldp" section'),
        ('{"lldp": {"interface": ["eth0"]}}', "unrecognised interface entry"),
        ('{"lldp": {"interface": {"eth0": {"via": "LLDP", "port": {}}}}}', 'no neighbour "chassis"/"port"'),
        ('{"lldp": {"interface": {"eth0": {"tx": {"tx": "5"}, "rx": {"rx": "4"}}}}}', "show neighbors"),
        (
            '{"lldp": {"interface": {"eth0": {"via": "LLDP", "chassis": {"a": 1, "b": 2}, "port": {}}}}}',
            "unrecognised chassis",
        ),
        (
            '{"lldp": {"interface": {"eth0": {"via": "LLDP", "chassis": {"leaf01": {"descr": "x"}}, '
            '"port": {"ttl": "120"}}}}}',
            "neither a port id nor a port description",
        ),
        (
            '{"lldp": {"interface": {"eth0": {"via": "LLDP", "chassis": {"id": {"type": "mac", "value": ""}}, '
            '"port": {"descr": "x"}}}}}',
            "neither a system name nor a chassis id",
        ),
        ('{"a": ' + "1" * 5000 + "}", "invalid JSON"),
        ("[" * 100000, "invalid JSON"),
    ],
)
def test_json_that_is_not_lldp_neighbours(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path, "gpu01.json", text)
    with pytest.raises(FabgenError) as excinfo:
        read_lldp(path)
    problem = single_problem(excinfo)
    assert needle in problem.message
    assert problem.file == str(path) and problem.line >= 1


def test_show_interfaces_output_is_recognised(tmp_path: Path) -> None:
    body = {
        "status": "RX and TX",
        "chassis": {"gpu01": {"id": {"type": "mac", "value": "aa"}}},
        "port": {"id": {"type": "mac", "value": "aa"}, "descr": "ens1np0"},
        "ttl": {"ttl": "120"},
    }
    path = write(tmp_path, "gpu01.json", json.dumps({"lldp": {"interface": {"ens1np0": body}}}, indent=2))
    with pytest.raises(FabgenError) as excinfo:
        read_lldp(path)
    problem = single_problem(excinfo)
    assert "show interfaces" in problem.message and problem.line == 4
    kv = "lldp.ens1np0.status=RX and TX\nlldp.ens1np0.chassis.mac=aa\nlldp.ens1np0.chassis.name=gpu01\n"
    with pytest.raises(FabgenError, match="show interfaces"):
        read_lldp(write(tmp_path, "gpu01.kv", kv))


@pytest.mark.parametrize(
    ("name", "text", "needle", "line"),
    [
        (
            "gpu01.txt",
            "-------\nLLDP neighbors:\n-------\nInterface:    ens1np0, via: LLDP\n",
            "plain `lldpctl` text",
            1,
        ),
        ("gpu01.txt", '\n<?xml version="1.0"?>\n<lldp/>\n', "lldpctl -f xml", 2),
        ("gpu01.txt", f"{HEADER}\ngpu01,ens1np0,leaf01,swp1,host-leaf,0,400G\n", "cabling CSV", 1),
        (
            "gpu01.txt",
            "lldp.ens1np0.via=LLDP\nlldp.ens1np0.chassis.name=leaf01\ngarbage line\nlldp.ens1np0.port.ifname=swp1\n",
            "expected key=value",
            3,
        ),
        (
            "gpu01.txt",
            "lldp.ens1np0.via=LLDP\nconfiguration.config.tx-delay=30\nlldp.ens1np0.chassis.name=a\nlldp.ens1np0.port.ifname=b\n",
            "unrecognised lldpctl keyvalue key",
            2,
        ),
        ("gpu01.txt", "lldp.ens1np0.via=LLDP\nlldp.ens1np0.port.ifname=swp1\n", "no neighbour chassis", 1),
        ("gpu01.json", "  \n", "empty file", 0),
    ],
)
def test_other_bad_lldp_files(tmp_path: Path, name: str, text: str, needle: str, line: int) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(FabgenError) as excinfo:
        read_lldp(path)
    problem = single_problem(excinfo)
    assert needle in problem.message
    assert problem.line == line


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(FabgenError, match="no such file"):
        read_lldp(tmp_path / "missing.json")
    with pytest.raises(FabgenError, match="is a directory"):
        read_lldp(tmp_path)
    path = tmp_path / "gpu01.json"
    path.write_bytes(b'{"lldp": {\n"interface": "\xff"}}')
    with pytest.raises(FabgenError) as excinfo:
        read_lldp(path)
    problem = single_problem(excinfo)
    assert (problem.message, problem.line, problem.col) == ("not UTF-8 text (byte 0xff)", 2, 15)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["interface", "name", "via", "chassis", "port", "id", "type", "value", "descr", "status", "eth0"]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=JSON_VALUES, json0=st.booleans())
def test_arbitrary_json_never_crashes(tmp_path: Path, body: object, json0: bool) -> None:
    """Whatever sits under "lldp", the reader returns links or a FabgenError, nothing else."""
    path = tmp_path / "gpu01.json"
    path.write_text(json.dumps({"lldp": [body] if json0 else body}))
    try:
        links = read_lldp(path)
    except FabgenError as exc:
        assert exc.problems and all(p.file == str(path) for p in exc.problems)
    else:
        assert all(isinstance(link, ObservedLink) and link.remote_device and link.remote_port for link in links)


# --------------------------------------------------------------------------- cabling CSV


def test_csv_tolerates_bom_blank_lines_spaces_and_crlf(tmp_path: Path) -> None:
    text = "\ufeff" + HEADER + "\r\n\r\n gpu01 , ens1np0 ,leaf01,swp1,host-leaf,,400G\r\n"
    links = read_cabling_csv(write(tmp_path, "c.csv", text))
    assert ends(links) == [("gpu01", "ens1np0", "leaf01", "swp1")]
    assert links[0].line == 3


def test_csv_line_numbers_follow_multiline_records(tmp_path: Path) -> None:
    text = HEADER + '\n"gpu\n01",ens1np0,leaf01,swp1,host-leaf,0,400G\ngpu02,ens1np0,leaf01,swp2,host-leaf,0,400G\n'
    links = read_cabling_csv(write(tmp_path, "c.csv", text))
    assert [link.line for link in links] == [2, 4]


@pytest.mark.parametrize(
    "header",
    [
        "a_device,a_port,b_device,b_port,role,rail",
        "a_device,a_port,b_device,b_port,role,speed,rail",
        "A_DEVICE,a_port,b_device,b_port,role,rail,speed",
        "local_device,local_port,remote_device,remote_port,role,rail,speed",
    ],
)
def test_csv_header_is_strict(tmp_path: Path, header: str) -> None:
    path = write(tmp_path, "c.csv", header + "\ngpu01,ens1np0,leaf01,swp1,host-leaf,0,400G\n")
    with pytest.raises(FabgenError) as excinfo:
        read_cabling_csv(path)
    problem = single_problem(excinfo)
    assert problem.line == 1 and HEADER in problem.message


def test_csv_empty_file(tmp_path: Path) -> None:
    with pytest.raises(FabgenError, match="empty file"):
        read_cabling_csv(write(tmp_path, "c.csv", ""))


def test_csv_reports_every_bad_row_with_line_and_column(tmp_path: Path) -> None:
    rows = [
        "gpu01,ens1np0,leaf01,swp1,host-leaf,0,400G",  # 2 fine
        "gpu01,ens2np0,leaf01,swp2,host-leaf,1",  # 3 six fields
        "gpu02,ens1np0,leaf01,swp3,host-spine,0,400G",  # 4 bad role
        "gpu02,ens2np0,leaf01,swp4,host-leaf,-1,400G",  # 5 bad rail
        "gpu03,ens1np0,leaf01,swp5,host-leaf,0,400",  # 6 speed without unit
        "gpu03,,leaf01,swp6,host-leaf,0,400G",  # 7 empty a_port
        "leaf01,swp1,leaf01,swp1,leaf-spine,,400G",  # 8 loop
        "gpu04,ens1np0,leaf01,swp7,host-leaf,x,fast",  # 9 two problems
    ]
    path = write(tmp_path, "cabling.csv", "\n".join([HEADER, *rows]) + "\n")
    with pytest.raises(FabgenError) as excinfo:
        read_cabling_csv(path)
    found = [(p.line, p.path) for p in problems_of(excinfo)]
    assert found == [
        (3, ""),
        (4, "role"),
        (5, "rail"),
        (6, "speed"),
        (7, "a_port"),
        (8, "b_port"),
        (9, "rail"),
        (9, "speed"),
    ]
    by_line = {p.line: p for p in problems_of(excinfo)}
    assert by_line[4].col == len("gpu02,ens1np0,leaf01,swp3,") + 1
    assert "host-spine" in by_line[4].message and all(role in by_line[4].message for role in CABLING_ROLES)
    assert str(by_line[7]) == f"{path}:7:7: a_port is empty (at a_port)"
    assert all("\n" not in line for line in excinfo.value.lines())


def test_csv_malformed_quoting(tmp_path: Path) -> None:
    path = write(tmp_path, "c.csv", HEADER + '\ngpu01,"ens1np0,leaf01,swp1,host-leaf,0,400G\n')
    with pytest.raises(FabgenError) as excinfo:
        read_cabling_csv(path)
    assert single_problem(excinfo).message.startswith("malformed CSV")


def test_csv_problem_flood_is_capped(tmp_path: Path) -> None:
    rows = [f"gpu{i},ens1np0,leaf01,swp{i},bogus,0,400G" for i in range(200)]
    with pytest.raises(FabgenError) as excinfo:
        read_cabling_csv(write(tmp_path, "c.csv", "\n".join([HEADER, *rows])))
    problems = problems_of(excinfo)
    assert len(problems) == 51 and problems[-1].message == "... and 150 more problems"


def test_csv_speeds_and_rails_accepted(tmp_path: Path) -> None:
    rows = [
        f"h{i},ens1np0,leaf01,swp{i},host-leaf,{rail},{speed}"
        for i, (rail, speed) in enumerate([("0", "400G"), ("7", "800G"), ("", "1.6T"), ("12", "100Gbps")])
    ]
    assert len(read_cabling_csv(write(tmp_path, "c.csv", "\n".join([HEADER, *rows])))) == 4


# --------------------------------------------------------------------------- read_wiring


def test_read_wiring_collects_problems_from_all_files(tmp_path: Path) -> None:
    write(tmp_path, "gpu01.json", "{")
    write(tmp_path, "cabling.csv", "nope\n")
    write(tmp_path, "notes.md", "ignored: not a wiring suffix")
    (tmp_path / ".hidden").mkdir()
    write(tmp_path / ".hidden", "x.json", "{")  # hidden directories are skipped
    with pytest.raises(FabgenError) as excinfo:
        read_wiring([tmp_path, tmp_path / "absent.json"])
    files = [Path(p.file).name for p in problems_of(excinfo)]
    assert files == ["absent.json", "cabling.csv", "gpu01.json"]


def test_read_wiring_sniffs_csv_without_csv_suffix(tmp_path: Path) -> None:
    path = tmp_path / "plan.txt"
    shutil.copy(LAB / "cabling.csv", path)
    assert {link.origin for link in read_wiring([path])} == {"csv"}


def test_read_wiring_walks_subdirectories_in_sorted_order(tmp_path: Path) -> None:
    shutil.copytree(LAB / "json", tmp_path / "b")
    shutil.copytree(LAB / "json0", tmp_path / "a")
    links = read_wiring([tmp_path])
    assert ends(links) == LAB_WIRING
    assert all(Path(link.source).parent.name == "a" for link in links)  # first source wins a tie


def test_read_wiring_empty() -> None:
    assert read_wiring([]) == []
