"""Read an EOS configuration back into the OS-neutral routing picture (:class:`CommonRouting`).

Why: ``lint --deployed`` compares a collected running-config's underlay (ASN,
router-id, addresses, BGP sessions, ECMP width, announced prefixes) with what
fabgen renders for the switch. Like the QoS reader (``parse.py``), it skips
lines it does not know (a running-config has many) and raises ``ValueError``
for a line it reads but cannot interpret.

Read: ``interface EthernetX`` and ``interface Loopback0`` ``ip address``
(``secondary`` ones too), and the one ``router bgp N`` block: ``router-id``,
``maximum-paths``, ``neighbor A remote-as N`` (a session's remote AS may come
from its peer group: ``neighbor A peer group G`` with ``neighbor G remote-as
N``; both spellings, ``peer group`` and ``peer-group``), ``network`` at the top
or under ``address-family ipv4``. ``vrf`` blocks are not the underlay.

States: an Ethernet port's ``shutdown`` (EOS's default is up) and ``speed``
(``forced`` or not; ``auto`` is none) with its lane count (``400g-8``); ``neighbor A shutdown`` (or its peer
group's); ``bgp bestpath as-path multipath-relax``; and whether a session is
activated for IPv4: ``neighbor A activate`` or ``no neighbor A activate`` under
``address-family ipv4`` (or its peer group's), else the instance's default,
which ``no bgp default ipv4-unicast`` turns off. Timers are the session's
``neighbor A timers K H``, its group's, else ``timers bgp K H``; BFD is
``neighbor A bfd`` with its ``bfd interval T min-rx R multiplier M`` line.

Spread: ``ip hardware fib load-balance distribution dynamic`` is ``dlb``; RoCE
QP hashing is the ``default`` sand profile of ``load-balance policies`` with
``fields udp dst-port 4791`` and ``payload bytes`` covering bytes 5-7 (AVD's
byte list: ``5-7``, ``0,5,6,7``, ...). EOS's own hash fields are not read
(fabgen writes none), so the picture's ``ecmp_hash`` is None.
"""

from __future__ import annotations

from fabgen.targets.eos.model import BTH_DEST_QP_BYTES, ROCE_UDP_PORT
from fabgen.targets.eos.parse import INDENT
from fabgen.targets.routing_common import (
    BFD_DEFAULT,
    CommonRouting,
    States,
    address,
    asn,
    is_address,
    lanes_of,
    mbps,
    picture,
    prefix,
    remote,
    uint16,
)


def parse_eos_routing(text: str) -> CommonRouting:
    """The routing picture of an EOS configuration's text.

    One pass over the lines, keeping the top-level command and the one below it a line stands under (EOS nests
    by three spaces): at 2,048 switches the QoS reader's full line tree would cost more than the rest of the
    check.
    """
    loopback: list[str] = []
    addresses: list[tuple[str, str]] = []
    local: int | None = None
    router_id: str | None = None
    max_paths: int | None = None
    remotes: dict[str, str | None] = {}
    groups: dict[str, str] = {}
    """Session -> its peer group."""
    networks: list[str] = []
    state = States()
    shut: set[str] = set()
    """Sessions and peer groups with ``neighbor X shutdown``."""
    activated: dict[str, bool] = {}
    """Session or peer group -> ``activate`` (True) or ``no ... activate`` (False) under ``address-family ipv4``."""
    default_ipv4 = True
    timers: dict[str | None, tuple[int, int]] = {}
    """Session or peer group -> its ``timers``; None -> the instance's ``timers bgp``."""
    bfd: set[str] = set()
    """Sessions and peer groups with ``neighbor X bfd``."""
    bfd_timers: dict[str, tuple[int, int, int]] = {}
    """Session or peer group -> its ``bfd interval T min-rx R multiplier M``."""
    top: list[str] = []
    under: list[str] = []
    middle: list[str] = []
    """The line at depth 2 a deeper one stands under (a sand profile's ``fields udp``)."""
    interface = False
    """``top`` is an ``interface`` line."""
    for raw in text.splitlines():
        body = raw.lstrip(" ")
        if interface and body.startswith(_PORT_NOISE) and len(raw) - len(body) == INDENT:
            continue  # most of a port's lines, and most lines of a leaf: skipped before they are split
        words = body.split()
        if not words or words[0].startswith("!"):
            continue
        depth = (len(raw) - len(body)) // INDENT
        if depth == 0:
            top, under, middle = words, [], []
            interface = len(words) == 2 and words[0] == "interface"
            if words == _DLB:
                state.load_balancing = "dlb"
            if words[:2] == ["router", "bgp"]:
                if local is not None:
                    raise ValueError("two 'router bgp' blocks (EOS runs one BGP instance)")
                if len(words) != 3:
                    raise ValueError("'router bgp' without one AS number")
                local = asn(words[2], "router bgp")
            continue
        if depth == 1:
            under, middle = words, []
            if top == _FIB and words == _DLB_UNDER_FIB:
                state.load_balancing = "dlb"
        elif depth == 2:
            middle = words
        if top == _POLICIES:
            if depth == 3 and under == _DEFAULT_SAND and middle == _ROCE_UDP and words[:2] == ["payload", "bytes"]:
                state.qp_hash = len(words) == 3 and _QP_BYTES.issubset(payload_bytes(words[2]))
            continue
        if len(top) == 2 and top[0] == "interface" and depth == 1 and words[:2] == ["ip", "address"] \
                and (len(words) == 3 or (len(words) == 4 and words[3] == "secondary")):
            if top[1] == "Loopback0":
                loopback.append(prefix(words[2], "interface 'Loopback0'"))
            elif top[1].startswith("Ethernet"):
                addresses.append((top[1], prefix(words[2], f"interface {top[1]!r}")))
        elif len(top) == 2 and top[0] == "interface" and top[1].startswith("Ethernet") and depth == 1:
            if words in (["shutdown"], ["no", "shutdown"]):
                (state.ports_down.add if words == ["shutdown"] else state.ports_down.discard)(top[1])
            elif words[0] == "speed" and len(words) >= 2:
                written = words[2] if words[1] == "forced" and len(words) > 2 else words[1]
                speed, lanes = mbps(written, f"interface {top[1]!r} speed"), lanes_of(written)
                state.speeds.pop(top[1], None)
                state.lanes.pop(top[1], None)
                if speed is not None:
                    state.speeds[top[1]] = speed
                if lanes is not None:
                    state.lanes[top[1]] = lanes
        elif top[:2] != ["router", "bgp"]:
            continue
        elif depth == 2 and under == ["address-family", "ipv4"] and words[0] == "network" and len(words) >= 2:
            networks.append(prefix(words[1], "address-family ipv4 network"))
        elif depth == 2 and under == ["address-family", "ipv4"] and len(words) in (3, 4) \
                and words[-1] == "activate" and words[-3] == "neighbor":
            activated[address(words[-2])] = len(words) == 3
        elif depth != 1:
            continue
        elif words == ["no", "bgp", "default", "ipv4-unicast"]:
            default_ipv4 = False
        elif words == ["bgp", "bestpath", "as-path", "multipath-relax"]:
            state.multipath_relax = True
        elif words[0] == "neighbor" and len(words) >= 3 and words[2] == "shutdown":
            shut.add(address(words[1]))
        elif words[:2] == ["timers", "bgp"] and len(words) == 4:
            timers[None] = (uint16(words[2], "timers bgp"), uint16(words[3], "timers bgp"))
        elif words[0] == "neighbor" and len(words) == 5 and words[2] == "timers":
            timers[address(words[1])] = (uint16(words[3], "neighbor timers"), uint16(words[4], "neighbor timers"))
        elif words[0] == "neighbor" and len(words) >= 3 and words[2] == "bfd":
            _bfd(words, bfd, bfd_timers)
        elif words[0] == "router-id" and len(words) == 2:
            router_id = address(words[1])
        elif words[0] == "maximum-paths" and len(words) >= 2:
            max_paths = int(words[1])
        elif words[0] == "network" and len(words) >= 2:
            networks.append(prefix(words[1], "router bgp network"))
        elif words[0] == "neighbor" and len(words) >= 3:
            _neighbor(words, remotes, groups)
    sessions = {peer: value if value is not None or peer not in groups else remotes.get(groups[peer])
                for peer, value in remotes.items() if is_address(peer)}
    for peer in sessions:
        group = groups.get(peer)
        if peer in shut or group in shut:
            state.shutdown.add(peer)
        if not activated.get(peer, activated.get(group, default_ipv4) if group else default_ipv4):
            state.inactive.add(peer)
        for source in (peer, group, None):
            if source in timers:
                state.timers[peer] = timers[source]
                break
        if peer in bfd or group in bfd:
            state.bfd[peer] = bfd_timers.get(peer) or bfd_timers.get(group or "") or BFD_DEFAULT
    return picture(local, router_id, loopback, addresses, sessions, max_paths, networks, state)


_PORT_NOISE = ("description ", "mtu ", "service-profile ", "no switchport", "switchport ")
"""How lines of a port begin that say nothing of routing (the reader would split and drop them)."""
_DLB = ["ip", "hardware", "fib", "load-balance", "distribution", "dynamic"]
_FIB, _DLB_UNDER_FIB = _DLB[:3], _DLB[3:]
"""The same command nested: ``ip hardware fib`` with ``load-balance distribution dynamic`` below it."""
_POLICIES = ["load-balance", "policies"]
_DEFAULT_SAND = ["load-balance", "sand", "profile", "default"]
"""The sand profile EOS applies to every port."""
_ROCE_UDP = ["fields", "udp", "dst-port", str(ROCE_UDP_PORT)]


def payload_bytes(text: str) -> frozenset[int]:
    """A sand profile's ``payload bytes``: bytes 0-62 as ``5``, ``0,1,5``, ``5-7`` or a mix; ValueError for anything
    else (quoted: the value is the file's)."""
    found: set[int] = set()
    for part in text.split(","):
        low, dash, high = part.partition("-")
        if not (low.isascii() and low.isdigit() and len(low) <= 2 and (not dash or (
                high.isascii() and high.isdigit() and len(high) <= 2))):
            raise ValueError(f"sand profile payload bytes: {text!r} is not a byte list")
        first, last = int(low), int(high) if dash else int(low)
        if not first <= last <= 62:
            raise ValueError(f"sand profile payload bytes: {text!r} is not a byte list from 0 to 62")
        found.update(range(first, last + 1))
    return frozenset(found)


_QP_BYTES = payload_bytes(BTH_DEST_QP_BYTES)


def _bfd(words: list[str], bfd: set[str], timers: dict[str, tuple[int, int, int]]) -> None:
    """``neighbor X bfd`` (on) or ``neighbor X bfd interval T min-rx R multiplier M`` (its timers, which alone
    turn nothing on)."""
    name = address(words[1])
    if len(words) == 3:
        bfd.add(name)
    elif len(words) == 9 and words[3] == "interval" and words[5] == "min-rx" and words[7] == "multiplier":
        what = f"neighbor {words[1]!r} bfd"
        timers[name] = (uint16(words[4], what), uint16(words[6], what), uint16(words[8], what))


def _neighbor(words: list[str], remotes: dict[str, str | None], groups: dict[str, str]) -> None:
    """One ``neighbor A|GROUP ...`` line of ``router bgp``: a session (A an address), its remote AS or peer group,
    or a peer group's remote AS."""
    name = address(words[1])
    if is_address(name):
        remotes.setdefault(name, None)
    if words[2] == "remote-as" and len(words) == 4:
        remotes[name] = remote(words[3], f"neighbor {words[1]!r} remote-as")
    elif (words[2:4] == ["peer", "group"] and len(words) == 5) or (words[2] == "peer-group" and len(words) == 4):
        groups[name] = words[-1]
