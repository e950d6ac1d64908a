"""What every switch OS shares of the underlay: the OS-neutral routing picture parsed back from each output.

Why: ``lint --deployed`` holds a collected switch configuration against the
plan without knowing the OS's syntax, the way it holds QoS through
:class:`~fabgen.targets.qos_common.CommonQos`. Each switch OS ships a reader
from its own file to :class:`CommonRouting` (``eos/parse_routing.py``,
``sonic/parse_routing.py``, ``nvue/parse_routing.py``); the cross-OS test
renders one plan for EOS, SONiC and NVUE and asserts the three pictures of each
switch are equal once port names are matched. The picture holds only what all
three OSes write, so the plan's picture never differs by OS, but for how ECMP
spreads: EOS leaves the hashed fields to the platform (``ecmp_hash`` None), and
each OS has its own way off the static hash (``load_balancing``, ``qp_hash``);
and for what only some OSes state: lane counts (not NVUE) and the SKU (SONiC).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
"""0..255 without leading zeros: an octet as :mod:`ipaddress` prints it."""
_IPV4 = re.compile(rf"{OCTET}(?:\.{OCTET}){{3}}")
_PREFIX = re.compile(rf"{OCTET}(?:\.{OCTET}){{3}}/(?:3[0-2]|[12]?[0-9])")
"""Canonical IPv4 forms, taken as they are: :mod:`ipaddress` costs about 10 us an address, seconds over the
800,000 a 24k tree's pictures hold, and is asked only about anything else."""


@dataclass(frozen=True)
class CommonRouting:
    asn: int | None
    """The local ASN of the default BGP instance; None when the file runs no BGP."""
    router_id: str | None
    """BGP router-id as written; None when the file leaves it to the OS (which picks an address itself)."""
    loopback: tuple[str, ...]
    """IPv4 addresses (``a.b.c.d/len``) of the loopback the router-id comes from (EOS ``Loopback0``, SONiC
    ``Loopback0``, NVUE ``lo``), sorted: fabgen plans one."""
    addresses: tuple[tuple[str, str], ...]
    """(port, ``a.b.c.d/len``) of every IPv4 address on a front-panel port, sorted. Only front-panel ports:
    management, VLAN and port-channel addresses are no part of the planned fabric, and IPv6 is not planned."""
    neighbors: tuple[tuple[str, str | None], ...]
    """(peer address, remote AS) of each BGP session of the default VRF, sorted by address. The remote AS is
    its decimal number, or the OS's word (NVUE ``external``) where one stands; None when none is configured."""
    max_paths: int | None
    """eBGP ECMP width (EOS ``maximum-paths``, SONiC ``max_ebgp_paths``, NVUE ``multipaths ebgp``); None when
    the file leaves it at the OS's default."""
    networks: tuple[str, ...] = ()
    """Prefixes announced with ``network`` statements (IPv4 unicast), sorted: a host /31 dropped from this list
    is a host the fabric cannot reach."""
    multipath_relax: bool = False
    """Best paths through peers of different ASNs are balanced (EOS and FRR ``bgp bestpath as-path
    multipath-relax``, NVUE ``path-selection multipath aspath-ignore``); off is every OS's default."""
    shutdown: tuple[str, ...] = ()
    """Peer addresses of the sessions held administratively down (``neighbor A shutdown``, its peer group's,
    SONiC ``admin_status: down``, NVUE ``shutdown: on``), sorted."""
    inactive: tuple[str, ...] = ()
    """Peer addresses of the sessions not activated for IPv4 unicast, sorted: such a session comes up and
    exchanges no route (every OS fabgen writes for turns the default off, or needs ``activate`` per session)."""
    timers: tuple[tuple[str, int, int], ...] = ()
    """(peer, keepalive, hold) in seconds of each session whose timers the file sets (on the session, its peer
    group or the instance: EOS and FRR ``timers bgp``), sorted; a session left at the OS's defaults is not in
    it."""
    bfd: tuple[tuple[str, int, int, int], ...] = ()
    """(peer, transmit ms, receive ms, multiplier) of each session with BFD on, sorted; what the file does not
    write is BFD's 300 ms and 3 (EOS, FRR's bfdd and NVUE alike)."""
    speeds: tuple[tuple[str, int], ...] = ()
    """(port, Mb/s) of every front-panel port the file gives a fixed speed (EOS ``speed 400g-8``, SONiC
    ``speed: "400000"``, NVUE ``link speed 400G``), sorted; a port at ``auto`` or without a speed is not in it.
    EOS's lane count (``-8``) is :attr:`lanes`."""
    ports_down: tuple[str, ...] = ()
    """Front-panel ports the file holds administratively down (EOS ``shutdown``, SONiC ``admin_status`` other
    than ``up``, whose default is down, NVUE ``link state down``), sorted. A port the file does not list is not
    in it."""
    lanes: tuple[tuple[str, int], ...] = ()
    """(port, SerDes lanes) of every front-panel port whose lane count the file states (EOS ``speed 400g-8``,
    SONiC ``PORT.lanes``), sorted; NVUE states none (its ports are the breakout's). A port on other lanes than
    its peer and optic run stays down at the right speed."""
    ecmp_hash: tuple[str, ...] | None = None
    """The header fields ECMP hashes a RoCE packet on, in ``sonic-hash.yang``'s names (``SRC_IP``,
    ``L4_SRC_PORT``: :data:`ECMP_HASH_FIELDS`), sorted: SONiC's ``SWITCH_HASH|GLOBAL.ecmp_hash``, NVUE's
    ``system forwarding ecmp-hash`` over its defaults. None where the file leaves them to the platform (EOS,
    whose hash fabgen does not write; SONiC without ``SWITCH_HASH``). RoCE spreads its queue pairs by UDP source
    port, so a hash without ``L4_SRC_PORT`` puts every QP of a host pair on one path."""
    qp_hash: bool = False
    """RoCE's destination QP is hashed too: EOS's ``default`` sand profile hashes UDP 4791 on payload bytes 5-7
    (the BTH's destination QP)."""
    adaptive_ports: tuple[str, ...] = ()
    """Front-panel ports with adaptive routing on (NVUE ``interface swpN router adaptive-routing enable on``),
    sorted: with ``spray``, a fabric port left out takes no part in the per-packet choice."""
    load_balancing: str = "ecmp"
    """How ECMP members are chosen: ``ecmp`` (the hash alone), ``dlb`` (EOS ``ip hardware fib load-balance
    distribution dynamic``) or ``spray`` (NVUE ``router adaptive-routing enable on``)."""
    hwsku: str | None = None
    """The SKU the file is for (SONiC ``DEVICE_METADATA|localhost.hwsku``): SONiC lays out the ports' lanes and
    computes the lossless buffers from it. None where the file names none (EOS and NVUE never do)."""


def prefix(text: str, what: str) -> str:
    """``text`` as an IPv4 interface address in canonical form (``10.0.0.1/31``); ValueError when it is not.

    ``what`` says where it stood (quoted names only: ``lint --deployed`` redacts quoted values the plan lacks).
    """
    if _PREFIX.fullmatch(text):
        return text
    try:
        value = ipaddress.ip_interface(text)
    except ValueError:
        raise ValueError(f"{what}: {text!r} is not an address with a prefix length") from None
    if value.version != 4 or "/" not in text:
        raise ValueError(f"{what}: {text!r} is not an IPv4 address with a prefix length")
    return str(value)


def is_address(text: str) -> bool:
    """An IP address (a BGP session's peer), not a peer group's or an interface's name."""
    if _IPV4.fullmatch(text):
        return True
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def address(text: str) -> str:
    """A neighbor's key or a router-id in canonical form when it is an IP address; else as written (an
    interface name, for an unnumbered session, is a session the plan does not have, never a parse error)."""
    if _IPV4.fullmatch(text):
        return text
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text


def asn(value: object, what: str) -> int:
    """An ASN as asplain (``4200100000``) or asdot (``64086.59904``); ValueError for anything else."""
    text = str(value) if isinstance(value, int | str) and not isinstance(value, bool) else ""
    high, dot, low = text.partition(".")
    if dot and high.isdigit() and low.isdigit() and int(high) < 65536 and int(low) < 65536:
        return int(high) * 65536 + int(low)
    if text.isdigit() and 0 < int(text) < 2**32:
        return int(text)
    raise ValueError(f"{what}: {text!r} is not an AS number")


def remote(value: object, what: str) -> str:
    """A neighbor's remote AS: the decimal number, or one of the words NVUE accepts in its place."""
    if value in ("external", "internal"):
        return str(value)
    return str(asn(value, what))


ECMP_HASH_FIELDS = frozenset({"IN_PORT", "DST_MAC", "SRC_MAC", "ETHERTYPE", "VLAN_ID", "IP_PROTOCOL", "DST_IP",
                              "SRC_IP", "L4_DST_PORT", "L4_SRC_PORT"})
"""``sonic-hash.yang``'s hash fields a RoCE packet has: not its ``INNER_*`` ones (RoCE runs in no tunnel fabgen
plans) nor ``IPV6_FLOW_LABEL`` (the fabric is IPv4), which hash nothing here whether on or off."""


@dataclass
class States:
    """What a reader collects besides the values :func:`picture` takes: multipath relax, how ECMP spreads, and the
    state, timers and BFD of each session and the admin state and speed of each port."""

    multipath_relax: bool = False
    shutdown: set[str] = field(default_factory=set)
    inactive: set[str] = field(default_factory=set)
    ports_down: set[str] = field(default_factory=set)
    speeds: dict[str, int] = field(default_factory=dict)
    lanes: dict[str, int] = field(default_factory=dict)
    adaptive_ports: set[str] = field(default_factory=set)
    timers: dict[str, tuple[int, int]] = field(default_factory=dict)
    bfd: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    ecmp_hash: set[str] | None = None
    qp_hash: bool = False
    load_balancing: str = "ecmp"
    hwsku: str | None = None


_GBPS = re.compile(r"([1-9][0-9]{0,3})[gG](?:-([1-8])|full)?")
"""A speed in Gb/s as EOS (``400g-8``, ``100gfull``) and NVUE (``400G``) write it, with EOS's lane count."""


def lanes_of(text: str) -> int | None:
    """The lane count of an EOS speed (``400g-8``: 8); None where it states none (``400g``, ``auto``)."""
    match = _GBPS.fullmatch(text)
    return int(match.group(2)) if match is not None and match.group(2) else None


def mbps(text: str, what: str) -> int | None:
    """A speed written in Gb/s, in Mb/s (SONiC's unit); None for ``auto``; ValueError for anything else (``what``
    says where, quoted names only)."""
    match = _GBPS.fullmatch(text)
    if match is not None:
        return int(match.group(1)) * 1000
    if text == "auto":
        return None
    raise ValueError(f"{what}: {text!r} is not a speed")


BFD_DEFAULT = (300, 300, 3)
"""BFD's transmit and receive intervals (ms) and multiplier where none is written: EOS's, FRR bfdd's and
NVUE's default."""


def uint16(value: object, what: str) -> int:
    """A BGP timer (s) or a BFD interval (ms) or multiplier: 0..65535 in ASCII digits (``int`` of a few thousand
    digits would raise)."""
    text = str(value)
    if not (text.isascii() and text.isdigit() and len(text) <= 5) or int(text) > 65535:
        raise ValueError(f"{what}: {text!r} is not a number from 0 to 65535")
    return int(text)


def picture(asn_: int | None, router_id: str | None, loopback: list[str], addresses: list[tuple[str, str]],
            neighbors: dict[str, str | None], max_paths: int | None, networks: list[str],
            state: States | None = None) -> CommonRouting:
    """A :class:`CommonRouting` from what a reader collected, sorted into its canonical order.

    Only sessions in ``neighbors`` are kept in ``state``'s session sets (a peer group's name is no session).
    """
    state = state or States()
    return CommonRouting(asn_, router_id, tuple(sorted(loopback)), tuple(sorted(addresses)),
                         tuple(sorted(neighbors.items(), key=lambda item: item[0])), max_paths,
                         tuple(sorted(networks)), state.multipath_relax,
                         tuple(sorted(state.shutdown & neighbors.keys())),
                         tuple(sorted(state.inactive & neighbors.keys())),
                         tuple(sorted((peer, *pair) for peer, pair in state.timers.items() if peer in neighbors)),
                         tuple(sorted((peer, *pair) for peer, pair in state.bfd.items() if peer in neighbors)),
                         tuple(sorted(state.speeds.items())), tuple(sorted(state.ports_down)),
                         tuple(sorted(state.lanes.items())),
                         None if state.ecmp_hash is None else tuple(sorted(state.ecmp_hash & ECMP_HASH_FIELDS)),
                         state.qp_hash, tuple(sorted(state.adaptive_ports)), state.load_balancing, state.hwsku)
