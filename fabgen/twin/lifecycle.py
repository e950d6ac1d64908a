"""``up`` and ``down``: create the twin from its topology, and remove exactly what was created.

Order of ``up``: state file; neighbour-table limits (root namespace, recorded
first); namespaces; the switches' sysctls (before any interface exists, so
per-device defaults inherit them); veth pairs, created straight into their
namespaces so that no twin interface ever appears in the root namespace;
switch addresses; each host's sysctls, addresses, routes and rules from its
rendered host network files (:mod:`fabgen.twin.hostfiles`, parsed before
anything is created); FRR. Any failure runs ``down`` on what the state file lists and
re-raises, so a failed ``up`` leaves nothing behind either.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import pwd
import re
import shutil
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from fabgen.plan import FabricPlan
from fabgen.twin import system
from fabgen.twin.frr import frr_files
from fabgen.twin.hostfiles import HostSetup, host_setups, ip_commands, namespace_sysctls
from fabgen.twin.state import SysctlChange, TwinState, load_state
from fabgen.twin.system import FRR_DIR, Proc, TwinError, ip_batch, netns_list
from fabgen.twin.topology import Node, TwinTopology, twin_topology

NEIGH_KEYS = ("net.ipv4.neigh.default.gc_thresh1", "net.ipv4.neigh.default.gc_thresh2",
              "net.ipv4.neigh.default.gc_thresh3")
"""The kernel's ARP table is one table for every namespace: these limits (1024 entries by default) are
shared by the whole machine, and a twin resolves two neighbours per cable."""

SWITCH_SYSCTLS = (
    ("net.ipv4.ip_forward", "1"),
    ("net.ipv4.conf.all.rp_filter", "0"),  # ECMP: a packet may come back over another uplink
    ("net.ipv4.conf.default.rp_filter", "0"),
    ("net.ipv4.fib_multipath_hash_policy", "1"),  # hash on L4 ports, as switches hashing RoCE QPs do
    ("net.ipv4.conf.all.ignore_routes_with_linkdown", "1"),  # a cut cable's routes go at once, as on a switch
)
Log = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass
class UpResult:
    state: TwinState
    topology: TwinTopology
    timings_s: dict[str, float] = field(default_factory=dict)


def neigh_targets(cables: int, current: tuple[int, int, int]) -> tuple[int, int, int] | None:
    """New gc_thresh1/2/3 for a twin of ``cables`` cables, or ``None`` when the current ones suffice.

    Room for four entries per cable (two ends, a stale and a fresh entry during a
    cut) on top of 1024 for the rest of the machine; never lowered.
    """
    want3 = 4 * cables + 1024
    if want3 <= current[2]:
        return None
    return max(current[0], want3 // 8), max(current[1], want3 // 2), want3


def switch_dir(state: TwinState, netns: str) -> Path:
    return state.directory / netns


def up(fabric: FabricPlan, *, spec: str, spec_sha256: str, prefix: str, log: Log = _quiet,
       timeout: float = 30.0, host_files: Path | None = None) -> UpResult:
    """Boot the twin; on any failure, tear down what was created and re-raise.

    Hosts are configured from their host-net files as ``fabgen generate``
    renders them, or as they are under ``host_files`` (a generated tree).
    """
    system.preflight()
    topology = twin_topology(fabric, prefix)
    setups = host_setups(fabric, [h.device for h in topology.hosts], host_files)
    unrouted = [s.name for s in fabric.switches if s.bgp is None]
    if unrouted:
        raise TwinError(f"{unrouted[0]} has no routing plan (fabric.routing); the twin boots BGP on every switch")
    if load_state(prefix) is not None:
        raise TwinError(f"twin {prefix} is already up; run 'fabgen twin down' first (or pick another --prefix)")
    clash = sorted(set(topology.netns.values()) & netns_list())
    if clash:
        raise TwinError(f"network namespace {clash[0]} already exists and is not this twin's; pick another --prefix")
    state = TwinState(prefix=prefix, spec=spec, spec_sha256=spec_sha256)
    state.save()
    result = UpResult(state, topology)
    try:
        _up(fabric, topology, setups, state, result, log, timeout)
    except BaseException:
        down(state)
        raise
    return result


def _lap(result: UpResult, key: str, start: float) -> float:
    now = time.perf_counter()
    result.timings_s[key] = round(now - start, 3)
    return now


def _up(fabric: FabricPlan, topology: TwinTopology, setups: dict[str, HostSetup], state: TwinState,
        result: UpResult, log: Log, timeout: float) -> None:
    t0 = start = time.perf_counter()
    _raise_neigh_limits(state, len(topology.cables))
    state.netns = [n.netns for n in topology.nodes]
    state.save()  # recorded before they exist: a crash now still leaves their names for down
    ip_batch([f"netns add {ns}" for ns in state.netns])
    for node in topology.switches:
        system.write_netns_sysctls(node.netns, SWITCH_SYSCTLS)
    start = _lap(result, "namespaces", start)
    log(f"{len(state.netns)} namespaces")

    veths = [f"link add {c.a_ifname} mtu {c.a_mtu} netns {c.a_netns} type veth peer name {c.b_ifname} "
             f"mtu {c.b_mtu} netns {c.b_netns}" for c in topology.cables]
    size = -(-len(veths) // WORKERS)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for future in [pool.submit(ip_batch, veths[k:k + size], timeout=timeout) for k in range(0, len(veths), size)]:
            future.result()
    _each(lambda node: ip_batch(_node_commands(node), node.netns, timeout=timeout), topology.switches)
    start = _lap(result, "links", start)
    log(f"{len(topology.cables)} veth pairs")

    # Hosts before FRR, not beside it: run together, each of the hosts' ip batches and zebra's start-up
    # netlink dumps queued behind the other on the kernel's rtnl lock (hosts took 17.8 s instead of 4 at 128x8).
    _configure_hosts(topology, setups, log, timeout)
    start = _lap(result, "hosts", start)
    _start_frr(fabric, topology, state, timeout)
    _lap(result, "frr", start)
    state.status = "up"
    state.timings_s = dict(result.timings_s, up=round(time.perf_counter() - t0, 3))
    result.timings_s["up"] = state.timings_s["up"]
    state.save()
    log(f"FRR on {len(topology.switches)} switches")


def _node_commands(node: Node) -> list[str]:
    commands = ["link set lo up"]
    if node.loopback:
        commands.append(f"address add {ipaddress.ip_interface(node.loopback)} dev lo")
    for iface in node.ifaces:
        if iface.address is not None:
            commands.append(f"address add {ipaddress.ip_interface(iface.address)} dev {iface.name}")
        if iface.up:
            commands.append(f"link set {iface.name} up")
    return commands


WORKERS = 4
"""Namespaces configured at once: each is an ``ip`` process, and their start-up overlaps the kernel's work."""


def _each(fn: Callable[[Node], None], nodes: Sequence[Node]) -> None:
    """``fn`` on every node, ``WORKERS`` at a time; the first failure is raised once all have finished."""
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        for future in [pool.submit(fn, node) for node in nodes]:
            future.result()


def _configure_hosts(topology: TwinTopology, setups: dict[str, HostSetup], log: Log, timeout: float) -> None:
    """Each host namespace as its files say: sysctls first (before its NICs are up), then one ``ip`` batch."""
    skipped: set[str] = set()

    def one(node: Node) -> None:
        setup = setups[node.device]
        ifnames = topology.ifnames[node.device]
        values, not_applied = namespace_sysctls(setup, ifnames)
        system.write_netns_proc(node.netns, values)
        skipped.update(".".join(s.parts) for s in not_applied)
        commands = ["link set lo up", *ip_commands(setup, ifnames)]
        proc = system.run(["ip", "-n", node.netns, "-batch", "-"], input_text="\n".join(commands) + "\n",
                          timeout=timeout, check=False)
        if proc.returncode != 0:
            raise TwinError(f"{node.device}: its host files ({', '.join(setup.files)}) do not apply: "
                            f"{_batch_failure(proc.stderr, commands)}")

    _each(one, topology.hosts)
    files = sum(len(setups[n.device].files) for n in topology.hosts)
    log(f"{len(topology.hosts)} hosts from {files} host network files")
    if skipped:
        log(f"not applied (not per network namespace): {', '.join(sorted(skipped))}")


def _batch_failure(stderr: str, commands: list[str]) -> str:
    """``ip -batch`` names the failed line as ``Command failed -:N``: show that command and the kernel's reason."""
    reason = next((line.strip() for line in stderr.splitlines() if line.startswith("Error")), stderr.strip())
    match = re.search(r"Command failed -:(\d+)", stderr)
    if match and 0 < int(match.group(1)) <= len(commands):
        return f"'ip {commands[int(match.group(1)) - 1]}': {reason}"
    return reason or "ip -batch failed"


def _raise_neigh_limits(state: TwinState, cables: int) -> None:
    current = tuple(int(system.read_sysctl(k)) for k in NEIGH_KEYS)
    targets = neigh_targets(cables, (current[0], current[1], current[2]))
    if targets is None:
        return
    # Highest first: the kernel wants thresh1 <= thresh2 <= thresh3 at every step.
    for key, old, new in sorted(zip(NEIGH_KEYS, current, targets, strict=True), key=lambda t: -t[2]):
        if new == old:
            continue
        state.sysctls.append(SysctlChange(key, str(old), str(new)))
        state.save()
        system.write_sysctl(key, str(new))


def _daemon_argv(daemon: str, directory: Path, config: Path) -> list[str]:
    """Every path a daemon would otherwise share with the machine's own FRR, moved into ``directory``."""
    argv = [str(FRR_DIR / daemon), "-f", str(config), "-i", str(directory / f"{daemon}.pid"),
            "-z", str(directory / "zserv.api"), "--vty_socket", str(directory),
            "-P", "0",  # no TCP vty listener: vtysh reaches the daemon by its socket in ``directory``
            "-u", "frr", "-g", "frr", "--log", f"file:{directory / (daemon + '.log')}"]
    if daemon == "bfdd":
        argv += ["--bfdctl", str(directory / "bfdd.sock")]
    return argv


def _wait_for(paths: list[Path], what: str, deadline: float, procs: list[Proc], state: TwinState) -> None:
    """Poll until every path exists; fail at once if a daemon died, or at the deadline."""
    pending = list(paths)
    while pending:
        pending = [p for p in pending if not p.exists()]
        if not pending:
            return
        dead = [p for p in procs if not system.alive(p)]
        if dead:
            out = switch_dir(state, dead[0].netns) / f"{dead[0].name}.out"
            detail = out.read_text(errors="replace").strip().splitlines()[-1:] if out.exists() else []
            raise TwinError(f"{dead[0].name} in {dead[0].netns} exited at start: {' '.join(detail) or out}")
        if time.monotonic() > deadline:
            raise TwinError(f"{what} did not appear within the bound: {pending[0]}")
        time.sleep(0.02)


def _start_frr(fabric: FabricPlan, topology: TwinTopology, state: TwinState, timeout: float) -> None:
    frr_user = pwd.getpwnam("frr")
    bfdd_ok = os.access(FRR_DIR / "bfdd", os.X_OK)
    plan: list[tuple[Node, Path, bool]] = []
    for node in topology.switches:
        files = frr_files(fabric.switch(node.device))
        directory = switch_dir(state, node.netns)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "frr.conf").write_text(files.bgpd, encoding="utf-8")
        (directory / "zebra.conf").write_text(files.zebra, encoding="utf-8")
        with_bfd = files.bfdd is not None and bfdd_ok
        if with_bfd and files.bfdd is not None:
            (directory / "bfdd.conf").write_text(files.bfdd, encoding="utf-8")
        for path in [directory, *directory.iterdir()]:
            os.chown(path, frr_user.pw_uid, frr_user.pw_gid)  # FRR drops to user frr before it writes
        plan.append((node, directory, with_bfd))

    deadline = time.monotonic() + timeout
    zebras: list[Proc] = []
    try:
        for node, directory, _ in plan:
            zebras.append(system.spawn(_daemon_argv("zebra", directory, directory / "zebra.conf"), node.netns,
                                       "zebra", directory / "zebra.out"))
    finally:
        state.procs.extend(zebras)
        state.save()
    _wait_for([d / "zserv.api" for _, d, _ in plan], "zebra's zserv socket", deadline, zebras, state)

    others: list[Proc] = []
    try:
        for node, directory, with_bfd in plan:
            if with_bfd:
                others.append(system.spawn(_daemon_argv("bfdd", directory, directory / "bfdd.conf"), node.netns,
                                           "bfdd", directory / "bfdd.out"))
            others.append(system.spawn(_daemon_argv("bgpd", directory, directory / "frr.conf"), node.netns,
                                       "bgpd", directory / "bgpd.out"))
    finally:
        state.procs.extend(others)
        state.save()
    _wait_for([d / "bgpd.vty" for _, d, _ in plan], "bgpd's vty socket", deadline, zebras + others, state)


@dataclass
class DownResult:
    killed: int = 0
    netns_deleted: int = 0
    sysctls_restored: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def down(state: TwinState) -> DownResult:
    """Kill the recorded processes, delete the recorded namespaces, restore the recorded sysctls.

    Keeps going past a failed step (a half-built twin is still removed as far as
    possible) and reports what it could not remove.
    """
    result = DownResult()
    survivors = system.stop(state.procs, graceful=False)  # FRR's state lives in the namespaces about to go
    result.killed = len(state.procs) - len(survivors)
    result.problems += [f"process {p.pid} ({p.name} in {p.netns}) survived SIGKILL" for p in survivors]
    present = netns_list()
    mine = [ns for ns in state.netns if ns in present]
    if mine:
        system.run(["ip", "-force", "-batch", "-"], input_text="".join(f"netns del {ns}\n" for ns in mine),
                   check=False, timeout=60)
    left = sorted(set(mine) & netns_list())
    result.netns_deleted = len(mine) - len(left)
    result.problems += [f"namespace {ns} could not be deleted" for ns in left]
    for change in reversed(state.sysctls):
        try:
            now = system.read_sysctl(change.key)
            if now == change.new:  # nobody changed it since: put it back
                system.write_sysctl(change.key, change.old)
                result.sysctls_restored.append(f"{change.key}={change.old}")
            else:
                result.problems.append(f"{change.key} is {now}, not the {change.new} the twin set: left as is")
        except OSError as exc:
            result.problems.append(f"{change.key}: {exc.strerror}")
    if not result.problems:
        shutil.rmtree(state.directory, ignore_errors=True)
        with contextlib.suppress(OSError):
            state.directory.parent.rmdir()  # /run/fabgen-twin itself, once no twin is left in it
    else:
        state.status = "down-incomplete"
        state.save()
    return result
