"""Run Debian's real slurmctld (with its own munged) on loopback, read ``scontrol show topology``, stop both by pid.

Skips without root or without slurm-wlm/munge; fails instead under
``FABGEN_REQUIRE_REFERENCE=1`` (as ``.ci/run`` sets), so CI cannot pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

SLURMCTLD = "/usr/sbin/slurmctld"
MUNGED = "/usr/sbin/munged"


def require_slurm() -> None:
    missing = [tool for tool in (SLURMCTLD, MUNGED) if not os.access(tool, os.X_OK)]
    missing += [] if shutil.which("scontrol") else ["scontrol"]
    reason = ""
    if missing:
        reason = f"not installed: {', '.join(missing)} (apt-get install slurm-wlm munge)"
    elif os.geteuid() != 0:
        reason = "slurmctld and munged need root here (SlurmUser=root, a root-owned munge key)"
    if reason:
        if os.environ.get("FABGEN_REQUIRE_REFERENCE") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(pid_file: Path, proc: subprocess.Popen[bytes] | None) -> None:
    """Stop the daemon we started, by the pid we know (never by name)."""
    pids = {proc.pid} if proc is not None else set()
    if pid_file.is_file():
        text = pid_file.read_text().strip()
        if text.isdigit():
            pids.add(int(text))
    for pid in pids:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    if proc is not None:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@contextmanager
def slurmctld(tmp: Path, topology_conf: str, nodes: str) -> Iterator[dict[str, str]]:
    """A running slurmctld whose topology.conf is ``topology_conf``; yields the environment for scontrol.

    ``nodes`` is the hostlist of every node (all with NodeAddr=127.0.0.1).
    """
    tmp.mkdir(parents=True, exist_ok=True)
    os.chmod(tmp, 0o700)
    key = tmp / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o600)
    sock = tmp / "munge.socket"
    munge_pid = tmp / "munged.pid"
    munge = subprocess.Popen(
        [MUNGED, "-F", "--force", f"--socket={sock}", f"--key-file={key}", f"--pid-file={munge_pid}",
         f"--log-file={tmp / 'munged.log'}", f"--seed-file={tmp / 'munged.seed'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctld: subprocess.Popen[bytes] | None = None
    ctld_pid = tmp / "slurmctld.pid"
    try:
        _wait(lambda: sock.exists(), 10, "munged socket", tmp / "munged.log")
        state = tmp / "state"
        state.mkdir()
        conf = tmp / "slurm.conf"
        conf.write_text("\n".join([
            "ClusterName=fabgentest",
            f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge",
            f"AuthInfo=socket={sock}",
            "CredType=cred/munge",
            f"StateSaveLocation={state}",
            f"SlurmdSpoolDir={tmp / 'spool'}",
            f"SlurmctldPidFile={ctld_pid}",
            f"SlurmctldLogFile={tmp / 'slurmctld.log'}",
            "SlurmUser=root",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "TopologyPlugin=topology/tree",
            "MpiDefault=none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            f"NodeName={nodes} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN",
            "PartitionName=all Nodes=ALL Default=YES",
        ]) + "\n")
        (tmp / "topology.conf").write_text(topology_conf)
        env = {**os.environ, "SLURM_CONF": str(conf)}
        ctld = subprocess.Popen([SLURMCTLD, "-D", "-i", "-f", str(conf)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def answers() -> bool:
            if ctld is not None and ctld.poll() is not None:
                raise AssertionError(f"slurmctld exited {ctld.returncode}: {_tail(tmp / 'slurmctld.log')}")
            return subprocess.run(["scontrol", "ping"], check=False, env=env, capture_output=True, text=True,
                                  timeout=10).stdout.find("UP") >= 0
        _wait(answers, 30, "slurmctld", tmp / "slurmctld.log")
        yield env
    finally:
        _stop(ctld_pid, ctld)
        _stop(munge_pid, munge)


def show_topology(env: dict[str, str]) -> str:
    result = subprocess.run(["scontrol", "show", "topology"], check=False, env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout


def hostnames(expression: str, env: dict[str, str]) -> list[str]:
    """Slurm's own expansion of a hostlist expression."""
    result = subprocess.run(["scontrol", "show", "hostnames", expression], check=False, env=env, capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:] if log.is_file() else "(no log)"


def _wait(ready: object, seconds: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"{what} not up within {seconds} s: {_tail(log)}")
