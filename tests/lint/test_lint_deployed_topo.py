"""``lint --deployed`` FG509: a host's NCCL topology file against the plan, read as NCCL's parser reads it (the
first of a bus id, integers by ``strtol``, link speeds by generation, attributes NCCL ignores left out)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_support import deployed_findings, deployed_site, planted_finding

from fabgen.targets.nccl.parse_topo import TopologyUnreadable, read_topology

NIC0 = '      <pci busid="0000:18:00.0" class="0x020000" link_speed="32.0 GT/s PCIe" link_width="16"/>\n'
GPU0 = '      <pci busid="0000:19:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>\n'
SWITCH1 = '<pci busid="ffff:ff:02.0" class="0x060400"'
_REFUSED = "lab01: nccl-topo.xml not read as written: NCCL refuses or misreads it ("


def _fg509(spec: Any, fabric: Any, root: Path) -> list[Any]:
    return deployed_findings(spec, fabric, root, "FG509")


def _move_nic(text: str) -> str:
    """NIC 0 taken from under its GPU's switch and put under the next switch."""
    assert NIC0 in text
    text = text.replace(NIC0, "")
    head, _, tail = text.partition(SWITCH1)
    line_end = tail.index("\n") + 1
    return head + SWITCH1 + tail[:line_end] + NIC0 + tail[line_end:]


@pytest.mark.parametrize(("edit", "says", "line"), [
    (_move_nic, "lab01: nccl-topo.xml differs from the plan: NIC 0000:18:00.0 under PCI switch ffff:ff:02.0 "
                "(plan PCI switch ffff:ff:01.0)", 'busid="0000:18:00.0"'),
    (lambda t: t.replace(NIC0, NIC0.replace('link_width="16"', 'link_width="8"')),
     "NIC 0000:18:00.0 link_width 8 (plan 16)", 'busid="0000:18:00.0"'),
    (lambda t: t.replace(NIC0, NIC0.replace("32.0 GT/s PCIe", "8 GT/s")),
     "NIC 0000:18:00.0 link_speed 8 GT/s (plan 32.0 GT/s PCIe)", 'busid="0000:18:00.0"'),
    (lambda t: t.replace(GPU0, ""), "GPU 0000:19:00.0 missing", "\x00"),  # nothing to point at: line 1
    (lambda t: t.replace(NIC0, NIC0.replace('class="0x020000"', 'class="0x02secret"')),
     "NIC 0000:18:00.0 class another value (plan 0x020000)", 'busid="0000:18:00.0"'),
    (lambda t: t.replace('affinity="00000000,ffffffff,00000000,ffffffff"', 'affinity="0000ffff"', 1),
     "NUMA node 0 affinity another value (plan 00000000,ffffffff,00000000,ffffffff)", 'numaid="0"'),
    (lambda t: t.replace(GPU0, GPU0 + GPU0.replace("0000:19:00.0", "0000:ee:00.0").replace(
        'link_width="16"', 'link_width="16" vendor="s3cr3t"')), "1 element the plan does not have", "0000:ee:00.0"),
    # a file NCCL's parser refuses or misreads: at its first problem, nothing of it echoed
    (lambda t: t.replace('<pci busid="0000:18:00.0"', '<pci\tbusid="0000:18:00.0"'), _REFUSED, 'busid="0000:18:00.0"'),
    (lambda t: t.replace('link_width="16"/>', 'link_width="016"/>', 1), _REFUSED, 'link_width="016"'),
    (lambda t: t.replace("0000:19:00.0", "0000:18:00.0"), _REFUSED, "0000:18:00.0"),  # NCCL would see the first
    (lambda t: t.replace("</system>", ""), _REFUSED, "<system"),
    (lambda t: '<?xml version="1.0"?>\n' + t, _REFUSED, "<?xml"),
], ids=["nic-moved", "link-width", "link-speed", "gpu-removed", "class", "affinity", "extra-device", "tab", "octal",
        "duplicate-busid", "unclosed", "prolog"])
def test_a_planted_topology_edit_is_found_at_its_line(edit: Any, says: str, line: str, tmp_path: Path) -> None:
    finding = planted_finding("nccl-topo.xml", "FG509", edit, says, line, tmp_path)
    assert "secret" not in finding.message and "s3cr3t" not in finding.message and "0000:ee" not in finding.message
    assert "nccl-topo.xml again" in finding.hint


def test_what_nccl_reads_alike_is_no_drift(tmp_path: Path) -> None:
    """Formatting, a comment, attribute order, hex integers, the older link-speed spelling, a CPU mask without its
    leading zero words and attributes NCCL ignores or overwrites: NCCL builds the same tree."""
    spec, fabric, root = deployed_site("lab", tmp_path)
    path = root / "hosts" / "lab01" / "nccl-topo.xml"
    text = path.read_text()
    reordered = NIC0.replace('class="0x020000" link_speed="32.0 GT/s PCIe" link_width="16"',
                             'link_width="0x10" class="0x020000" link_speed="32 GT/s" host_hash="s3cr3t" x="y"')
    text = text.replace(NIC0, reordered).replace("<!--", "<!-- collected by hand -->\n<!--", 1)
    text = text.replace('affinity="00000000,ffffffff,00000000,ffffffff"', 'affinity="ffffffff,00000000,ffffffff"')
    path.write_text(text.replace("\n    <pci", "\n\n    <pci"))
    assert _fg509(spec, fabric, root) == []


def test_the_reader_builds_nccls_tree() -> None:
    topology = read_topology(
        '<system version="1">\n'
        ' <cpu numaid="0x1" affinity="0000ffff" arch="x86_64">\n'
        '  <pci busid="0000:01:00.0" class="0x060400" link_speed="16 GT/s" link_width="16">\n'
        '   <pci busid="0000:02:00.0" class="0x030200" link_width="16"><gpu dev="0" rank="7" sm="90" gdr="1"/></pci>\n'
        '   <pci busid="0000:03:00.0" class="0x020000"><nic><net name="mlx5_0" dev="3" speed="400000" '
        'guid="0xABC"/></nic></pci>\n'
        "  </pci>\n </cpu>\n</system>\n")
    assert set(topology) == {"system", "NUMA node 1", "0000:01:00.0", "0000:02:00.0", "GPU at 0000:02:00.0",
                             "0000:03:00.0", "NIC at 0000:03:00.0", "net mlx5_0"}
    assert dict(topology["NUMA node 1"].attrs) == {"affinity": "ffff", "arch": "x86_64"}
    assert dict(topology["0000:01:00.0"].attrs)["link_speed"] == "16.0 GT/s PCIe"
    assert topology["0000:02:00.0"].parent == "0000:01:00.0" and topology["net mlx5_0"].parent == \
        "NIC at 0000:03:00.0"
    assert dict(topology["GPU at 0000:02:00.0"].attrs) == {"dev": "0", "sm": "90", "gdr": "1"}, "rank: overwritten"
    assert dict(topology["net mlx5_0"].attrs) == {"speed": "400000", "guid": "0xabc"}, "dev: overwritten"
    assert topology["net mlx5_0"].line == 5
    with pytest.raises(TopologyUnreadable) as refused:
        read_topology('<system version="1">\n<cpu numaid="0">\n</system>\n')
    assert refused.value.line == 3
