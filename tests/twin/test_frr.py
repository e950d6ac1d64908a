"""frr.conf from the routing plan: parsed back against the plan, and accepted by FRR's own parser."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from twin_support import LAB, POD32, require_frr

import fabgen
from fabgen.plan import FabricPlan
from fabgen.twin.frr import frr_files, parse_bgpd_conf
from fabgen.twin.system import TwinError
from tests.helpers import EXAMPLE_NAMES, example

SPECS = {"pod32": POD32, **{name: example(name) for name in EXAMPLE_NAMES if name != "llama3-24k"}}


def _plan(path: Path) -> FabricPlan:
    return fabgen.plan_fabric(fabgen.load_spec(path))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_planned_neighbor_network_and_path_count_is_in_frr_conf(name: str) -> None:
    fabric = _plan(SPECS[name])
    routed = [s for s in fabric.switches if s.bgp is not None]
    assert routed, "every example routes"
    for switch in routed:
        assert switch.bgp is not None
        parsed = parse_bgpd_conf(frr_files(switch).bgpd)
        assert parsed.asn == switch.bgp.asn
        assert parsed.router_id == switch.bgp.router_id
        assert parsed.neighbors == {n.address: n.remote_asn for n in switch.bgp.neighbors}
        assert len(parsed.neighbors) == len(switch.bgp.neighbors), "no neighbour twice"
        assert parsed.networks == switch.bgp.networks
        assert parsed.maximum_paths == switch.bgp.maximum_paths
        assert parsed.multipath_relax == switch.bgp.multipath_relax


def test_lab_leaf_conf_reads_as_frr_syntax() -> None:
    leaf = _plan(LAB).switch("leaf-r0-p00-01")
    text = frr_files(leaf).bgpd
    assert text.startswith("frr defaults datacenter\nhostname leaf-r0-p00-01\n")
    assert " no bgp ebgp-requires-policy\n" in text
    assert " neighbor 10.10.0.32 remote-as 4200010000\n" in text
    assert "  network 10.10.0.0/31\n" in text and "  maximum-paths 4\n" in text
    rail3 = frr_files(_plan(LAB).switch("leaf-r3-p00-01")).bgpd
    assert "  network 10.10.0.22/31\n" in rail3 and "  network 10.10.0.30/31\n" not in rail3, \
        "lab04's mlx5_3 is out of service: its /31 is not originated"


def test_bfd_and_timers_are_rendered_when_planned() -> None:
    leaf = _plan(LAB).switch("leaf-r0-p00-01")
    assert leaf.bgp is not None
    from fabgen.plan.model import BfdIntent

    bgp = dataclasses.replace(leaf.bgp, bfd=BfdIntent(interval_ms=300, multiplier=3), keepalive=3, hold=9)
    files = frr_files(dataclasses.replace(leaf, bgp=bgp))
    assert " timers bgp 3 9\n" in files.bgpd
    assert files.bgpd.count(" bfd profile fabgen\n") == len(bgp.neighbors)
    assert files.bfdd is not None and "  transmit-interval 300\n" in files.bfdd
    assert parse_bgpd_conf(files.bgpd).bfd_neighbors == tuple(n.address for n in bgp.neighbors)


def test_a_string_that_could_break_a_line_is_refused() -> None:
    leaf = _plan(LAB).switch("leaf-r0-p00-01")
    assert leaf.bgp is not None
    bad = dataclasses.replace(leaf.bgp.neighbors[0], description="spine-01:Ethernet1/1\n neighbor 1.2.3.4 shutdown")
    bgp = dataclasses.replace(leaf.bgp, neighbors=(bad, *leaf.bgp.neighbors[1:]))
    with pytest.raises(TwinError, match="cannot go into an FRR config line"):
        frr_files(dataclasses.replace(leaf, bgp=bgp))


def test_a_switch_without_routing_is_refused() -> None:
    leaf = dataclasses.replace(_plan(LAB).switch("leaf-r0-p00-01"), bgp=None)
    with pytest.raises(TwinError, match="no routing plan"):
        frr_files(leaf)


def _frr_check(daemon: str, conf: Path) -> str:
    """``DAEMON -C -f CONF``: FRR's parser; it exits 0 either way, so its complaints are the verdict."""
    proc = subprocess.run([f"/usr/lib/frr/{daemon}", "-C", "-f", str(conf), "--log", "stdout"],
                          capture_output=True, text=True, timeout=30, check=False)
    out = proc.stdout + proc.stderr
    assert "open configuration file" not in out, out  # FRR reads as user frr: an unreadable file proves nothing
    return out


@pytest.mark.parametrize("name", ["lab", "pod32"])
def test_frr_accepts_every_line(name: str) -> None:
    require_frr()
    tmp_path = Path(tempfile.mkdtemp(prefix="fabgen-frr-check-"))  # pytest's tmp_path is 0700: user frr cannot read
    tmp_path.chmod(0o755)
    from fabgen.plan.model import BfdIntent

    before = set(Path("/var/tmp/frr").glob("*")) if Path("/var/tmp/frr").is_dir() else set()
    try:
        for switch in _plan(SPECS[name]).switches[:4]:
            assert switch.bgp is not None
            bgp = dataclasses.replace(switch.bgp, bfd=BfdIntent(interval_ms=300, multiplier=3), keepalive=3, hold=9)
            files = frr_files(dataclasses.replace(switch, bgp=bgp))
            for daemon, text in (("bgpd", files.bgpd), ("zebra", files.zebra), ("bfdd", files.bfdd or "")):
                conf = tmp_path / f"{switch.name}-{daemon}.conf"
                conf.write_text(text)
                out = _frr_check(daemon, conf)
                assert "No such command" not in out and "Unknown command" not in out, out
                assert "% " not in out, out
        bad = tmp_path / "bad.conf"
        bad.write_text("router bgp 65000\n neighbor 10.0.0.1 remote-az 65001\n")
        assert "No such command" in _frr_check("bgpd", bad), "the check can fail"
    finally:
        after = set(Path("/var/tmp/frr").glob("*")) if Path("/var/tmp/frr").is_dir() else set()
        shutil.rmtree(tmp_path, ignore_errors=True)
        for leftover in after - before:  # FRR's dry run leaves a crash-log directory per process
            shutil.rmtree(leftover, ignore_errors=True)
