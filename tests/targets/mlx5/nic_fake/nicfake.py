"""A fake mlx5 host on which the generated NIC scripts run for real.

:class:`FakeHost` builds, under a test's ``tmp_path``:

* ``root/sys/...``: the files the scripts read and write (OFED ``ecn/`` sysfs,
  upstream debugfs ``cc_params``, rdma_cm configfs, OFED ``traffic_class``,
  the lockdown file), with the driver's defaults;
* ``bin/``: stub ``mlnx_qos``, ``ethtool``, ``dcb`` and ``mlxconfig`` that keep
  the NIC's DCB/pause/NV state in JSON files under ``state/``, print what the
  real tools print (formats taken from mlnx-tools ``python/mlnx_qos`` and
  iproute2 ``dcb/``), apply the mlx5 kernel's rules that matter here, and log
  every call to ``state/calls.jsonl``.

Kernel behaviour a plain file cannot have (EPERM when re-enabling an enabled
ECN priority; debugfs refusing access under lockdown) is emulated by making
files unwritable or unreadable and running the script without
CAP_DAC_OVERRIDE (see :func:`unprivileged_prefix`).

The stubs themselves are in ``nicstubs.py``: ``bin/<tool>`` runs
``nicstubs.stub_main("<tool>", argv)``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicstubs import DCBX_CEE, DCBX_HOST, DCBX_IEEE, NV_DEFAULTS, STATE_ENV

__all__ = ["DCBX_CEE", "DCBX_HOST", "DCBX_IEEE", "FakeHost", "FakeNic", "unprivileged_prefix"]

# Upstream debugfs defaults (nic.md 1b, observed values; 0 where none was observed).
DEBUGFS_DEFAULTS = {
    "rp_clamp_tgt_rate": 0, "rp_clamp_tgt_rate_ati": 1, "rp_time_reset": 300, "rp_byte_reset": 32767,
    "rp_threshold": 1, "rp_max_rate": 0, "rp_ai_rate": 5, "rp_hai_rate": 50, "rp_min_dec_fac": 50,
    "rp_min_rate": 1, "rp_rate_to_set_on_first_cnp": 0, "rp_dce_tcp_g": 1019, "rp_dce_tcp_rtt": 1,
    "rp_rate_reduce_monitor_period": 4, "rp_initial_alpha_value": 1023, "rp_gd": 11,
    "np_min_time_between_cnps": 4, "np_cnp_dscp": 48, "np_cnp_prio_mode": 0, "np_cnp_prio": 6,
    "rtt_resp_dscp_valid": 0, "rtt_resp_dscp": 0,
}
# The same parameters as MLNX_OFED sysfs files (en_sysfs.c).
OFED_NAMES = {
    "rp_clamp_tgt_rate": "roce_rp/clamp_tgt_rate", "rp_clamp_tgt_rate_ati": "roce_rp/clamp_tgt_rate_after_time_inc",
    "rp_time_reset": "roce_rp/rpg_time_reset", "rp_byte_reset": "roce_rp/rpg_byte_reset",
    "rp_threshold": "roce_rp/rpg_threshold", "rp_max_rate": "roce_rp/rpg_max_rate", "rp_ai_rate": "roce_rp/rpg_ai_rate",
    "rp_hai_rate": "roce_rp/rpg_hai_rate", "rp_min_dec_fac": "roce_rp/rpg_min_dec_fac",
    "rp_min_rate": "roce_rp/rpg_min_rate", "rp_rate_to_set_on_first_cnp": "roce_rp/rate_to_set_on_first_cnp",
    "rp_dce_tcp_g": "roce_rp/dce_tcp_g", "rp_dce_tcp_rtt": "roce_rp/dce_tcp_rtt",
    "rp_rate_reduce_monitor_period": "roce_rp/rate_reduce_monitor_period",
    "rp_initial_alpha_value": "roce_rp/initial_alpha_value", "rp_gd": "roce_rp/rpg_gd",
    "np_min_time_between_cnps": "roce_np/min_time_between_cnps", "np_cnp_dscp": "roce_np/cnp_dscp",
    "np_cnp_prio": "roce_np/cnp_802p_prio",
}

SYSTEM_COMMANDS = ("mkdir", "rmdir", "cat", "stat", "id")
"""External commands the scripts may run besides the NIC tools."""

BASH = shutil.which("bash") or "/bin/bash"

OLD = 1_000_000_000
"""mtime (seconds) given to every fake file at build time: a later mtime means a write."""


@dataclass(frozen=True)
class FakeNic:
    name: str
    netdev: str
    pci: str
    port: int = 1


def unprivileged_prefix() -> list[str] | None:
    """Command prefix under which file modes bind, or None if this machine cannot do it.

    Root ignores modes, so for root the scripts run via ``setpriv`` without
    CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH; a non-root user needs nothing.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    prefix = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False)
    return prefix if probe.returncode == 0 else None


class FakeHost:
    """The fake host: its file tree, its tools' state and their logs."""

    def __init__(self, base: Path, nics: Sequence[FakeNic], *, ofed: bool, debugfs: bool = True,
                 tools: Iterable[str] = ("mlnx_qos", "ethtool", "dcb", "mlxconfig"),
                 params_subdir: Iterable[str] = (), lockdown: str = "none") -> None:
        self.base = base
        self.root = base / "root"
        self.sys = self.root / "sys"
        self.state = base / "state"
        self.bin = base / "bin"
        self.sysbin = base / "sysbin"
        self.nics = list(nics)
        self.ofed = ofed
        for d in (self.root, self.state, self.bin, self.sysbin):
            d.mkdir(parents=True)
        # Only the system commands the scripts use: a real dcb or ethtool on this
        # machine must never be reached instead of a (deliberately absent) stub.
        for command in SYSTEM_COMMANDS:
            found = shutil.which(command)
            if found:
                (self.sysbin / command).symlink_to(found)
        for nic in self.nics:
            self._build_nic(nic, debugfs=debugfs, params_subdir=nic.netdev in set(params_subdir))
        security = self.sys / "kernel" / "security"
        security.mkdir(parents=True)
        modes = ["none", "integrity", "confidentiality"]
        (security / "lockdown").write_text(" ".join(f"[{m}]" if m == lockdown else m for m in modes) + "\n")
        for tool in tools:
            self.install(tool)
        self.age()

    # ---- building ------------------------------------------------------------------
    def _build_nic(self, nic: FakeNic, *, debugfs: bool, params_subdir: bool) -> None:
        net = self.sys / "class" / "net" / nic.netdev
        net.mkdir(parents=True)
        (net / "mtu").write_text("1500\n")  # what mlx5 creates a netdev with
        if self.ofed:
            for debug_name, ofed_name in OFED_NAMES.items():
                side, file = ofed_name.split("/")
                where = net / "ecn" / side / ("params" if params_subdir else "")
                where.mkdir(parents=True, exist_ok=True)
                (where / file).write_text(f"{DEBUGFS_DEFAULTS[debug_name]}\n")
            for side in ("roce_rp", "roce_np"):
                enable = net / "ecn" / side / "enable"
                enable.mkdir(parents=True, exist_ok=True)
                for p in range(8):
                    (enable / str(p)).write_text("1\n")  # ROCE_CC_PRIO_MASK 255: all on
            tc = self.sys / "class" / "infiniband" / nic.name / "tc" / str(nic.port)
            tc.mkdir(parents=True)
            (tc / "traffic_class").write_text("")
        if debugfs:
            cc = self.debugfs_dir(nic)
            cc.mkdir(parents=True)
            for name, value in DEBUGFS_DEFAULTS.items():
                (cc / name).write_text(f"{value}\n")
        port = self.sys / "kernel" / "config" / "rdma_cm" / nic.name / "ports" / str(nic.port)
        port.mkdir(parents=True)
        (port / "default_roce_mode").write_text("RoCE v2\n")
        (port / "default_roce_tos").write_text("0\n")
        self.save(f"nic-{nic.netdev}", {
            "dcbx": DCBX_CEE | DCBX_IEEE, "apps": {}, "pfc_en": 0, "delay": 7,
            "prio_tc": [1, 0, 2, 3, 4, 5, 6, 7], "tsa": ["vendor"] * 8, "bw": [100] * 8,
            "pause": {"autoneg": "off", "rx": "on", "tx": "on"}, "link_flaps": 0,
        })

    def install(self, tool: str) -> None:
        """Put the stub ``tool`` on the fake PATH."""
        here = Path(__file__).resolve().parent
        path = self.bin / tool
        path.write_text(
            f"#!{sys.executable} -S\n"
            "import sys\n"
            f"sys.path.insert(0, {str(here)!r})\n"
            "import nicstubs\n"
            f"sys.exit(nicstubs.stub_main({tool!r}, sys.argv[1:]))\n"
        )
        path.chmod(0o755)

    def add_nv_device(self, pci: str, values: dict[str, int] | None = None) -> None:
        """An adapter for the mlxconfig stub: port-1 parameters with their defaults."""
        table = {**NV_DEFAULTS, **(values or {})}
        self.save(f"nv-{pci}", {f"{k}_P1": {"default": v, "current": v, "next": v} for k, v in table.items()})

    def debugfs_dir(self, nic: FakeNic) -> Path:
        return self.sys / "kernel" / "debug" / "mlx5" / nic.pci / "cc_params"

    def ecn_dir(self, nic: FakeNic) -> Path:
        return self.sys / "class" / "net" / nic.netdev / "ecn"

    # ---- state -----------------------------------------------------------------
    def load(self, name: str) -> dict[str, Any]:
        return json.loads((self.state / f"{name}.json").read_text())

    def save(self, name: str, data: dict[str, Any]) -> None:
        (self.state / f"{name}.json").write_text(json.dumps(data, indent=1, sort_keys=True))

    def nic_state(self, nic: FakeNic) -> dict[str, Any]:
        return self.load(f"nic-{nic.netdev}")

    def calls(self) -> list[dict[str, Any]]:
        log = self.state / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def changing_calls(self) -> list[dict[str, Any]]:
        """Calls that asked a tool to change something (whether or not it did)."""
        return [c for c in self.calls() if c["writes"]]

    def clear_calls(self) -> None:
        (self.state / "calls.jsonl").unlink(missing_ok=True)

    def files(self) -> dict[str, tuple[str, int]]:
        """Every file of the fake tree: relative path -> (content, mtime in s)."""
        out = {}
        for path in sorted(self.root.rglob("*")):
            if path.is_dir() and not path.is_symlink():
                continue
            if path.is_file():
                st = path.lstat()
                try:
                    text = path.read_text()
                except PermissionError:  # pragma: no cover - runs as a user that cannot read it
                    text = "<unreadable>"
                out[str(path.relative_to(self.root))] = (text, int(st.st_mtime))
        return out

    def written(self) -> dict[str, str]:
        """Files written since the last :meth:`age`: relative path -> content."""
        return {p: text for p, (text, mtime) in self.files().items() if mtime != OLD}

    def age(self) -> None:
        """Mark every file as old, so the next run's writes stand out."""
        for path in self.root.rglob("*"):
            if path.is_file():
                os.utime(path, (OLD, OLD))

    def kernelize(self) -> None:
        """What the kernel would now show for values the script wrote in its input format."""
        for path in self.sys.glob("class/infiniband/*/tc/*/traffic_class"):
            text = path.read_text().strip()
            if text.isdigit():
                path.write_text(f"Global tclass={text}\n")
                os.utime(path, (OLD, OLD))

    def lock(self, paths: Iterable[Path], mode: int = 0o444) -> None:
        for path in paths:
            os.chmod(path, mode)

    def lock_all(self) -> None:
        """Every file read-only: a run that writes anything now fails."""
        self.lock(p for p in self.root.rglob("*") if p.is_file())

    def nv_reset(self) -> None:
        """A firmware reset: next-boot values become the running ones."""
        for path in self.state.glob("nv-*.json"):
            data = json.loads(path.read_text())
            for entry in data.values():
                entry["current"] = entry["next"]
            path.write_text(json.dumps(data, indent=1, sort_keys=True))

    # ---- running -------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        return {"PATH": f"{self.bin}:{self.sysbin}", STATE_ENV: str(self.state), "LC_ALL": "C"}

    def run(self, script: Path, *args: str, prefix: Sequence[str] = (), root: bool = True,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        command = [*prefix, BASH, str(script), *(("--root", str(self.root)) if root else ()), *args]
        return subprocess.run(command, capture_output=True, text=True, env=self.env(), timeout=timeout, check=False)
