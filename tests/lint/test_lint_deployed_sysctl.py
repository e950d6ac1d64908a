"""``lint --deployed`` FG508: a host's backend sysctl file against the plan, read as systemd-sysctl and the kernel
read it (later lines win, globs, ``conf.all`` where the larger value counts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_support import deployed_findings, deployed_site, planted_finding, write_deployed

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.hostnet.parse_sysctl import proc_path, read_sysctl


def _fg508(spec: Any, fabric: Any, root: Path) -> list[Any]:
    return deployed_findings(spec, fabric, root, "FG508")


@pytest.mark.parametrize(("edit", "says", "line"), [
    (lambda t: t.replace("ens1np0.rp_filter = 2", "ens1np0.rp_filter = 1"),
     "lab01: sysctl.conf differs from the plan: ens1np0 rp_filter 1 (plan 2)", "ens1np0.rp_filter = 1"),
    (lambda t: t.replace("net.ipv4.conf.ens3np0.arp_announce = 2\n", ""),
     "ens3np0 arp_announce not set (plan 2)", "\x00"),  # nothing to point at: the file's first line
    (lambda t: t.replace("ens3np0.arp_announce = 2", "ens3np0.arp_announce"),
     "ens3np0 arp_announce not set (plan 2)", "\x00"),  # no '=': systemd-sysctl skips the line
    (lambda t: t + "net.ipv4.conf.all.arp_ignore = 8\n",
     "ens1np0 arp_ignore 8 (conf.all) (plan 1); ens2np0 arp_ignore 8 (conf.all) (plan 1)", "all.arp_ignore = 8"),
    (lambda t: t + "net.ipv4.conf.*.arp_announce = 0\nnet.ipv4.conf.*.arp_ignore = 2\n",
     "ens1np0 arp_ignore 2 (conf.all) (plan 1)", "*.arp_ignore = 2"),  # globs reach conf/all, not explicit keys
    (lambda t: t + "net.ipv4.conf.ens2np0.rp_filter = s3cr3t-token\n",
     "ens2np0 rp_filter another value (plan 2)", "s3cr3t-token"),  # the later line wins; its value is not echoed
], ids=["strict", "removed", "no-assignment", "conf-all", "glob", "later-line"])
def test_a_planted_sysctl_edit_is_found_at_its_line(edit: Any, says: str, line: str, tmp_path: Path) -> None:
    finding = planted_finding("sysctl.conf", "FG508", edit, says, line, tmp_path)
    assert "s3cr3t" not in finding.message


def test_a_glob_does_not_override_an_explicit_key_nor_a_lower_conf_all(tmp_path: Path) -> None:
    spec, fabric, root = deployed_site("lab", tmp_path)
    path = root / "hosts" / "lab01" / "sysctl.conf"
    # the distribution's strict default for every interface: ours are explicit (2), and max(1, 2) is 2
    path.write_text("net.ipv4.conf.*.rp_filter = 1\nnet.ipv4.conf.all.arp_ignore = 0\n" + path.read_text())
    assert _fg508(spec, fabric, root) == []


def test_a_host_with_its_own_file_is_held_to_it(tmp_path: Path) -> None:
    """lab04 has a NIC out of service: it installs a file of its own, without that NIC's keys."""
    spec, fabric, root = deployed_site("lab", tmp_path)
    path = root / "hosts" / "lab04" / "sysctl.conf"
    assert path.read_text().count(".arp_ignore = 1") == 3
    path.write_text(path.read_text().replace("ens1np0.arp_ignore = 1", "ens1np0.arp_ignore = 0"))
    findings = _fg508(spec, fabric, root)
    assert [f.message for f in findings] == ["lab04: sysctl.conf differs from the plan: ens1np0 arp_ignore 0 (plan 1)"]


def test_a_profile_copy_no_host_installs_is_left_alone(tmp_path: Path) -> None:
    """Every host has a NIC out of service, so each installs its own file and fabgen writes no profile copy: a
    leftover one in the tree is applied by nobody and compared with nothing."""
    from tests.helpers import edited

    def all_out(data: dict[str, Any]) -> None:
        data["hosts"][0]["overrides"] = {f"lab{i:02d}": {"nics_out_of_service": ["mlx5_3"]} for i in range(1, 5)}
    spec = load_spec(edited(all_out))
    fabric = plan_fabric(spec)
    root = tmp_path / "collected"
    write_deployed(fabric, root)
    stale = root / "hosts" / "_profiles" / "lab-node" / "sysctl.conf"
    stale.parent.mkdir(parents=True)
    stale.write_text("net.ipv4.conf.ens1np0.rp_filter = 1\n")
    assert _fg508(spec, fabric, root) == []
    (root / "hosts" / "lab01" / "sysctl.conf").write_text("net.ipv4.conf.ens1np0.rp_filter = 1\n")
    assert [f.message.split(":")[0] for f in _fg508(spec, fabric, root)] == ["lab01"], "the hosts' own are compared"


def test_the_reader_follows_sysctl_d() -> None:
    assert proc_path("net.ipv4.conf.ens1/100.rp_filter") == proc_path("net/ipv4/conf/ens1.100/rp_filter") \
        == "net/ipv4/conf/ens1.100/rp_filter"
    read = read_sysctl("# c\n; c\n\na.b = 1\na/b=2\n-c.d = x\n-e.f\n*.f = 3\ng.* = 4\nnot an assignment\n"
                       "k.l = \n=5\n")
    assert read.value("a/b") == ("2", 5), "a later assignment wins, either spelling"
    assert read.value("c/d") == ("x", 6), "'-' only silences a failed write"
    assert read.value("e/f") is None, "'-KEY' alone keeps a key out of globs"
    assert read.value("x/f") == ("3", 8) and read.value("g/h") == ("4", 9) and read.value("g/h/i") is None
    assert read.value("k/l") == ("", 11) and read.value("not an assignment") is None
