"""Read a namespace's IPv4 main routing table over rtnetlink, in this process.

``verify`` polls every leaf's kernel table until ECMP has converged. At 128
hosts x 8 rails a leaf holds about a thousand routes of 32 next hops each, and
``ip -j route show`` per leaf and poll (a process, its JSON printer and our
JSON parser) cost 9 s a round on two cores, load the daemons under test, and
so slowed the convergence being measured. A dump over a netlink socket
opened inside the namespace (``setns``, then ``socket``: it stays there)
returns the same facts for a fraction of the cost: each route's destination
and the interface of each next hop, as ``ip route show`` prints them.

Only reads; the socket is bound to the kernel (port 0), so nothing here can
send anything anywhere but to the kernel of the twin's own namespace.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

from fabgen.twin.system import TwinError, in_netns

NLMSG_ERROR, NLMSG_DONE = 2, 3
RTM_NEWLINK, RTM_GETLINK, RTM_NEWROUTE, RTM_GETROUTE = 16, 18, 24, 26
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
IFLA_IFNAME = 3
RTA_DST, RTA_OIF, RTA_MULTIPATH, RTA_TABLE = 1, 4, 9, 15
RT_TABLE_MAIN = 254
MAX_BYTES = 64 << 20
"""Bound of one dump: no table the twin builds comes near it; a runaway kernel answer stops here."""

_NLMSG = struct.Struct("=IHHII")
_RTMSG = struct.Struct("=BBBBBBBBI")
_IFINFO = struct.Struct("=BxHiII")
_RTATTR = struct.Struct("=HH")
_RTNH = struct.Struct("=HBBi")


def _attrs(data: bytes, offset: int, end: int) -> Iterator[tuple[int, bytes, int]]:
    """``(type, payload, payload offset)`` of each rtattr in ``data[offset:end]``."""
    while offset + 4 <= end:
        length, kind = _RTATTR.unpack_from(data, offset)
        if length < 4:
            return
        yield kind & 0x3FFF, data[offset + 4:offset + length], offset + 4
        offset += (length + 3) & ~3


def _dump(sock: socket.socket, kind: int, body: bytes, seq: int) -> Iterator[tuple[int, bytes]]:
    """Send one dump request and yield ``(message type, message)`` until the kernel says done."""
    sock.send(_NLMSG.pack(_NLMSG.size + len(body), kind, NLM_F_REQUEST | NLM_F_DUMP, seq, 0) + body)
    received = 0
    while True:
        chunk = sock.recv(1 << 20)
        received += len(chunk)
        if not chunk or received > MAX_BYTES:
            raise TwinError("rtnetlink dump ended early or ran past its bound")
        offset = 0
        while offset + _NLMSG.size <= len(chunk):
            length, mtype, _, mseq, _ = _NLMSG.unpack_from(chunk, offset)
            if length < _NLMSG.size:
                raise TwinError("rtnetlink: malformed message")
            message = chunk[offset:offset + length]
            offset += (length + 3) & ~3
            if mseq != seq:
                continue
            if mtype == NLMSG_DONE:
                return
            if mtype == NLMSG_ERROR:
                errno = -struct.unpack_from("=i", message, _NLMSG.size)[0]
                if errno:
                    raise TwinError(f"rtnetlink dump failed: errno {errno}")
                return
            yield mtype, message


def _link_names(sock: socket.socket) -> dict[int, str]:
    names: dict[int, str] = {}
    for mtype, msg in _dump(sock, RTM_GETLINK, _IFINFO.pack(socket.AF_UNSPEC, 0, 0, 0, 0), 1):
        if mtype != RTM_NEWLINK:
            continue
        index = _IFINFO.unpack_from(msg, _NLMSG.size)[2]
        start = _NLMSG.size + _IFINFO.size
        for kind, payload, _ in _attrs(msg, start, len(msg)):
            if kind == IFLA_IFNAME:
                names[index] = payload.rstrip(b"\0").decode("ascii", "replace")
    return names


Route = tuple[str, tuple[str, ...]]
"""``(destination with its prefix length, interface of each next hop)``."""


def main_routes(netns: str) -> list[Route]:
    """The IPv4 unicast routes of ``netns``'s main table, as ``ip route show`` lists them.

    The destination always carries its prefix length (``10.20.0.2/31``, ``10.254.0.1/32``; ``default``).
    """
    with in_netns(netns):
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    try:
        sock.settimeout(10.0)
        sock.bind((0, 0))
        names = _link_names(sock)
        hop_names: dict[tuple[int, ...], tuple[str, ...]] = {}  # a leaf's thousand routes share a few hop sets
        routes: list[Route] = []
        request = _RTMSG.pack(socket.AF_INET, 0, 0, 0, 0, 0, 0, 0, 0)
        for mtype, msg in _dump(sock, RTM_GETROUTE, request, 2):
            if mtype != RTM_NEWROUTE:
                continue
            route = _route(msg, names, hop_names)
            if route is not None:
                routes.append(route)
        return routes
    except OSError as exc:
        raise TwinError(f"{netns}: rtnetlink: {exc}") from None
    finally:
        sock.close()


def _hop_ifindexes(msg: bytes, start: int, size: int) -> tuple[int, ...]:
    """Interface index of each ``rtnexthop``; one slice when they all have the first one's length (the usual case)."""
    first = _RTNH.unpack_from(msg, start)[0] if size >= _RTNH.size else 0
    if first >= _RTNH.size and first % 4 == 0 and size % first == 0 and start % 4 == 0:
        ints = memoryview(msg)[start:start + size].cast("i")
        stride = first // 4
        if all(ints[i * stride] & 0xFFFF == first for i in range(size // first)):
            return tuple(ints[1::stride])
    indexes = []
    offset, end = start, start + size
    while offset + _RTNH.size <= end:
        length, _, _, index = _RTNH.unpack_from(msg, offset)
        if length < _RTNH.size:
            break
        indexes.append(index)
        offset += (length + 3) & ~3
    return tuple(indexes)


def _route(msg: bytes, names: dict[int, str], hop_names: dict[tuple[int, ...], tuple[str, ...]]) -> Route | None:
    family, dst_len, _, _, table, _, _, rtype, _ = _RTMSG.unpack_from(msg, _NLMSG.size)
    if family != socket.AF_INET or rtype != 1:  # RTN_UNICAST only, as ``ip route show`` lists
        return None
    dst = "0.0.0.0"
    hops: tuple[int, ...] = ()
    start = _NLMSG.size + _RTMSG.size
    for kind, payload, where in _attrs(msg, start, len(msg)):
        if kind == RTA_TABLE:
            table = struct.unpack_from("=I", payload)[0]
        elif kind == RTA_DST:
            dst = socket.inet_ntoa(payload[:4])
        elif kind == RTA_OIF and not hops:
            hops = (int(struct.unpack_from("=i", payload)[0]),)
        elif kind == RTA_MULTIPATH:
            hops = _hop_ifindexes(msg, where, len(payload))
    if table != RT_TABLE_MAIN:
        return None
    devs = hop_names.get(hops)
    if devs is None:
        devs = hop_names[hops] = tuple(names.get(i, str(i)) for i in hops)
    return ("default" if dst_len == 0 else f"{dst}/{dst_len}"), devs
