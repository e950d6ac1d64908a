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

import ipaddress
import os
import resource
import selectors
import socket
import struct
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass

from fabgen.twin.system import in_netns

ICMP_ECHO, ICMP_ECHO_REPLY = 8, 0


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
            s.setblocking(False)
            s.bind((source, 0))
            sockets[(netns, source)] = s
        return _exchange(pairs, sockets, timeout, resend)
    finally:
        for s in sockets.values():
            s.close()


def _exchange(pairs: Sequence[Pair], sockets: dict[tuple[str, str], socket.socket], timeout: float,
              resend: float) -> dict[Pair, float | None]:
    ident_of = {key: (os.getpid() + i) & 0xFFFF for i, key in enumerate(sockets)}
    # epoll, not select(): a pod of 128 hosts x 8 rails holds 1,024 sockets, past select()'s FD_SETSIZE.
    selector = selectors.DefaultSelector()
    for key, s in sockets.items():
        selector.register(s, selectors.EVENT_READ, key)
    try:
        return _exchange_on(pairs, sockets, selector, ident_of, timeout, resend)
    finally:
        selector.close()


def _exchange_on(pairs: Sequence[Pair], sockets: dict[tuple[str, str], socket.socket],
                 selector: selectors.BaseSelector, ident_of: dict[tuple[str, str], int], timeout: float,
                 resend: float) -> dict[Pair, float | None]:
    seq_of: dict[Pair, int] = {}
    wanted: dict[tuple[str, str, int, int], Pair] = {}
    per_source: dict[tuple[str, str], int] = {}
    for pair in pairs:
        seq = per_source.get((pair.netns, pair.source), 0)
        per_source[(pair.netns, pair.source)] = seq + 1
        if seq > 0xFFFF:
            raise ValueError(f"more than 65,536 destinations from {pair.source}")
        seq_of[pair] = seq
        wanted[(pair.netns, pair.source, ident_of[(pair.netns, pair.source)], seq)] = pair
    sent: dict[Pair, float] = {}
    answered: dict[Pair, float | None] = {p: None for p in pairs}
    remaining = len(answered)  # a count, not a scan of 130k answers at every wake-up
    deadline = time.monotonic() + timeout
    next_send = 0.0
    while remaining and time.monotonic() < deadline:
        now = time.monotonic()
        if now >= next_send:
            for pair in pairs:
                if answered[pair] is None:
                    key = (pair.netns, pair.source)
                    try:
                        sockets[key].sendto(echo_request(ident_of[key], seq_of[pair]), (pair.destination, 0))
                        sent.setdefault(pair, now)
                    except OSError:
                        pass  # unreachable now (no route, link down): resent at the next round
            next_send = time.monotonic() + resend  # from the round's end: a 130k-pair round takes a while
        for ready, _ in selector.select(max(0.0, min(next_send, deadline) - time.monotonic())):
            netns, source = ready.data
            s = sockets[(netns, source)]
            while True:
                try:
                    packet = s.recv(2048)
                except BlockingIOError:
                    break
                reply = parse_reply(packet)
                if reply is None:
                    continue
                hit = wanted.get((netns, source, reply[1], reply[2]))
                if hit is not None and hit.destination == reply[0] and answered[hit] is None:
                    answered[hit] = time.monotonic() - sent.get(hit, time.monotonic())
                    remaining -= 1
    return answered


def ping_tool(netns: str, source: str, destination: str, *, timeout: float = 3.0) -> bool:
    """The real ``ping -I SOURCE`` inside ``netns``: one echo, bounded."""
    ipaddress.ip_address(source), ipaddress.ip_address(destination)  # never an option or a name
    wait = max(1, int(timeout))
    try:
        proc = subprocess.run(["ip", "netns", "exec", netns, "ping", "-n", "-q", "-c", "1", "-W", str(wait),
                               "-I", source, destination], capture_output=True, timeout=timeout + 2, check=False)
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0
