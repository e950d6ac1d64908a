"""``verify``: does the booted plan route? Each check polls within a bound and reports what failed.

1. ``bgp-sessions``: every planned neighbour of every switch is Established
   (bgpd's own ``show bgp summary json``, through its vty socket).
2. ``ecmp``: every leaf has a route to every in-service host /31 of every other
   leaf, with one next hop over each of its uplinks (the kernel's table, which
   is what forwards, not bgpd's RIB).
3. ``ping`` and ``route-get``: from every in-service host NIC, the same-rail NIC
   of every other host answers an echo sourced from that NIC, and
   ``ip route get DST from SRC`` leaves by that NIC. ``ping-tool`` runs the real
   ``ping -I`` once per NIC as a cross-check of the raw-socket prober.
4. ``cable-cut``: one leaf-spine cable goes down (its leaf end, as a pulled
   cable's carrier does); the leaf's ECMP shrinks to the remaining uplinks and
   the pings pass; the cable comes back; sessions, full ECMP and the pings return.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import struct
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabgen.plan import FabricPlan
from fabgen.twin import system
from fabgen.twin.netlink import main_routes
from fabgen.twin.probe import ICMP_OVERHEAD, Pair, interface_mtu, ping_mesh, ping_tool
from fabgen.twin.state import TwinState
from fabgen.twin.topology import TwinTopology

MAX_LISTED = 20
"""Failures listed per check in the report (the count is always complete)."""
POLL_S = 0.2


@dataclass
class Check:
    name: str
    ok: bool = False
    seconds: float = 0.0
    expected: int = 0
    passed: int = 0
    failures: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "seconds": round(self.seconds, 3), "expected": self.expected,
                "passed": self.passed, "failures": self.failures[:MAX_LISTED],
                "failures_total": len(self.failures), **({"detail": self.detail} if self.detail else {})}


@dataclass(frozen=True)
class Expectations:
    """What the plan says the twin must show, per switch namespace and per host NIC."""

    neighbors: dict[str, tuple[str, ...]]
    """``{netns: (peer address, ...)}`` of every switch."""
    leaf_uplinks: dict[str, tuple[str, ...]]
    """``{leaf netns: (uplink ifname, ...)}``."""
    leaf_subnets: dict[str, tuple[str, ...]]
    """``{leaf netns: (in-service host /31, ...)}``."""
    pairs: tuple[Pair, ...]
    nic_ifname: dict[tuple[str, str], str]
    """``{(host netns, source address): ifname}``."""
    uplink_port: dict[tuple[str, str], tuple[str, str]]
    """``{(leaf netns, ifname): (leaf device, port)}``."""
    nic_mtu: dict[tuple[str, str], int] = field(default_factory=dict)
    """``{(host netns, source address): the plan's backend MTU}`` (``Host.network``)."""


def expectations(fabric: FabricPlan, topology: TwinTopology) -> Expectations:
    neighbors: dict[str, tuple[str, ...]] = {}
    uplinks: dict[str, tuple[str, ...]] = {}
    subnets: dict[str, tuple[str, ...]] = {}
    uplink_port: dict[tuple[str, str], tuple[str, str]] = {}
    for switch in fabric.switches:
        ns = topology.netns[switch.name]
        names = topology.ifnames[switch.name]
        neighbors[ns] = tuple(n.address for n in switch.bgp.neighbors) if switch.bgp else ()
        if switch.tier != "leaf":
            continue
        ups = [p for p in switch.ports if p.direction == "up" and p.peer_kind == "switch" and not p.shutdown]
        uplinks[ns] = tuple(names[p.name] for p in ups)
        for p in ups:
            uplink_port[(ns, names[p.name])] = (switch.name, p.name)
        host_ports = [p for p in switch.ports if p.peer_kind == "host" and not p.shutdown]
        in_service = {(h.name, n.netdev) for h in fabric.hosts for n in h.nics if n.in_service}
        subnets[ns] = tuple(str(ipaddress.ip_interface(p.address).network) for p in host_ports
                            if (p.peer_device, p.peer_port) in in_service)
    by_rail: dict[int, list[tuple[str, str, str]]] = {}
    nic_ifname: dict[tuple[str, str], str] = {}
    nic_mtu: dict[tuple[str, str], int] = {}
    # From the plan, not from the host files: the files are what is under test.
    cabled = {(link.a_device, link.a_port) for link in fabric.links}
    for host in fabric.hosts:
        ns = topology.netns[host.name]
        for iface in host.network.interfaces if host.network else ():
            nic_mtu[(ns, iface.address.partition("/")[0])] = iface.mtu
        for nic in host.nics:
            if not nic.in_service or nic.address is None or nic.rail is None or (host.name, nic.netdev) not in cabled:
                continue
            source, ifname = str(ipaddress.ip_interface(nic.address).ip), topology.ifnames[host.name][nic.netdev]
            by_rail.setdefault(nic.rail, []).append((ns, source, ifname))
            nic_ifname[(ns, source)] = ifname
    pairs = tuple(Pair(ns, src, dst) for nics in by_rail.values() for ns, src, _ in nics
                  for other_ns, dst, _ in nics if other_ns != ns)
    return Expectations(neighbors, uplinks, subnets, pairs, nic_ifname, uplink_port, nic_mtu)


VTYSH_TIMEOUT_S = 10.0
"""One ``show bgp summary`` may take this long. While 48 bgpd converge on 2 cores one can take longer: that
is no answer yet, not a failed twin (:func:`_vtysh_summary`), and the poll asks again until its deadline."""


def _vtysh_summary(netns: str, state: TwinState) -> dict[str, Any]:
    """bgpd's summary, or ``{}`` (every session of the switch counts as absent) when it has not answered."""
    directory = state.directory / netns
    try:
        proc = system.run(["vtysh", "--vty_socket", str(directory), "-d", "bgpd", "-c", "show bgp summary json"],
                          check=False, timeout=VTYSH_TIMEOUT_S)
    except system.CommandTimeout:
        return {}
    try:
        data = json.loads(proc.stdout or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _parallel(fn: Callable[[str], Any], keys: Sequence[str]) -> dict[str, Any]:
    with ThreadPoolExecutor(max_workers=16) as pool:
        return dict(zip(keys, pool.map(fn, keys), strict=True))


def _session_failures(exp: Expectations, state: TwinState) -> tuple[int, list[str]]:
    summaries = _parallel(lambda ns: _vtysh_summary(ns, state), list(exp.neighbors))
    good, bad = 0, []
    for ns, wanted in exp.neighbors.items():
        peers = summaries[ns].get("ipv4Unicast", {}).get("peers", {})
        for address in wanted:
            got = peers.get(address, {}).get("state", "absent")
            if got == "Established":
                good += 1
            else:
                bad.append(f"{ns} neighbor {address}: {got}")
    return good, bad


def _ecmp_failures(exp: Expectations, missing: dict[str, set[str]] | None = None) -> tuple[int, list[str]]:
    """Leaves whose routes to other leaves' host subnets do not use exactly their (remaining) uplinks."""
    good, bad = 0, []
    for ns, uplinks in exp.leaf_uplinks.items():
        want = set(uplinks) - (missing or {}).get(ns, set())
        routes = dict(main_routes(ns))  # an in-process netlink dump: no ip process, no JSON
        verdicts: dict[tuple[str, ...], bool] = {}  # routes share their hop tuples: judge each once
        for other, subnets in exp.leaf_subnets.items():
            if other == ns:
                continue
            for subnet in subnets:
                devs = routes.get(subnet)
                if devs is None:
                    bad.append(f"{ns}: no route to {subnet}")
                    continue
                ok = verdicts.get(devs)
                if ok is None:
                    ok = verdicts[devs] = set(devs) == want and len(devs) == len(want)
                if ok:
                    good += 1
                else:
                    bad.append(f"{ns}: {subnet} via {sorted(devs)}, want {sorted(want)}")
    return good, bad


def _poll(check: Check, probe: Callable[[], tuple[int, list[str]]], expected: int, timeout: float,
          started: float | None = None) -> Check:
    """Probe until it passes or ``timeout`` has passed since ``started``, backing off from 50 ms to POLL_S."""
    start = time.monotonic() if started is None else started
    check.expected = expected
    delay = 0.05
    while True:
        check.passed, check.failures = probe()
        if not check.failures or time.monotonic() - start > timeout:
            break
        time.sleep(delay)
        delay = min(POLL_S, delay * 2)
    check.seconds = time.monotonic() - start
    check.ok = not check.failures and check.passed == expected
    return check


def _tcp_peers(netns: str) -> set[str]:
    """Remote addresses of the namespace's ESTABLISHED TCP connections to or from port 179 (bgp)."""
    with system.in_netns(netns):
        lines = Path("/proc/thread-self/net/tcp").read_text(encoding="ascii").splitlines()[1:]
    peers = set()
    for line in lines:
        fields = line.split()
        if len(fields) < 4 or fields[3] != "01":
            continue
        local_port, (remote, remote_port) = fields[1].partition(":")[2], fields[2].split(":")
        if "00B3" in (local_port, remote_port):
            peers.add(socket.inet_ntoa(struct.pack("=I", int(remote, 16))))  # the kernel prints it in host order
    return peers


def _wait_for_tcp(exp: Expectations, deadline: float) -> None:
    """Wait, cheaply, until every planned session has its TCP connection; bgpd's word is still asked after.

    One ``vtysh`` per switch and poll costs seconds at 48 switches and takes CPU from the very daemons that
    are converging; reading /proc/net/tcp in each namespace costs microseconds.
    """
    pending = {ns: set(wanted) for ns, wanted in exp.neighbors.items() if wanted}
    delay = 0.05
    while pending and time.monotonic() < deadline:
        pending = {ns: left for ns, wanted in pending.items() if (left := wanted - _tcp_peers(ns))}
        if pending:
            time.sleep(delay)
            delay = min(POLL_S, delay * 2)


def check_sessions(exp: Expectations, state: TwinState, timeout: float, name: str = "bgp-sessions") -> Check:
    total = sum(len(v) for v in exp.neighbors.values())
    start = time.monotonic()
    _wait_for_tcp(exp, start + timeout)
    return _poll(Check(name), lambda: _session_failures(exp, state), total, timeout, started=start)


def check_ecmp(exp: Expectations, timeout: float, name: str = "ecmp",
               missing: dict[str, set[str]] | None = None) -> Check:
    total = sum(len(s) for ns in exp.leaf_uplinks for other, s in exp.leaf_subnets.items() if other != ns)
    return _poll(Check(name), lambda: _ecmp_failures(exp, missing), total, timeout)


def check_ping(exp: Expectations, timeout: float, name: str = "ping") -> Check:
    start = time.monotonic()
    check = Check(name, expected=len(exp.pairs))
    answers = ping_mesh(exp.pairs, timeout=timeout)
    rtts = [v for v in answers.values() if v is not None]
    check.passed = len(rtts)
    check.failures = [f"{p.netns} {p.source} -> {p.destination}: no reply" for p, v in answers.items() if v is None]
    if rtts:
        check.detail = {"max_rtt_ms": round(max(rtts) * 1000, 2)}
    check.ok = not check.failures
    check.seconds = time.monotonic() - start
    return check


def check_route_get(exp: Expectations) -> Check:
    """``ip route get DST from SRC`` per pair, one ``ip -batch`` per host namespace."""
    start = time.monotonic()
    check = Check("route-get", expected=len(exp.pairs))
    by_ns: dict[str, list[Pair]] = {}
    for p in exp.pairs:
        by_ns.setdefault(p.netns, []).append(p)

    def one(ns: str) -> list[str]:
        pairs = by_ns[ns]
        # -force: an unroutable pair must not hide the answers for the pairs after it. A failed command
        # prints no JSON, so stderr's "Command failed -:N" lines say which answers are missing.
        proc = system.run(["ip", "-n", ns, "-force", "-j", "-batch", "-"], check=False, timeout=30,
                          input_text="".join(f"route get {p.destination} from {p.source}\n" for p in pairs))
        failed = {int(n) - 1 for n in re.findall(r"Command failed -:(\d+)", proc.stderr)}
        stream = iter(_json_stream(proc.stdout))
        answers = [[] if i in failed else next(stream, []) for i in range(len(pairs))]
        bad = []
        for i, p in enumerate(pairs):
            got = answers[i][0].get("dev") if answers[i] else None
            want = exp.nic_ifname[(ns, p.source)]
            if got != want:
                bad.append(f"{ns} {p.source} -> {p.destination}: "
                           + (f"leaves by {got}, want {want}" if got else f"no route, want {want}"))
        return bad

    failures = _parallel(one, sorted(by_ns))
    check.failures = [f for ns in sorted(failures) for f in failures[ns]]
    check.passed = check.expected - len(check.failures)
    check.ok = not check.failures
    check.seconds = time.monotonic() - start
    return check


def _json_stream(text: str) -> list[list[dict[str, Any]]]:
    """``ip -j -batch`` prints one JSON array per command, back to back."""
    decoder = json.JSONDecoder()
    out: list[list[dict[str, Any]]] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        value, i = decoder.raw_decode(text, i)
        out.append(value if isinstance(value, list) else [])
    return out


def check_host_mtu(exp: Expectations) -> Check:
    """Each in-service host NIC's MTU, as its host files set it, is the plan's backend MTU."""
    start = time.monotonic()
    check = Check("host-mtu", expected=len(exp.nic_ifname))
    for (ns, source), ifname in sorted(exp.nic_ifname.items()):
        want, got = exp.nic_mtu.get((ns, source)), interface_mtu(ns, ifname)
        if got != want:
            check.failures.append(f"{ns} {ifname} ({source}): MTU {got}, the plan's is {want}")
    check.passed = check.expected - len(check.failures)
    check.ok = not check.failures
    check.seconds = time.monotonic() - start
    return check


def check_ping_tool(exp: Expectations) -> Check:
    """One real ``ping -I SRC`` per source NIC to its first same-rail peer, full-size at the plan's MTU with DF.

    Full-size and unfragmentable, so the path really carries the host's MTU: a host file with a smaller
    one fails here (and at ``host-mtu``).
    """
    start = time.monotonic()
    firsts: dict[tuple[str, str], Pair] = {}
    for p in exp.pairs:
        firsts.setdefault((p.netns, p.source), p)
    check = Check("ping-tool", expected=len(firsts))

    def one(p: Pair) -> tuple[Pair, int | None, bool]:
        mtu = exp.nic_mtu.get((p.netns, p.source))
        size = mtu - ICMP_OVERHEAD if mtu else None
        return p, size, ping_tool(p.netns, p.source, p.destination, size=size)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, firsts.values()))
    check.failures = [f"{p.netns} ping -I {p.source}{f' -M do -s {size}' if size else ''} {p.destination}: failed"
                      for p, size, ok in results if not ok]
    check.passed = check.expected - len(check.failures)
    check.ok = not check.failures
    check.seconds = time.monotonic() - start
    return check


def check_cable_cut(exp: Expectations, state: TwinState, timeout: float) -> list[Check]:
    """Cut the first uplink of the first leaf that has more than one, check, restore, check again."""
    leaf = next((ns for ns, ups in exp.leaf_uplinks.items() if len(ups) > 1), None)
    if leaf is None:
        return [Check("cable-cut", ok=True, detail={"skipped": "no leaf has two uplinks"})]
    ifname = exp.leaf_uplinks[leaf][0]
    device, port = exp.uplink_port[(leaf, ifname)]
    where = {"leaf": device, "port": port, "netns": leaf, "ifname": ifname}
    start = time.monotonic()
    system.run(["ip", "-n", leaf, "link", "set", ifname, "down"])
    command_s = time.monotonic() - start  # waits on the kernel's rtnl lock, which every zebra's route updates take
    try:
        cut = check_ecmp(exp, timeout, "cable-cut-ecmp", missing={leaf: {ifname}})
        cut.detail = dict(where, converged_s=round(time.monotonic() - start, 3), link_down_s=round(command_s, 3))
        cut_ping = check_ping(exp, timeout, "cable-cut-ping")
    finally:
        restored_at = time.monotonic()
        system.run(["ip", "-n", leaf, "link", "set", ifname, "up"])
    back = check_sessions(exp, state, timeout, "cable-restore-sessions")
    back_ecmp = check_ecmp(exp, timeout, "cable-restore-ecmp")
    back_ecmp.detail = dict(where, converged_s=round(time.monotonic() - restored_at, 3))
    back_ping = check_ping(exp, timeout, "cable-restore-ping")
    return [cut, cut_ping, back, back_ecmp, back_ping]


@dataclass
class VerifyResult:
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def verify(fabric: FabricPlan, topology: TwinTopology, state: TwinState, *, timeout: float = 30.0,
           cable_cut: bool = True, log: Callable[[str], None] = lambda _: None) -> VerifyResult:
    """Run the checks in order; a failed session check still runs the rest (their failures say more)."""
    exp = expectations(fabric, topology)
    checks = [check_sessions(exp, state, timeout)]
    log(_line(checks[-1]))
    checks.append(check_ecmp(exp, timeout))
    log(_line(checks[-1]))
    for check in (check_ping(exp, min(timeout, 10.0)), check_route_get(exp), check_host_mtu(exp),
                  check_ping_tool(exp)):
        checks.append(check)
        log(_line(check))
    if cable_cut:
        for check in check_cable_cut(exp, state, timeout):
            checks.append(check)
            log(_line(check))
    return VerifyResult(checks)


def _line(check: Check) -> str:
    head = f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.passed}/{check.expected} in {check.seconds:.2f} s"
    return head + "".join(f"\n       {f}" for f in check.failures[:5])
