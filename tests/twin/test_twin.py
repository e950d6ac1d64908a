"""The twin really boots: lab and a 32-host, 8-rail pod route, a broken host is caught, nothing is left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from twin_support import LAB, POD32, ROOT, require_twin

from fabgen.twin import system
from fabgen.twin.lifecycle import NEIGH_KEYS
from fabgen.twin.netlink import main_routes

FABGEN = [sys.executable, "-m", "fabgen.cli"]
STATE_ROOT = Path("/run/fabgen-twin")


def _fabgen(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FABGEN, *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout, check=False,
                          env={**os.environ, **(env or {})})


def _ours(prefix: str) -> tuple[list[str], list[str]]:
    """Namespaces named PREFIX-N, and processes whose command line names the prefix's state directory."""
    netns = sorted(n for n in system.netns_list() if n.startswith(prefix + "-"))
    procs = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if f"/fabgen-twin/{prefix}/" in cmdline:
                procs.append(f"{entry.name}: {cmdline}")
    return netns, procs


def _assert_nothing_left(prefix: str, sysctls_before: dict[str, str]) -> None:
    netns, procs = _ours(prefix)
    assert netns == [] and procs == []
    assert not (STATE_ROOT / prefix).exists()
    assert {k: system.read_sysctl(k) for k in NEIGH_KEYS} == sysctls_before


def _sysctls() -> dict[str, str]:
    return {k: system.read_sysctl(k) for k in NEIGH_KEYS}


def _run(spec: Path, prefix: str, tmp_path: Path) -> dict[str, Any]:
    require_twin()
    before = _sysctls()
    out = tmp_path / "report.json"
    proc = _fabgen("twin", "run", str(spec), "--prefix", prefix, "--json", str(out))
    report: dict[str, Any] = json.loads(out.read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_nothing_left(prefix, before)
    return report


def test_lab_boots_converges_verifies_and_leaves_nothing(tmp_path: Path) -> None:
    report = _run(LAB, "fgt-lab", tmp_path)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["ok"] and all(c["ok"] for c in checks.values())
    assert checks["bgp-sessions"]["expected"] == 32  # 16 leaf-spine cables, a session at each end
    assert checks["ping"]["expected"] == 3 * 12 + 6  # rails 0-2: 4 hosts x 3 peers; rail 3: lab04 is out
    assert checks["cable-cut-ecmp"]["detail"]["leaf"] == "leaf-r0-p00-01"
    assert report["namespaces"]["lab01"] == "fgt-lab-6"
    assert report["interfaces"]["spine-01"]["Ethernet1/1"] == "Ethernet1-1"
    assert report["down"]["problems"] == [] and report["down"]["namespaces_deleted"] == 10


def test_pod32_boots_converges_verifies_and_leaves_nothing(tmp_path: Path) -> None:
    report = _run(POD32, "fgt-pod", tmp_path)
    checks = {c["name"]: c for c in report["checks"]}
    assert report["ok"]
    assert checks["ping"]["passed"] == checks["ping"]["expected"] == 32 * 31 * 8
    assert checks["bgp-sessions"]["passed"] == 512
    assert checks["ecmp"]["passed"] == checks["ecmp"]["expected"] == 16 * 15 * 16


def _netlink_matches_ip(namespaces: list[str]) -> None:
    """verify reads kernel tables over its own netlink code: it must see what ``ip -j route show`` sees."""
    for ns in namespaces:
        shown = json.loads(subprocess.run(["ip", "-n", ns, "-j", "route", "show"], capture_output=True, text=True,
                                          check=True).stdout)

        def key(route: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
            dst = route["dst"] if route["dst"] == "default" or "/" in route["dst"] else route["dst"] + "/32"
            return dst, tuple(sorted(h["dev"] for h in route.get("nexthops") or [route]))

        mine = sorted((dst, tuple(sorted(devs))) for dst, devs in main_routes(ns))
        assert shown and mine == sorted(map(key, shown)), ns


def test_a_host_without_its_source_rule_fails_verify_and_down_still_cleans(tmp_path: Path) -> None:
    require_twin()
    before = _sysctls()
    prefix = "fgt-brk"
    try:
        up = _fabgen("twin", "up", str(LAB), "--prefix", prefix)
        assert up.returncode == 0, up.stderr
        assert _fabgen("twin", "up", str(LAB), "--prefix", prefix).returncode == 2, "a second up is refused"
        _netlink_matches_ip([f"{prefix}-{n}" for n in range(10)])
        lab01 = f"{prefix}-6"
        subprocess.run(["ip", "-n", lab01, "rule", "del", "priority", "1000"], check=True)  # rail 0's rule
        out = tmp_path / "verify.json"
        verify = _fabgen("twin", "verify", str(LAB), "--prefix", prefix, "--no-cut", "--timeout", "5",
                         "--json", str(out))
        assert verify.returncode == 1, verify.stdout
        checks = {c["name"]: c for c in json.loads(out.read_text())["checks"]}
        assert checks["bgp-sessions"]["ok"] and checks["ecmp"]["ok"]
        assert not checks["route-get"]["ok"]
        assert any(f.startswith(f"{lab01} 10.10.0.1 -> ") for f in checks["route-get"]["failures"])
    finally:
        down = _fabgen("twin", "down", str(LAB), "--prefix", prefix)
    assert down.returncode == 0, down.stdout + down.stderr
    _assert_nothing_left(prefix, before)
    assert _fabgen("twin", "down", str(LAB), "--prefix", prefix).returncode == 0, "down is idempotent"


def test_a_failed_up_removes_what_it_created(tmp_path: Path) -> None:
    require_twin()
    before = _sysctls()
    frr = tmp_path / "frr"
    frr.mkdir()
    (frr / "zebra").symlink_to("/usr/lib/frr/zebra")
    (frr / "bgpd").write_text("#!/bin/sh\necho 'bgpd: refusing to start' >&2\nexit 3\n")
    (frr / "bgpd").chmod(0o755)
    proc = _fabgen("twin", "up", str(LAB), "--prefix", "fgt-fail", env={"FABGEN_FRR_DIR": str(frr)})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("fabgen twin: bgpd in fgt-fail-")
    assert "exited at start" in proc.stderr
    _assert_nothing_left("fgt-fail", before)


def test_missing_frr_is_one_line_exit_2() -> None:
    proc = _fabgen("twin", "up", str(LAB), env={"FABGEN_FRR_DIR": "/nonexistent"})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert ("FRR is not installed" in lines[0]) if os.geteuid() == 0 else ("needs root" in lines[0])


def test_preflight_refusals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(system.TwinError, match="needs Linux"):
        system.preflight()
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(system.TwinError, match="needs root"):
        system.preflight()
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(system, "FRR_DIR", Path("/nonexistent"))
    with pytest.raises(system.TwinError, match="FRR is not installed"):
        system.preflight()


def _host_files(tmp_path: Path) -> Path:
    """The lab's host network files as ``fabgen generate`` writes them, for a test to plant a bug in."""
    tree = tmp_path / "out"
    gen = _fabgen("generate", str(LAB), "-o", str(tree), "--only", "host-net", "--only", "host-sysctl")
    assert gen.returncode == 0, gen.stderr
    return tree


def test_a_bug_planted_in_a_rendered_host_file_fails_verify(tmp_path: Path) -> None:
    """The twin configures hosts from their files: a missing rule and a rule to the wrong table show up."""
    require_twin()
    before = _sysctls()
    tree = _host_files(tmp_path)
    netplan = tree / "hosts" / "lab01" / "netplan.yaml"
    text = netplan.read_text()
    rail0_rule = '        - from: "10.10.0.1/32"\n          table: 100\n          priority: 1000\n'
    rail1_rule = '        - from: "10.10.0.65/32"\n          table: 101\n'
    assert rail0_rule in text and rail1_rule in text
    text = text.replace(rail0_rule, "").replace("      routing-policy:\n    \"ens2np0\"", "    \"ens2np0\"")
    netplan.write_text(text.replace(rail1_rule, rail1_rule.replace("101", "100")))
    lab02 = tree / "hosts" / "lab02" / "netplan.yaml"
    rails = lab02.read_text().split("mtu: 4200")
    assert len(rails) == 5  # rails 0-3; rail 2's first peer is lab01's rail 2, which this test leaves intact
    lab02.write_text("mtu: 4200".join(rails[:3]) + "mtu: 1500" + "mtu: 4200".join(rails[3:]))
    out = tmp_path / "report.json"
    proc = _fabgen("twin", "run", str(LAB), "--prefix", "fgt-hf", "--host-files", str(tree), "--no-cut",
                   "--timeout", "5", "--json", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checks = {c["name"]: c for c in json.loads(out.read_text())["checks"]}
    assert checks["bgp-sessions"]["ok"] and checks["ecmp"]["ok"]  # the fabric is fine; lab01 is not
    route_get = checks["route-get"]
    assert not route_get["ok"] and route_get["failures_total"] == 6  # rails 0 and 1 of lab01, 3 peers each
    lab01 = "fgt-hf-6"
    assert all(f.startswith(f"{lab01} 10.10.0.1 -> ") or f.startswith(f"{lab01} 10.10.0.65 -> ")
               for f in route_get["failures"])
    assert any(f.endswith("leaves by ens1np0, want ens2np0") for f in route_get["failures"])
    assert not checks["ping"]["ok"]
    # lab02's small MTU: small pings pass, the full-size DF ping and the MTU check do not.
    assert checks["host-mtu"]["failures"] == ["fgt-hf-7 ens3np0 (10.10.0.131): MTU 1500, the plan's is 4200"]
    tool = checks["ping-tool"]["failures"]
    assert "fgt-hf-7 ping -I 10.10.0.131 -M do -s 4172 10.10.0.129: failed" in tool
    assert not any(f.startswith("fgt-hf-7 ping -I 10.10.0.195 ") for f in tool)  # lab02's rail 3, untouched
    _assert_nothing_left("fgt-hf", before)


def test_a_wrong_gateway_in_a_host_file_fails_verify_or_stops_up(tmp_path: Path) -> None:
    """An on-link but wrong gateway (the NIC's own address) boots and fails the pings from that NIC; an
    off-link one is refused by the kernel at ``up``, with the file and the command named."""
    require_twin()
    before = _sysctls()
    tree = _host_files(tmp_path)
    netplan = tree / "hosts" / "lab01" / "netplan.yaml"
    text = netplan.read_text()
    assert text.count('via: "10.10.0.128"') == 2  # rail 2's backend and loopback routes
    netplan.write_text(text.replace('via: "10.10.0.128"', 'via: "10.10.0.129"', 1))
    out = tmp_path / "report.json"
    proc = _fabgen("twin", "run", str(LAB), "--prefix", "fgt-gw", "--host-files", str(tree), "--no-cut",
                   "--timeout", "5", "--json", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    checks = {c["name"]: c for c in json.loads(out.read_text())["checks"]}
    assert checks["route-get"]["ok"]  # it leaves by the right NIC, towards a gateway that is not there
    ping = checks["ping"]
    assert not ping["ok"] and ping["failures_total"] == 3 * 2  # lab01 rail 2 to 3 peers, and their replies
    assert {f.split(" -> ")[0] for f in ping["failures"]} >= {"fgt-gw-6 10.10.0.129"}
    _assert_nothing_left("fgt-gw", before)

    netplan.write_text(text.replace('via: "10.10.0.128"', 'via: "10.10.0.200"', 1))  # not on the NIC's /31
    proc = _fabgen("twin", "up", str(LAB), "--prefix", "fgt-gw", "--host-files", str(tree))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert ("lab01: its host files (hosts/_profiles/lab-node/sysctl.conf, hosts/lab01/netplan.yaml) do not apply"
            in line)
    assert "'ip route add 10.10.0.0/24 via 10.10.0.200 dev ens3np0 src 10.10.0.129 table 102'" in line
    _assert_nothing_left("fgt-gw", before)


def test_host_sysctls_come_from_the_sysctl_file(tmp_path: Path) -> None:
    """Per-namespace keys of the sysctl file a host installs are set in its namespace, a planted change too.

    lab02 shares its profile's file, lab04 (a NIC out of service) has its own: a change planted in each
    reaches exactly the hosts that install that file.
    """
    require_twin()
    before = _sysctls()
    tree = _host_files(tmp_path)
    shared = tree / "hosts" / "_profiles" / "lab-node" / "sysctl.conf"
    shared.write_text(shared.read_text().replace("ens2np0.rp_filter = 2", "ens2np0.rp_filter = 1"))
    own = tree / "hosts" / "lab04" / "sysctl.conf"
    own.write_text(own.read_text().replace("ens1np0.arp_ignore = 1", "ens1np0.arp_ignore = 2"))
    keys = ("arp_ignore", "arp_announce", "rp_filter")
    prefix = "fgt-sc"
    try:
        assert _fabgen("twin", "up", str(LAB), "--prefix", prefix, "--host-files", str(tree)).returncode == 0
        got = {}
        for host, ns in (("lab02", 7), ("lab04", 9)):
            with system.in_netns(f"{prefix}-{ns}"):
                got[host] = {(dev, key): system.read_sysctl(f"net.ipv4.conf.{dev}.{key}")
                             for dev in ("ens1np0", "ens2np0") for key in keys}
    finally:
        assert _fabgen("twin", "down", str(LAB), "--prefix", prefix).returncode == 0
    assert got["lab02"] == {("ens1np0", "arp_ignore"): "1", ("ens1np0", "arp_announce"): "2",
                            ("ens1np0", "rp_filter"): "2", ("ens2np0", "arp_ignore"): "1",
                            ("ens2np0", "arp_announce"): "2", ("ens2np0", "rp_filter"): "1"}
    assert got["lab04"] == {("ens1np0", "arp_ignore"): "2", ("ens1np0", "arp_announce"): "2",
                            ("ens1np0", "rp_filter"): "2", ("ens2np0", "arp_ignore"): "1",
                            ("ens2np0", "arp_announce"): "2", ("ens2np0", "rp_filter"): "2"}
    _assert_nothing_left(prefix, before)
