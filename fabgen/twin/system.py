"""The few system calls the twin makes: preflight, bounded commands, namespaces, processes.

Everything here is bounded in time (a command that hangs is killed at its
timeout) and names what it touches explicitly: a process is killed by the pid
the twin recorded, and only while its start time still matches (a pid the
kernel reused for someone else's process is left alone).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from fabgen.errors import FabgenError, Problem

FRR_DIR = Path(os.environ.get("FABGEN_FRR_DIR", "/usr/lib/frr"))
"""Debian's frr package puts the daemons here (not on PATH)."""
CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/run/netns")
COMMAND_TIMEOUT_S = 30.0


class TwinError(FabgenError):
    """The twin cannot run here, or a step of it failed: one line, exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__([Problem(message, file="fabgen twin")])


class CommandTimeout(TwinError):
    """A command that did not finish within its time: a failed step, or, to a poll, no answer yet."""


def preflight(need_frr: bool = True) -> None:
    """Refuse early, in one line each, what would otherwise fail half-way through ``up``."""
    if not sys.platform.startswith("linux"):
        raise TwinError(f"needs Linux network namespaces; this is {sys.platform}")
    if os.geteuid() != 0:
        raise TwinError("needs root (network namespaces, veth pairs and FRR's privileges); run it with sudo")
    if shutil.which("ip") is None:
        raise TwinError("iproute2's 'ip' is not installed (apt-get install -y iproute2)")
    if need_frr:
        missing = [d for d in ("zebra", "bgpd") if not os.access(FRR_DIR / d, os.X_OK)]
        if missing or shutil.which("vtysh") is None:
            what = ", ".join([str(FRR_DIR / d) for d in missing] + ([] if shutil.which("vtysh") else ["vtysh"]))
            raise TwinError(f"FRR is not installed ({what} missing); apt-get install -y frr")
        try:
            import pwd

            pwd.getpwnam("frr")
        except KeyError:
            raise TwinError("FRR's user 'frr' does not exist; reinstall Debian's frr package") from None


def run(argv: Sequence[str], *, timeout: float = COMMAND_TIMEOUT_S, input_text: str | None = None,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command to completion within ``timeout``; a failure is a :class:`TwinError` naming it."""
    try:
        proc = subprocess.run(list(argv), input=input_text, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        raise CommandTimeout(f"{argv[0]} did not finish within {timeout:g} s: {' '.join(argv[:6])}") from None
    except FileNotFoundError:
        raise TwinError(f"{argv[0]}: not installed") from None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise TwinError(f"{' '.join(argv[:6])} failed ({proc.returncode}): {detail[0] if detail else 'no output'}")
    return proc


def ip_batch(commands: Sequence[str], netns: str | None = None, *, timeout: float = COMMAND_TIMEOUT_S) -> None:
    """Many ``ip`` commands in one process (``ip -batch -``); stops at the first that fails."""
    if not commands:
        return
    argv = ["ip", *(["-n", netns] if netns else []), "-batch", "-"]
    run(argv, input_text="\n".join(commands) + "\n", timeout=timeout)


def netns_list() -> set[str]:
    """Names of the named network namespaces (``ip netns list``, read from /run/netns)."""
    try:
        return {p.name for p in NETNS_DIR.iterdir()}
    except FileNotFoundError:
        return set()


_libc = ctypes.CDLL(None, use_errno=True)


@contextmanager
def in_netns(name: str) -> Iterator[None]:
    """Run the body with this thread in namespace ``name``, then come back.

    Sockets opened inside stay in that namespace after the switch back, which is
    how one process pings from many hosts at once. setns(2) moves only the
    calling thread.
    """
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(NETNS_DIR / name, os.O_RDONLY)
        try:
            if _libc.setns(target, CLONE_NEWNET) != 0:
                err = ctypes.get_errno()
                raise TwinError(f"setns into {name}: {os.strerror(err)}")
        finally:
            os.close(target)
        try:
            yield
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:  # pragma: no cover - cannot fail for our own namespace
                raise TwinError(f"setns back from {name}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(home)


def sysctl_path(key: str) -> Path:
    return Path("/proc/sys") / key.replace(".", "/")


def read_sysctl(key: str) -> str:
    return sysctl_path(key).read_text(encoding="ascii").strip()


def write_sysctl(key: str, value: str) -> None:
    sysctl_path(key).write_text(value + "\n", encoding="ascii")


def write_netns_sysctls(netns: str, values: Sequence[tuple[str, str]]) -> None:
    """Set ``net.*`` sysctls of one namespace (/proc/sys/net follows the writer's namespace)."""
    with in_netns(netns):
        for key, value in values:
            try:
                write_sysctl(key, value)
            except OSError as exc:
                raise TwinError(f"{netns}: cannot set {key}={value}: {exc.strerror}") from None


def write_netns_proc(netns: str, values: Sequence[tuple[Path, str]]) -> None:
    """Write ``/proc/sys`` files of one namespace (keys with a dot in a device name cannot go through ``key``)."""
    if not values:
        return
    with in_netns(netns):
        for path, value in values:
            try:
                path.write_text(value + "\n", encoding="ascii")
            except OSError as exc:
                raise TwinError(f"{netns}: cannot write {value} to {path}: {exc.strerror}") from None


@dataclass(frozen=True, slots=True)
class Proc:
    """A process the twin started: enough to find it again, and to be sure it is still ours."""

    pid: int
    start: int
    """Start time in clock ticks since boot (/proc/PID/stat field 22): tells a reused pid apart."""
    netns: str
    name: str


def start_time(pid: int) -> int | None:
    """The process's start time, or ``None`` when it is gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def spawn(argv: Sequence[str], netns: str, name: str, log: Path) -> Proc:
    """Start ``argv`` inside ``netns`` (``ip netns exec`` execs it, so the pid is the daemon's), detached."""
    with log.open("ab") as out:
        child = subprocess.Popen(["ip", "netns", "exec", netns, *argv], stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    _children[child.pid] = child
    started = None
    for _ in range(50):  # /proc/PID exists as soon as fork returns; wait only for the stat line to be readable
        started = start_time(child.pid)
        if started is not None or child.poll() is not None:
            break
        time.sleep(0.002)
    return Proc(child.pid, started or 0, netns, name)


_children: dict[int, subprocess.Popen[bytes]] = {}
"""Processes started by this process: reaped here, so ``run`` leaves no zombie behind."""


def alive(proc: Proc) -> bool:
    child = _children.get(proc.pid)
    if child is not None and child.poll() is not None:
        return False
    now = start_time(proc.pid)
    return now is not None and now == proc.start  # 0 (never seen alive) matches nothing


def stop(procs: Sequence[Proc], *, timeout: float = 5.0, graceful: bool = True) -> list[Proc]:
    """SIGTERM every still-ours process, wait up to ``timeout``, SIGKILL the rest; return those that survive.

    ``graceful=False`` freezes them all (SIGSTOP) and then kills them: for daemons whose state dies with
    their namespace anyway. A twin's bgpd that exits gracefully notifies its peers, which recompute and
    withdraw while they wait for their own SIGTERM: 5.6 s of routing churn at 48 switches, for nothing.
    """
    mine = [p for p in procs if alive(p)]
    deadline = time.monotonic() + timeout
    if graceful:
        for p in mine:
            _signal(p, signal.SIGTERM)
    else:
        for p in mine:
            _signal(p, signal.SIGSTOP)  # no daemon sees another go
        deadline = time.monotonic()
    while time.monotonic() < deadline and any(alive(p) for p in mine):
        time.sleep(0.02)
    for p in mine:
        if alive(p):
            _signal(p, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(alive(p) for p in mine):
        time.sleep(0.02)
    for p in mine:
        child = _children.pop(p.pid, None)
        if child is not None:
            with suppress(subprocess.TimeoutExpired):
                child.wait(timeout=0.5)
    return [p for p in mine if alive(p)]


def _signal(proc: Proc, sig: signal.Signals) -> None:
    if start_time(proc.pid) != proc.start:
        return  # gone, or the pid now belongs to someone else
    with suppress(ProcessLookupError):
        os.kill(proc.pid, sig)
