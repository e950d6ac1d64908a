"""netbox/*.csv: NetBox's own import columns, references that resolve in import order, cables that lint reads back."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from fabgen.cli import main
from fabgen.errors import FabgenError
from fabgen.lint.engine import lint
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.netbox.files import FILES, FORM_FIELDS, check, slug
from tests.helpers import EXAMPLE_NAMES, example, read_wiring

# Values NetBox's choice sets take (netbox/dcim/choices.py, ipam/choices.py at 43fe81f9e) for the columns written.
CHOICES = {
    ("netbox/1-sites.csv", "status"): {"planned", "staging", "active", "decommissioning", "retired"},
    ("netbox/5-devices.csv", "status"): {"offline", "active", "planned", "staged", "failed", "inventory",
                                         "decommissioning"},
    ("netbox/6-interfaces.csv", "type"): {"virtual", "other", "100gbase-x-qsfp28", "200gbase-x-qsfp56",
                                          "400gbase-x-osfp", "800gbase-x-osfp"},
    ("netbox/7-cables.csv", "status"): {"connected", "planned", "decommissioning"},
    ("netbox/7-cables.csv", "side_a_type"): {"dcim.interface"},
    ("netbox/7-cables.csv", "side_b_type"): {"dcim.interface"},
    ("netbox/8-ip-addresses.csv", "status"): {"active", "reserved", "deprecated", "dhcp", "slaac"},
}
REQUIRED = {  # fields the import forms require (required=True, the model's non-blank fields)
    "SiteImportForm": {"name", "slug"}, "ManufacturerImportForm": {"name", "slug"},
    "DeviceRoleImportForm": {"name", "slug"}, "DeviceTypeImportForm": {"manufacturer", "model", "slug"},
    "DeviceImportForm": {"role", "device_type", "site", "status"}, "InterfaceImportForm": {"device", "name", "type"},
    "CableImportForm": {"side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type",
                        "side_b_name"},
    "IPAddressImportForm": {"address", "status"},
}


def _tables(name: str) -> dict[str, list[dict[str, str]]]:
    files = render_fabric(plan_fabric(load_spec(example(name))), targets=["netbox"])
    assert sorted(files) == sorted(p for p, _, _ in FILES)
    return {p: list(csv.DictReader(io.StringIO(t, newline=""))) for p, t in files.items()}


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n != "llama3-24k"])
def test_columns_are_the_import_forms_and_values_its_choices(name: str) -> None:
    tables = _tables(name)
    for path, form, columns in FILES:
        assert set(columns) <= set(FORM_FIELDS[form]), path
        assert REQUIRED[form] <= set(columns), path
        for (p, column), allowed in CHOICES.items():
            if p == path:
                assert {row[column] for row in tables[path]} <= allowed, (path, column)


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n != "llama3-24k"])
def test_every_reference_resolves_in_import_order(name: str) -> None:
    t = _tables(name)
    sites = {r["name"] for r in t["netbox/1-sites.csv"]}
    makers = {r["name"] for r in t["netbox/2-manufacturers.csv"]}
    roles = {r["name"] for r in t["netbox/3-device-roles.csv"]}
    types = {(r["manufacturer"], r["model"]) for r in t["netbox/4-device-types.csv"]}
    assert {r["manufacturer"] for r in t["netbox/4-device-types.csv"]} <= makers
    assert len({r["slug"] for r in t["netbox/4-device-types.csv"]}) == len(types)
    devices = {r["name"] for r in t["netbox/5-devices.csv"]}
    for row in t["netbox/5-devices.csv"]:
        assert row["site"] in sites and row["role"] in roles and (row["manufacturer"], row["device_type"]) in types
    interfaces = {(r["device"], r["name"]) for r in t["netbox/6-interfaces.csv"]}
    assert len(interfaces) == len(t["netbox/6-interfaces.csv"]) and {d for d, _ in interfaces} <= devices
    ends = [(r[f"side_{s}_device"], r[f"side_{s}_name"]) for r in t["netbox/7-cables.csv"] for s in "ab"]
    assert set(ends) <= interfaces and len(set(ends)) == len(ends)  # one cable per interface
    assert {(r["device"], r["interface"]) for r in t["netbox/8-ip-addresses.csv"]} <= interfaces
    assert all(r["address"].count("/") == 1 for r in t["netbox/8-ip-addresses.csv"])


def test_slugs_are_netbox_slugs() -> None:
    assert slug("Arista-7060DX5-32") == "arista-7060dx5-32" and slug("a.b c") == "a-b-c"


def test_cable_import_file_round_trips_as_wiring_with_zero_findings(tmp_path: Path) -> None:
    out = tmp_path / "out"
    lab = str(example("lab"))
    assert main(["generate", lab, "-o", str(out), "--only", "netbox", "-q"]) == 0
    assert main(["lint", lab, "--wiring", str(out / "netbox" / "7-cables.csv")]) == 0


def _export(plan_links: list[tuple[str, str, str, str]]) -> str:
    """The shape of NetBox's cable list "Export > All data" (CableTable's verbose column names)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow(["ID", "Label", "Side A", "Termination A", "Side B", "Termination B", "Device A", "Device B",
                "Status", "Type"])
    for i, (a, ap, b, bp) in enumerate(plan_links, 1):
        w.writerow([i, "", "", ap, "", bp, a, b, "Connected", ""])
    w.writerow([999, "", "", "PSU1", "", "feed-1", "", "", "Connected", "Power"])  # a power feed: skipped
    return out.getvalue()


def test_netbox_export_24k_round_trips_and_a_swap_is_named(tmp_path: Path) -> None:
    spec = load_spec(example("llama3-24k"))
    fabric = plan_fabric(spec)
    links = [(lk.a_device, lk.a_port, lk.b_device, lk.b_port) for lk in fabric.links]
    good = tmp_path / "netbox_cables.csv"
    good.write_text(_export(links), encoding="utf-8-sig")
    assert lint(spec, fabric, wiring=[good]) == []
    swapped = list(links)
    (a1, p1, b1, q1), (a2, p2, b2, q2) = swapped[0], swapped[8]  # gt00001 and gt00002 on rail 0
    assert b1 == b2
    swapped[0], swapped[8] = (a1, p1, b1, q2), (a2, p2, b2, q1)
    bad = tmp_path / "swapped.csv"
    bad.write_text(_export(swapped))
    findings = lint(spec, fabric, wiring=[bad])
    assert [(f.code, f.line) for f in findings] == [("FG251", 2)]


def test_several_terminations_or_a_missing_port_are_located(tmp_path: Path) -> None:
    path = tmp_path / "cables.csv"
    path.write_text("side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name\n"
                    "lab01,dcim.interface,\"ens1np0,ens2np0\",leaf-r0-p00-01,dcim.interface,Ethernet1/1\n"
                    "lab01,dcim.powerport,PSU1,pdu1,dcim.poweroutlet,1\n"
                    "lab02,dcim.interface,,leaf-r0-p00-01,dcim.interface,Ethernet2/1\n")
    with pytest.raises(FabgenError) as info:
        read_wiring([path])
    assert [(p.line, p.col, p.path) for p in info.value.problems] == [(2, 22, "side_a_name"), (4, 22, "side_a_name")]


def test_check_holds_headers() -> None:
    assert check("netbox/1-sites.csv", "name,slug\nx,x\n")
    assert check("netbox/1-sites.csv", "name,slug,status\nx,x\n")
    assert check("netbox/1-sites.csv", "name,slug,status\nx,x,planned\n") == []


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n != "llama3-24k"])
def test_a_host_nic_has_the_mtu_its_host_sets_not_the_switches(name: str) -> None:
    """The MTU NetBox records for a backend NIC is the one ``roce-nic.conf`` gives it (the host network's, 4200
    in the lab), not the leaf's 9214: an out-of-service NIC, which the host does not configure, records the
    same policy as the host's other backend NICs."""
    plan = plan_fabric(load_spec(example(name)))
    files = render_fabric(plan, targets=["netbox", "nic-qos"])
    recorded = {(r["device"], r["name"]): r["mtu"]
                for r in csv.DictReader(io.StringIO(files["netbox/6-interfaces.csv"], newline=""))}
    host_rows = {key: mtu for key, mtu in recorded.items() if key[0] in {h.name for h in plan.hosts}}
    assert host_rows
    for host in plan.hosts:
        set_by_host = {words[1]: words[-1] for line in files[f"hosts/{host.name}/roce-nic.conf"].splitlines()
                       if line.startswith("NIC=") for words in [line[4:].split()]}
        assert set_by_host
        for nic in host.nics:
            if nic.rail is None:
                continue
            expected = set_by_host.get(nic.netdev, next(iter(set_by_host.values())))
            assert host_rows[(host.name, nic.netdev)] == expected, (host.name, nic.netdev)
    leaf_mtus = {s.qos.mtu for s in plan.switches if s.tier == "leaf"}
    assert not {int(m) for m in host_rows.values()} & leaf_mtus, "the switches' MTU, not the hosts'"


def test_a_host_without_a_planned_network_leaves_the_mtu_empty() -> None:
    from dataclasses import replace

    plan = plan_fabric(load_spec(example("sonic-pod")))
    bare = replace(plan, hosts=tuple(replace(h, network=None) for h in plan.hosts))
    rows = list(csv.DictReader(io.StringIO(render_fabric(bare, targets=["netbox"])["netbox/6-interfaces.csv"],
                                           newline="")))
    hosts = {h.name for h in plan.hosts}
    assert {r["mtu"] for r in rows if r["device"] in hosts} == {""}
    assert all(r["mtu"] for r in rows if r["device"] not in hosts and r["type"] != "virtual")
