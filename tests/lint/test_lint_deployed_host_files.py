"""``lint --deployed`` on the files collected from each host that FG508, FG509 and FG510 read: a site running the plan
has no finding, a profile's copy in a generated tree is compared once, and a symbolic link is never followed (a ``sysctl.conf`` or ``nccl-topo.xml`` pointing at
``/etc/shadow`` must not put its contents in a CI log)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lint_support import deployed_findings, deployed_site

FILES = [("sysctl.conf", "FG508"), ("nccl-topo.xml", "FG509"), ("fabgen-roce-nic.service", "FG510"),
         ("99-fabgen-roce-nic.rules", "FG510"), ("lldpd.conf", "FG510")]


@pytest.mark.parametrize("base", ["lab", "sonic-pod", "cumulus-pod"])
@pytest.mark.parametrize(("name", "code"), FILES)
def test_a_site_running_the_plan_has_no_drift(name: str, code: str, base: str, tmp_path: Path) -> None:
    spec, fabric, root = deployed_site(base, tmp_path)
    assert any(root.glob(f"hosts/*/{name}"))
    assert deployed_findings(spec, fabric, root, code) == []


@pytest.mark.parametrize(("name", "code", "target", "edit", "says"), [
    ("sysctl.conf", "FG508", "host-sysctl", ("ens2np0.arp_announce = 2", "ens2np0.arp_announce = 0"),
     "profile lab-node: sysctl.conf differs from the plan: ens2np0 arp_announce 0 (plan 2)"),
    ("nccl-topo.xml", "FG509", "nccl-topo", ('busid="0000:18:00.0" class="0x020000" link_speed="32.0 GT/s PCIe" '
                                             'link_width="16"', 'busid="0000:18:00.0" class="0x020000" '
                                             'link_speed="32.0 GT/s PCIe" link_width="4"'),
     "profile lab-node: nccl-topo.xml differs from the plan: NIC 0000:18:00.0 link_width 4 (plan 16)"),
    ("lldpd.conf", "FG510", "host-boot", ("portidsubtype ifname", "portidsubtype macaddress"),
     "profile lab-node: lldpd.conf differs from the plan: portidsubtype macaddress (plan ifname)"),
])
def test_a_profile_copy_of_a_generated_tree_is_compared_once(name: str, code: str, target: str,
                                                              edit: tuple[str, str], says: str,
                                                              tmp_path: Path) -> None:
    """A tree as ``generate`` writes it: no host has its own copy, the profile's is read once for all of them."""
    from fabgen.targets.render import render_files

    spec, fabric, root = deployed_site("lab", tmp_path)
    for host in fabric.hosts:
        for collected in (root / "hosts" / host.name).iterdir():
            if collected.name in {file for file, _ in FILES}:
                collected.unlink()
    files, _ = render_files(fabric, [target])
    ((rel, text),) = ((rel, text) for rel, text in files.items() if rel.endswith(f"/{name}"))
    for other, other_text in files.items():  # the profile's other files as fabgen wrote them
        (root / other).parent.mkdir(parents=True, exist_ok=True)
        (root / other).write_text(other_text)
    assert edit[0] in text
    (root / rel).write_text(text.replace(*edit))
    assert [f.message for f in deployed_findings(spec, fabric, root, code)] == [says]


@pytest.mark.parametrize(("name", "code", "secret"), [
    ("sysctl.conf", "FG508", "net.ipv4.conf.ens1np0.rp_filter = s3cr3t-token\n"),
    ("nccl-topo.xml", "FG509", '<system version="1"><cpu numaid="0" affinity="s3cr3t"/></system>\n'),
    ("fabgen-roce-nic.service", "FG510", "[Service]\nExecStart=/s3cr3t\n"),
])
def test_a_linked_host_file_is_not_followed(name: str, code: str, secret: str, tmp_path: Path) -> None:
    spec, fabric, root = deployed_site("lab", tmp_path)
    path = root / "hosts" / "lab01" / name
    target = tmp_path / "secret"
    target.write_text(secret)
    path.unlink()
    os.symlink(target, path)
    findings = deployed_findings(spec, fabric, root, code)
    assert [f.code for f in findings] == [code]
    assert "not read" in findings[0].message and "s3cr3t" not in findings[0].message
