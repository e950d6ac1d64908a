"""The ``nccl-topo`` target: the plan's topology tree and the XML NCCL reads.

The decisive test renders tests/data/ndv5/spec.yaml (an Azure ND H100 v5-like
host) and compares the result, as a tree, with Azure's published
``ndv5-topo.xml``: same nesting, bus ids, classes, link attributes and CPU
attributes. The other tests pin NCCL's lexical rules, the cpumap format, the
``full`` mode's GPU/NIC details and the registry wiring.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT, require_reference
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

import fabgen.pipeline as pipeline
import fabgen.targets.nccl.topo_check as nccl_topo_check
from fabgen.errors import OutputError, SpecError
from fabgen.plan.topology import (
    BRIDGE_CLASS,
    GPU_CLASS,
    LINK_SPEEDS,
    cpumap,
    link_speed,
    parse_cpulist,
    topology_intent,
)
from fabgen.targets.nccl.topo_check import check_topology_xml
from fabgen.targets.registry import target_names

NDV5 = ROOT / "tests" / "data" / "ndv5" / "spec.yaml"
LAB = EXAMPLES / "lab" / "spec.yaml"
NDV5_PATH = "hosts/_profiles/nd-h100-v5/nccl-topo.xml"
LAB_PATH = "hosts/_profiles/lab-node/nccl-topo.xml"


def render_topo(text: str) -> dict[str, str]:
    plan = pipeline.plan_fabric(pipeline.load_spec(text))
    return pipeline.render_fabric(plan, targets=["nccl-topo"])


def ndv5_text(**replace: str) -> str:
    text = NDV5.read_text()
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def full_mode(version: str) -> str:
    return ndv5_text(**{"version: 2.23.4\n  topology: pci": f"version: {version}\n  topology: full"})


# -- the Azure ND H100 v5 comparison --------------------------------------------------


def nccl_class(value: str) -> str:
    """A class as NCCL sees it: NICs are any 0x02.... (kvDictPciClass prefix match).

    Azure's file describes InfiniBand HCAs (0x020700); fabgen's fabric is RoCE, so
    its NICs are Ethernet controllers (0x020000). NCCL builds the same NIC node
    from both; every other class must match exactly.
    """
    return "NIC" if value.startswith("0x02") else value


CPU_ATTRS = ("numaid", "affinity", "arch", "vendor", "familyid", "modelid")
PCI_ATTRS = ("busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_speed",
             "link_width")
"""What NCCL reads from a ``<pci>`` line. Azure writes ids of 0x0000 on its fake switches and the
ndv5 spec gives them as ``pci_ids``, so the ids must come out exactly too."""


def shape(element: etree._Element) -> tuple:
    """An order-insensitive picture of a topology element and everything below it."""
    names = {"system": ("version",), "cpu": CPU_ATTRS, "pci": PCI_ATTRS}.get(element.tag, tuple(element.attrib))
    attrs = {name: element.get(name) for name in names if element.get(name) is not None}
    if "class" in attrs:
        attrs["class"] = nccl_class(attrs["class"])
    children = sorted(shape(child) for child in element if isinstance(child.tag, str))
    return element.tag, tuple(sorted(attrs.items())), tuple(children)


def test_ndv5_spec_reproduces_azure_topology() -> None:
    reference = require_reference("nccl-topo", "azure-ndv5-topo.xml")
    ours = etree.fromstring(render_topo(NDV5.read_text())[NDV5_PATH].encode())
    theirs = etree.fromstring(reference.read_bytes())
    assert shape(ours) == shape(theirs)


def test_ndv5_nics_are_ethernet_class_and_everything_else_exact() -> None:
    reference = require_reference("nccl-topo", "azure-ndv5-topo.xml")
    ours = etree.fromstring(render_topo(NDV5.read_text())[NDV5_PATH].encode())
    theirs = etree.fromstring(reference.read_bytes())
    classes = sorted(e.get("class") for e in ours.iter("pci"))
    assert classes == sorted(["0x060400"] * 8 + ["0x030200"] * 8 + ["0x020000"] * 8)
    ref = sorted(e.get("class") for e in theirs.iter("pci"))
    assert ref == sorted(["0x060400"] * 8 + ["0x030200"] * 8 + ["0x020700"] * 8)
    # Same children in the same order too (NCCL does not care, people reading a diff do).
    assert [e.get("busid") for e in ours.iter("pci")] == [e.get("busid") for e in theirs.iter("pci")]


def test_real_files_have_the_same_shape_as_their_own_copy() -> None:
    """The comparison is not vacuous: it tells two different real files apart."""
    ndv5 = etree.parse(str(require_reference("nccl-topo", "azure-ndv5-topo.xml"))).getroot()
    ndv4 = etree.parse(str(require_reference("nccl-topo", "azure-ndv4-topo.xml"))).getroot()
    assert shape(ndv5) == shape(ndv5)
    assert shape(ndv5) != shape(ndv4)


def test_shape_notices_a_moved_device() -> None:
    moved = ndv5_text(**{"gpus: [0], nics: [mlx5_0]": "gpus: [0], nics: []",
                         "gpus: [1], nics: [mlx5_1]": "gpus: [1], nics: [mlx5_1, mlx5_0]"})
    base = etree.fromstring(render_topo(NDV5.read_text())[NDV5_PATH].encode())
    other = etree.fromstring(render_topo(moved)[NDV5_PATH].encode())
    assert shape(base) != shape(other)


# -- NCCL's lexical rules ---------------------------------------------------------------

ELEMENT_LINE = re.compile(r'^( {2})*<(/[a-z]+|[a-z]+( [a-z_]+="[^"<>&\t]*")*/?)>$')


@pytest.mark.parametrize("spec", [LAB, NDV5])
@pytest.mark.parametrize("mode", ["pci", "full"])
def test_generated_xml_obeys_nccl_parser(spec: Path, mode: str) -> None:
    text = re.sub(r"\n  topology: \w+\n", "\n", spec.read_text())
    text = text.replace("\nnccl:\n", f"\nnccl:\n  topology: {mode}\n", 1)
    assert pipeline.load_spec(text).nccl.topology == mode
    files = render_topo(text)
    [(path, xml)] = files.items()
    assert check_topology_xml(xml, path) == []
    assert not xml.startswith("<?"), "no XML prolog: NCCL's parser fails on it"
    assert "\t" not in xml and "\r" not in xml
    lines = xml.splitlines()
    assert lines[0].startswith("<!-- ") and lines[0].endswith(" -->")
    assert lines[1] == '<system version="1">' and lines[-1] == "</system>"
    for line in lines[1:]:
        assert ELEMENT_LINE.match(line), f"not one element on one line with single-spaced attributes: {line!r}"
    for busid in re.findall(r'busid="([^"]*)"', xml):
        assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", busid)
    root = etree.fromstring(xml.encode())
    assert sum(1 for _ in root.iter(tag=etree.Element)) <= nccl_topo_check.MAX_NODES - 1


def test_node_count_matches_the_file() -> None:
    for text in (NDV5.read_text(), full_mode("2.30.7"), LAB.read_text()):
        spec = pipeline.load_spec(text)
        [(_path, xml)] = render_topo(text).items()
        intent = topology_intent(spec, next(iter(spec.host_profiles)))
        root = etree.fromstring(xml.encode())
        assert intent.node_count == sum(1 for _ in root.iter(tag=etree.Element))


def test_output_is_deterministic() -> None:
    assert render_topo(full_mode("2.30.7")) == render_topo(full_mode("2.30.7"))


def test_comment_never_holds_double_hyphen() -> None:
    text = NDV5.read_text().replace("name: ndv5-lab", "name: ndv5--lab")
    [(_, xml)] = render_topo(text).items()
    assert "--lab" not in xml
    assert check_topology_xml(xml) == []
    etree.fromstring(xml.encode())


# -- the tree -----------------------------------------------------------------------


def test_devices_without_a_switch_hang_directly_under_their_cpu() -> None:
    text = LAB.read_text()
    text = re.sub(r"    pcie_switches:\n(      - .*\n)+", "", text)
    [(_, xml)] = render_topo(text).items()
    root = etree.fromstring(xml.encode())
    for cpu in root.iter("cpu"):
        children = list(cpu)
        assert children and all(c.tag == "pci" and len(c) == 0 for c in children)
    numa0 = root.find("cpu[@numaid='0']")
    assert [p.get("busid") for p in numa0] == ["0000:19:00.0", "0000:3b:00.0", "0000:18:00.0", "0000:3a:00.0"]
    assert [p.get("class") for p in numa0] == [GPU_CLASS, GPU_CLASS, "0x020000", "0x020000"]


def test_mixed_switch_and_direct_devices() -> None:
    line = '      - {name: sw2, numa: 1, busid: "ffff:ff:03.0", gpus: [2], nics: [mlx5_2]}\n'
    assert line in LAB.read_text()
    text = LAB.read_text().replace(line, "")
    [(_, xml)] = render_topo(text).items()
    numa1 = etree.fromstring(xml.encode()).find("cpu[@numaid='1']")
    assert [(p.get("busid"), p.get("class")) for p in numa1] == [
        ("ffff:ff:04.0", BRIDGE_CLASS), ("0000:9b:00.0", GPU_CLASS), ("0000:9a:00.0", "0x020000")]


def test_link_speed_and_width_come_from_the_spec() -> None:
    text = ndv5_text(**{'{index: 0, pci: "0001:00:00.0", numa: 0, sm: 90, link: {gen: 5, width: 16}}':
                        '{index: 0, pci: "0001:00:00.0", numa: 0, sm: 90, link: {gen: 4, width: 8}}'})
    root = etree.fromstring(render_topo(text)[NDV5_PATH].encode())
    gpu0 = root.find(".//pci[@busid='0001:00:00.0']")
    assert (gpu0.get("link_speed"), gpu0.get("link_width")) == ("16.0 GT/s PCIe", "8")


@pytest.mark.parametrize(("gen", "text"), [(3, "8.0 GT/s PCIe"), (4, "16.0 GT/s PCIe"),
                                           (5, "32.0 GT/s PCIe"), (6, "64.0 GT/s PCIe")])
def test_link_speed_strings_are_nccls(gen: int, text: str) -> None:
    assert link_speed(gen) == text
    assert text in nccl_topo_check.LINK_SPEEDS


def test_every_link_speed_is_a_key_of_nccls_dict() -> None:
    assert set(LINK_SPEEDS.values()) <= nccl_topo_check.LINK_SPEEDS
    with pytest.raises(ValueError):
        link_speed(2)


# -- cpumap -----------------------------------------------------------------------


@pytest.mark.parametrize(("cpulist", "nr_cpus", "expected"), [
    # Published files (shared/reference/nccl-topo): ND v5, ND v4 (4 NUMA nodes), p4d.
    ("0-47", 96, "00000000,0000ffff,ffffffff"),
    ("48-95", 96, "ffffffff,ffff0000,00000000"),
    ("0-23", 96, "00000000,00000000,00ffffff"),
    ("24-47", 96, "00000000,0000ffff,ff000000"),
    ("48-71", 96, "000000ff,ffff0000,00000000"),
    ("72-95", 96, "ffffff00,00000000,00000000"),
    ("0-23,48-71", 96, "000000ff,ffff0000,00ffffff"),
    ("24-47,72-95", 96, "ffffff00,0000ffff,ff000000"),
    # The kernel prints a short leading word when nr_cpu_ids is not a multiple of 32.
    ("0-19", 20, "fffff"),
    ("0-39", 40, "ff,ffffffff"),
    ("32", 40, "01,00000000"),
    ("0", 1, "1"),
    ("0-31", 32, "ffffffff"),
    ("0-31,64-95", 128, "00000000,ffffffff,00000000,ffffffff"),
])
def test_cpumap_matches_sysfs(cpulist: str, nr_cpus: int, expected: str) -> None:
    assert cpumap(parse_cpulist(cpulist), nr_cpus) == expected


def nccl_str_to_cpuset(text: str) -> set[int]:
    """NCCL's ncclStrToCpuset (misc/cpuset.h): words right to left, hex digits within."""
    cpus = set()
    for index, word in enumerate(reversed(text.split(","))):
        value = int(word, 16)
        cpus |= {index * 32 + bit for bit in range(32) if value >> bit & 1}
    return cpus


@given(st.sets(st.integers(0, 511), min_size=1), st.integers(0, 64))
def test_cpumap_reads_back_as_nccl_parses_it(cpus: set[int], spare: int) -> None:
    nr_cpus = max(cpus) + 1 + spare
    text = cpumap(cpus, nr_cpus)
    assert nccl_str_to_cpuset(text) == cpus
    assert re.fullmatch(r"[0-9a-f]{1,8}(,[0-9a-f]{8})*", text)
    assert len(text.split(",")) == (nr_cpus + 31) // 32


def test_cpulist_parsing() -> None:
    assert parse_cpulist("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("5,1-2,2") == [1, 2, 5]
    with pytest.raises(ValueError):
        parse_cpulist("4-2")


def test_affinity_width_spans_all_numa_nodes() -> None:
    """The mask of NUMA 0 is as wide as the machine, not as its own CPUs."""
    spec = pipeline.load_spec(NDV5.read_text())
    intent = topology_intent(spec, "nd-h100-v5")
    assert [c.affinity for c in intent.cpus] == ["00000000,0000ffff,ffffffff", "ffffffff,ffff0000,00000000"]


def test_cpu_without_cpulist_has_no_affinity() -> None:
    text = ndv5_text(**{', cpus: "0-47"}': "}", ', cpus: "48-95"}': "}"})
    root = etree.fromstring(render_topo(text)[NDV5_PATH].encode())
    assert all(cpu.get("affinity") is None for cpu in root.iter("cpu"))


# -- full mode ------------------------------------------------------------------------


def test_full_mode_adds_gpu_and_net_details() -> None:
    root = etree.fromstring(render_topo(full_mode("2.30.7"))[NDV5_PATH].encode())
    gpus = list(root.iter("gpu"))
    assert [(g.get("dev"), g.get("sm")) for g in gpus] == [(str(i), "90") for i in range(8)]
    for gpu in gpus:
        # rank: NCCL overwrites it; gdr: a file value overrides detection (0 disables GDR).
        assert set(gpu.attrib) == {"dev", "sm"}
        assert gpu.getparent().get("class") == GPU_CLASS
    nets = list(root.iter("net"))
    assert [(n.get("name"), n.get("port"), n.get("speed"), n.get("rail")) for n in nets] == [
        (f"mlx5_{i}", "1", "400000", str(i)) for i in range(8)]
    for net in nets:
        assert net.getparent().tag == "nic" and net.getparent().getparent().get("class") == "0x020000"
        assert "dev" not in net.attrib and "gdr" not in net.attrib


def test_rail_attribute_only_from_nccl_2_30_7() -> None:
    old = etree.fromstring(render_topo(full_mode("2.30.5"))[NDV5_PATH].encode())
    assert all(set(n.attrib) == {"name", "port", "speed"} for n in old.iter("net"))
    new = etree.fromstring(render_topo(full_mode("2.31.0"))[NDV5_PATH].encode())
    assert all("rail" in n.attrib for n in new.iter("net"))


def test_pci_mode_has_only_cpu_and_pci() -> None:
    root = etree.fromstring(render_topo(NDV5.read_text())[NDV5_PATH].encode())
    assert {e.tag for e in root.iter(tag=etree.Element)} == {"system", "cpu", "pci"}


def test_full_mode_skips_net_for_nics_off_the_fabric() -> None:
    text = full_mode("2.30.7").replace(
        '    frontend: {netdev: eth0}',
        '      - {name: mlx5_8, netdev: eth9, pci: "0200:00:00.0", numa: 1, speed: 200G}\n'
        '    frontend: {netdev: eth0}')
    root = etree.fromstring(render_topo(text)[NDV5_PATH].encode())
    storage = root.find(".//pci[@busid='0200:00:00.0']")
    assert storage is not None and len(storage) == 0 and storage.getparent().tag == "cpu"
    assert "mlx5_8" not in {n.get("name") for n in root.iter("net")}


# -- registry -----------------------------------------------------------------------


def test_target_is_registered_per_profile() -> None:
    assert "nccl-topo" in target_names()
    assert list(render_topo(LAB.read_text())) == [LAB_PATH]


def test_validator_rejects_a_broken_overlay_template(tmp_path: Path) -> None:
    """The check runs on what was rendered, so a user's template cannot ship a file NCCL rejects."""
    overlay = tmp_path / "nccl"
    overlay.mkdir()
    (overlay / "nccl-topo.xml.j2").write_text('<?xml version="1.0"?>\n<system version="1">\n</system>\n')
    plan = pipeline.plan_fabric(pipeline.load_spec(LAB))
    with pytest.raises(OutputError) as caught:
        pipeline.render_fabric(plan, targets=["nccl-topo"], templates=tmp_path)
    [problem] = caught.value.problems
    assert problem.file == LAB_PATH and (problem.line, problem.col) == (1, 1)
    assert "declaration" in problem.message


# -- PCI switch ids ---------------------------------------------------------------------

SWITCH_IDS = ("vendor", "device", "subsystem_vendor", "subsystem_device")


def switches(text: str, path: str = LAB_PATH) -> list[etree._Element]:
    root = etree.fromstring(render_topo(text)[path].encode())
    return [e for e in root.iter("pci") if e.get("class") == BRIDGE_CLASS]


def test_switch_ids_default_to_no_such_device() -> None:
    """Without ids in the profile, all four are 0xffff (as AWS writes them), so NCCL fills in none from sysfs."""
    found = switches(LAB.read_text())
    assert found
    for switch in found:
        assert [switch.get(a) for a in SWITCH_IDS] == ["0xffff"] * 4


def test_switch_ids_come_from_the_profile() -> None:
    text = LAB.read_text()
    old = 'busid: "ffff:ff:01.0"'
    assert old in text
    text = text.replace(old, old + ', pci_ids: {vendor: "0x1000", device: "0xc030", subsystem_vendor: "0x1000", '
                        'subsystem_device: "0x100b"}', 1)
    got = {s.get("busid"): [s.get(a) for a in SWITCH_IDS] for s in switches(text)}
    assert got["ffff:ff:01.0"] == ["0x1000", "0xc030", "0x1000", "0x100b"]
    assert all(ids == ["0xffff"] * 4 for busid, ids in got.items() if busid != "ffff:ff:01.0")


def test_switch_ids_sit_where_nccls_dumps_put_them() -> None:
    """NCCL's dump order (and AWS's files): busid class vendor device subsystem_vendor subsystem_device link_*."""
    line = next(line for line in render_topo(LAB.read_text())[LAB_PATH].splitlines() if BRIDGE_CLASS in line)
    names = re.findall(r' ([a-z_]+)="', line)
    assert names == ["busid", "class", *SWITCH_IDS, "link_speed", "link_width"]


def test_leaves_carry_no_ids() -> None:
    """A GPU's or NIC's ids are NCCL's to read: a file value would override the real device's."""
    root = etree.fromstring(render_topo(LAB.read_text())[LAB_PATH].encode())
    leaves = [e for e in root.iter("pci") if e.get("class") != BRIDGE_CLASS]
    assert leaves and all(e.get("vendor") is None for e in leaves)


@pytest.mark.parametrize("bad", ["0x10DE", "0x100", "4096", "0x10de0"])
def test_switch_ids_must_be_sysfs_hex(bad: str) -> None:
    text = LAB.read_text().replace('busid: "ffff:ff:01.0"', 'busid: "ffff:ff:01.0", pci_ids: {vendor: "' + bad +
                                   '", device: "0xc030", subsystem_vendor: "0x1000", subsystem_device: "0x100b"}', 1)
    with pytest.raises(SpecError) as caught:
        pipeline.load_spec(text)
    assert any("pci_ids" in (p.path or "") or "vendor" in p.message for p in caught.value.problems)
