"""Ping many sources to many destinations at once, from inside the twin's host namespaces.

A twin of 32 hosts x 8 rails needs 32 x 31 x 8 = 7,936 pings; one ``ping``
process each is tens of seconds of fork and exec on two cores. So one process
opens one raw ICMP socket per source NIC *inside* that host's namespace
(``setns``, then ``socket``: a socket stays in the namespace it was created in)
and bound to the NIC's address, exactly as ``ping -I ADDR`` binds its socket.
The kernel then routes every echo request by that source, through the host's
``from ADDR`` rule, and delivers the reply only to that socket. Requests are
resent until answered or the deadline passes; nothing ever leaves the twin's
namespaces, since every socket lives in one and every destination is a NIC of
the plan. ``verify`` also runs the real ``ping -I`` once per NIC
(:func:`ping_tool`) so the two can be compared.
"""

from __future__ import annotations

import fcntl
import ipaddress
import os
import resource
import selectors
import shutil
import socket
import struct
import subprocess
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from fabgen.twin.system import in_netns

ICMP_ECHO, ICMP_ECHO_REPLY = 8, 0
PING = shutil.which("ping") or "/usr/bin/ping"
SOL_RAW, ICMP_FILTER = 255, 1
"""linux/icmp.h: a raw ICMP socket's filter, a bit mask of the ICMP types it must not receive."""
RCVBUF = 1 << 20


@dataclass(frozen=True, slots=True)
class Pair:
    netns: str
    source: str
    destination: str


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def echo_request(ident: int, seq: int, payload: bytes = b"fabgen-twin") -> bytes:
    header = struct.pack("!BBHHH", ICMP_ECHO, 0, 0, ident, seq)
    return struct.pack("!BBHHH", ICMP_ECHO, 0, _checksum(header + payload), ident, seq) + payload


def parse_reply(packet: bytes) -> tuple[str, int, int] | None:
    """``(source, ident, seq)`` of an echo reply (raw IPv4 sockets hand over the IP header too)."""
    if len(packet) < 28:
        return None
    ihl = (packet[0] & 0x0F) * 4
    kind, _, _, ident, seq = struct.unpack("!BBHHH", packet[ihl:ihl + 8])
    if kind != ICMP_ECHO_REPLY:
        return None
    return socket.inet_ntoa(packet[12:16]), ident, seq


def _raise_fd_limit(needed: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = needed + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, want) if hard != resource.RLIM_INFINITY else want,
                                                     hard))


def ping_mesh(pairs: Sequence[Pair], *, timeout: float = 5.0, resend: float = 0.3) -> dict[Pair, float | None]:
    """Round-trip time in seconds of each pair, or ``None`` when unanswered within ``timeout``."""
    sources = sorted({(p.netns, p.source) for p in pairs})
    _raise_fd_limit(len(sources))
    sockets: dict[tuple[str, str], socket.socket] = {}
    try:
        for netns, source in sources:
            with in_netns(netns):
                s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            sockets[(netns, source)] = s
            s.setblocking(False)
            # Only echo replies reach the socket (requests from the other hosts' probes are filtered out in the
            # kernel), and room for a full round of them: a drop would cost a resend round.
            s.setsockopt(SOL_RAW, ICMP_FILTER, struct.pack("=I", 0xFFFFFFFF & ~(1 << ICMP_ECHO_REPLY)))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
            s.bind((source, 0))
        return _exchange(pairs, sockets, timeout, resend)
    finally:
        for s in sockets.values():
            s.close()


def _exchange(pairs: Sequence[Pair], sockets: dict[tuple[str, str], socket.socket], timeout: float,
              resend: float) -> dict[Pair, float | None]:
    # epoll, not select(): a pod of 128 hosts x 8 rails holds 1,024 sockets, past select()'s FD_SETSIZE.
    selector = selectors.DefaultSelector()
    keys = list(sockets)
    for n, key in enumerate(keys):
        selector.register(sockets[key], selectors.EVENT_READ, n)
    try:
        with ThreadPoolExecutor(max_workers=SENDERS) as pool:
            answers = _Exchange(pairs, sockets, keys, selector, pool).run(timeout, resend)
    finally:
        selector.close()
    return dict(zip(pairs, answers, strict=True))


SENDERS = max(1, min(4, os.cpu_count() or 1))
"""Threads that send. A ``sendto`` carries its echo through the twin (veth transmit runs the receiving
namespaces' stack in the sender's softirq) and back: about 130 us of kernel time per pair, with the GIL
released, so on two cores two senders halve a 130k-pair round."""


class _Exchange:
    """One ping mesh, pairs by index (a frozen dataclass's hash cost more than the sends at 130k pairs)."""

    def __init__(self, pairs: Sequence[Pair], sockets: dict[tuple[str, str], socket.socket],
                 keys: list[tuple[str, str]], selector: selectors.BaseSelector, pool: ThreadPoolExecutor) -> None:
        self.selector, self.pool = selector, pool
        self.socks = [sockets[k] for k in keys]
        source_index = {k: n for n, k in enumerate(keys)}
        self.idents = [(os.getpid() + n) & 0xFFFF for n in range(len(keys))]
        self.pair_sock: list[int] = []
        self.packets: list[bytes] = []
        self.destinations: list[tuple[str, int]] = []
        self.wanted: dict[tuple[int, int, int], tuple[int, str]] = {}
        seqs = [0] * len(keys)
        for n, pair in enumerate(pairs):
            s = source_index[(pair.netns, pair.source)]
            seq = seqs[s]
            if seq > 0xFFFF:
                raise ValueError(f"more than 65,536 destinations from {pair.source}")
            seqs[s] = seq + 1
            self.pair_sock.append(s)
            self.packets.append(echo_request(self.idents[s], seq))
            self.destinations.append((pair.destination, 0))
            self.wanted[(s, self.idents[s], seq)] = (n, pair.destination)
        self.sent: list[float] = [0.0] * len(pairs)
        self.answered: list[float | None] = [None] * len(pairs)
        self.remaining = len(pairs)

    def _send(self, indexes: Sequence[int]) -> None:
        now = time.monotonic()
        socks, packets, destinations, sent = self.socks, self.packets, self.destinations, self.sent
        for n in indexes:
            try:
                socks[self.pair_sock[n]].sendto(packets[n], destinations[n])
                if not sent[n]:
                    sent[n] = now
            except OSError:
                pass  # unreachable now (no route, link down): resent at the next round

    def _drain(self, wait: float) -> None:
        for ready, _ in self.selector.select(wait):
            s: int = ready.data
            sock = self.socks[s]
            while True:
                try:
                    packet = sock.recv(2048)
                except BlockingIOError:
                    break
                reply = parse_reply(packet)
                if reply is None:
                    continue
                hit = self.wanted.get((s, reply[1], reply[2]))
                if hit is not None and hit[1] == reply[0] and self.answered[hit[0]] is None:
                    self.answered[hit[0]] = time.monotonic() - (self.sent[hit[0]] or time.monotonic())
                    self.remaining -= 1

    def run(self, timeout: float, resend: float) -> list[float | None]:
        deadline = time.monotonic() + timeout
        while self.remaining and time.monotonic() < deadline:
            pending = [n for n, a in enumerate(self.answered) if a is None]
            size = -(-len(pending) // SENDERS)
            rounds = [self.pool.submit(self._send, pending[k:k + size]) for k in range(0, len(pending), size)]
            while not all(r.done() for r in rounds):  # read replies while the senders send
                self._drain(0.005)
            for r in rounds:
                r.result()
            next_send = time.monotonic() + resend  # from the round's end: a 130k-pair round takes a while
            while self.remaining and time.monotonic() < min(next_send, deadline):
                self._drain(max(0.0, min(next_send, deadline) - time.monotonic()))
        self._drain(0)
        return self.answered


ICMP_OVERHEAD = 20 + 8
"""IPv4 and ICMP headers: ``ping -s`` of MTU - 28 makes a packet of exactly the MTU."""
SIOCGIFMTU = 0x8921


def interface_mtu(netns: str, ifname: str) -> int | None:
    """The MTU of ``ifname`` in ``netns`` (SIOCGIFMTU on a socket made there), ``None`` when it does not exist."""
    with in_netns(netns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        answer = fcntl.ioctl(sock, SIOCGIFMTU, struct.pack("16si", ifname.encode()[:15], 0))
    except OSError:
        return None
    finally:
        sock.close()
    return int(struct.unpack("16si", answer)[1])


def ping_tool(netns: str, source: str, destination: str, *, timeout: float = 3.0, size: int | None = None) -> bool:
    """The real ``ping -I SOURCE`` inside ``netns``: one echo, bounded; with ``size``, that payload and DF set."""
    ipaddress.ip_address(source), ipaddress.ip_address(destination)  # never an option or a name
    wait = max(1, int(timeout))
    argv = [PING, "-n", "-q", "-c", "1", "-W", str(wait), "-I", source,
            *(["-M", "do", "-s", str(int(size))] if size is not None else []), destination]
    try:
        # Forked from a thread inside the namespace, ping starts there (a child takes its parent thread's
        # namespaces): no ``ip netns exec``, whose mount namespace and sysfs remount cost 10 ms per ping.
        with in_netns(netns):
            proc = subprocess.run(argv, capture_output=True, timeout=timeout + 2, check=False)
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0
