"""host-boot: the unit passes systemd-analyze verify, names escape as systemd-escape does, strict line checks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.hostnet.boot import NIC_PLAN_DEST, NIC_SCRIPT_DEST, boot_problems, device_unit
from tests.helpers import EXAMPLE_NAMES, example, require_tool


def _files(name: str) -> dict[str, str]:
    return render_fabric(plan_fabric(load_spec(example(name))), targets=["host-boot"])


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_systemd_verifies_every_unit(name: str, tmp_path: Path) -> None:
    analyze = require_tool("systemd-analyze")
    units = {p: t for p, t in _files(name).items() if p.endswith(".service")}
    assert units
    for path, text in units.items():
        # verify insists the ExecStart binary exists; point it at a stand-in, keep every other line.
        script = tmp_path / "roce-nic.sh"
        script.write_text("#!/bin/sh\n")
        script.chmod(0o755)
        assert text.count(f"ExecStart={NIC_SCRIPT_DEST} --plan {NIC_PLAN_DEST}\n") == 1
        unit = tmp_path / "fabgen-roce-nic.service"
        unit.write_text(text.replace(f"ExecStart={NIC_SCRIPT_DEST}", f"ExecStart={script}"))
        proc = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, (path, proc.stderr)
        assert "Unknown" not in proc.stderr and "ignoring" not in proc.stderr, proc.stderr


def test_systemd_verify_catches_a_bad_unit(tmp_path: Path) -> None:
    analyze = require_tool("systemd-analyze")
    text = next(t for p, t in _files("lab").items() if p.endswith(".service"))
    unit = tmp_path / "fabgen-roce-nic.service"
    unit.write_text(text.replace("Type=oneshot", "Type=oneshot\nExecStartt=/bin/true"))
    proc = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, check=False)
    assert "Unknown key" in proc.stderr


@pytest.mark.parametrize("netdev", ["ens1np0", "eth-1", "ens1.100", "a_b:c", ".dot", "a b", "a\\b", "a%b", "\u00e9th0"])
def test_device_unit_matches_systemd_escape(netdev: str) -> None:
    escape = require_tool("systemd-escape")
    proc = subprocess.run([escape, "--path", "--suffix=device", f"/sys/subsystem/net/devices/{netdev}"],
                          capture_output=True, text=True, check=True)
    assert device_unit(netdev) == proc.stdout.strip()


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_unit_waits_for_every_backend_netdev_and_lldpd_speaks_for_them(name: str) -> None:
    spec = load_spec(example(name))
    files = _files(name)
    for profile_name, profile in spec.host_profiles.items():
        netdevs = [n.netdev for n in profile.backend_nics()]
        unit = files[f"hosts/_profiles/{profile_name}/fabgen-roce-nic.service"]
        for netdev in netdevs:
            assert f"Wants={device_unit(netdev)}\n" in unit and f"After={device_unit(netdev)}\n" in unit
        lldpd = files[f"hosts/_profiles/{profile_name}/lldpd.conf"]
        assert f"configure system interface pattern {','.join(netdevs)}\n" in lldpd
        rule = files[f"hosts/_profiles/{profile_name}/99-fabgen-roce-nic.rules"]
        assert 'ACTION=="add", SUBSYSTEM=="net", DRIVERS=="mlx5_core"' in rule
    for path, text in files.items():
        assert boot_problems(path, text) == [], path


def test_boot_check_refuses_an_injected_line() -> None:
    text = next(t for p, t in _files("lab").items() if p.endswith(".service"))
    assert boot_problems("x.service", text.replace("Type=oneshot", "Type=oneshot\nExecStartPre=/bin/rm -rf /"))
    assert boot_problems("x.service", text.replace("Type=oneshot", "Type=%n"))
    assert boot_problems("x.conf", "configure system interface pattern a\nunconfigure lldp\n")
    assert boot_problems("x.rules", 'ACTION=="add", RUN+="/bin/sh"\n')
