"""FG505 deployed routing drift: the underlay a switch runs against the one the plan gives it (``--deployed DIR``).

A switch is compared through its routing picture
(:class:`~fabgen.targets.routing_common.CommonRouting`), parsed from the
deployed file and from what fabgen renders for that switch, so reordered lines
and formatting are not drift; another ASN, a moved address or a lost BGP
session is. A deployed file may hold anything, a secret included, and findings
go to CI logs: a deployed value is printed only where the plan has it too (a
swapped address, a leaf carrying a spine's ASN); any other is "another ..." or
counted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fabgen.lint.context import LintContext, plural, preview
from fabgen.lint.finding import Hit, Location
from fabgen.natural import natural_key
from fabgen.plan.model import FabricPlan
from fabgen.targets.routing_common import CommonRouting
from fabgen.targets.sonic.sku import SKUS

Path = tuple[str, ...]
"""Regular expressions, each matched in the block of the line the one before matched (EOS, JSON and YAML nest by
indentation): where a part of one OS's file stands."""

_BGP = r"^router bgp\b"
_ASN: tuple[Path, ...] = ((_BGP,), (r'^\s*"BGP_GLOBALS":', r'"local_asn"'), (r'^\s*"DEVICE_METADATA":', r'"bgp_asn"'),
                          (r"\bautonomous-system:",))
_ROUTER_ID: tuple[Path, ...] = ((_BGP, r"^\s+router-id\b"), (r'^\s*"BGP_GLOBALS":', r'"router_id"'),
                                (r'^\s*"DEVICE_METADATA":', r'"bgp_router_id"'), (r"\brouter-id:",), *_ASN)
_MAX_PATHS: tuple[Path, ...] = ((_BGP, r"^\s+maximum-paths\b"), (r'^\s*"BGP_GLOBALS_AF":', r'"max_ebgp_paths"'),
                                (r"^\s+multipaths:",), *_ASN)
_LOOPBACK: tuple[Path, ...] = ((r"^interface Loopback0\s*$", r"^\s+ip address\b"),
                               (r'^\s*"LOOPBACK_INTERFACE":', r'"Loopback0\|'),
                               (r"^\s+interface:", r"^\s+lo:", r"^\s+ip:", r"\baddress:"))
_SESSIONS: tuple[Path, ...] = ((_BGP,), (r'^\s*"BGP_NEIGHBOR":',), (r"^\s+neighbor:",), *_ASN)
_NETWORKS: tuple[Path, ...] = ((_BGP, r"^\s+address-family ipv4\s*$"), (r'^\s*"BGP_GLOBALS_AF_NETWORK":',),
                               (r"^\s+network:",), *_ASN)


def _port(name: str) -> tuple[Path, ...]:
    p = re.escape(name)
    return ((rf"^interface {p}\s*$", r"^\s+ip address\b"), (r'^\s*"INTERFACE":', rf'"{p}\|'),
            (r'^\s*"INTERFACE":', rf'"{p}"'), (r"^\s+interface:", rf"^\s+{p}:", r"^\s+ip:", r"\baddress:"))


def _neighbor(peer: str) -> tuple[Path, ...]:
    a = re.escape(peer)
    return ((_BGP, rf"^\s+neighbor {a} remote-as\b"), (_BGP, rf"^\s+neighbor {a}\s"),
            (r'^\s*"BGP_NEIGHBOR":', rf'"(?:default\|)?{a}":', r'"asn"'),
            (r"^\s+neighbor:", rf'^\s+"?{a}"?:', r"^\s+remote-as:"), *_SESSIONS)


_RELAX: tuple[Path, ...] = ((_BGP, r"^\s+bgp bestpath as-path multipath-relax\b"),
                           (r'^\s*"BGP_GLOBALS":', r'"load_balance_mp_relax"'), (r"^\s+path-selection:",), *_ASN)


_DLB: tuple[Path, ...] = ((r"^ip hardware fib load-balance distribution dynamic\b",), (r"^ip hardware fib\b",),
                         (r"^\s+router:", r"^\s+adaptive-routing:"))
_QP_HASH: tuple[Path, ...] = ((r"^load-balance policies\b", r"^\s+load-balance sand profile default\s*$",
                               r"^\s+fields udp dst-port\b", r"^\s+payload bytes\b"),)
_ECMP_HASH: tuple[Path, ...] = ((r'^\s*"SWITCH_HASH":', r'"ecmp_hash"'), (r"^\s+forwarding:", r"^\s+ecmp-hash:"),
                               (r"^\s+system:", r"^\s+forwarding:"))
_HWSKU: tuple[Path, ...] = ((r'^\s*"DEVICE_METADATA":', r'"hwsku"'), (r'^\s*"DEVICE_METADATA":',))
_REDEPLOY = "re-deploy fabgen's configuration, or put the change in the spec"
_SPREAD = {"ecmp": "the ECMP hash alone", "dlb": "dynamic load balancing (DLB)",
           "spray": "adaptive routing (per-packet spraying)"}


def _port_state(name: str) -> tuple[Path, ...]:
    p = re.escape(name)
    return ((rf"^interface {p}\s*$", r"^\s+(no )?shutdown\s*$"), (r'^\s*"PORT":', rf'^\s*"{p}":', r'"admin_status"'),
            (r'^\s*"PORT":', rf'^\s*"{p}":'), (r"^\s+interface:", rf"^\s+{p}:", r"^\s+link:", r"^\s+state:"),
            *_port(name))


def _port_speed(name: str) -> tuple[Path, ...]:
    p = re.escape(name)
    return ((rf"^interface {p}\s*$", r"^\s+speed\b"), (r'^\s*"PORT":', rf'^\s*"{p}":', r'"speed"'),
            (r"^\s+interface:", rf"^\s+{p}:", r"^\s+link:", r"^\s+speed:"), *_port_state(name))


def _port_adaptive(name: str) -> tuple[Path, ...]:
    p = re.escape(name)
    return ((r"^\s+interface:", rf"^\s+{p}:", r"^\s+router:", r"^\s+adaptive-routing:"), *_port_state(name))


def _port_lanes(name: str) -> tuple[Path, ...]:
    p = re.escape(name)
    return ((r'^\s*"PORT":', rf'^\s*"{p}":', r'"lanes"'), *_port_speed(name))


def _timers(peer: str) -> tuple[Path, ...]:
    a = re.escape(peer)
    return ((_BGP, rf"^\s+neighbor {a} timers\b"), (_BGP, r"^\s+timers bgp\b"),
            (r'^\s*"BGP_NEIGHBOR":', rf'"(?:default\|)?{a}":', r'"(keepalive|holdtime)"'),
            (r'^\s*"BGP_GLOBALS":', r'"(keepalive|holdtime)"'),
            (r"^\s+neighbor:", rf'^\s+"?{a}"?:', r"^\s+timers:"), *_neighbor(peer))


def _bfd(peer: str) -> tuple[Path, ...]:
    a = re.escape(peer)
    return ((_BGP, rf"^\s+neighbor {a} bfd\b"), (r'^\s*"BGP_NEIGHBOR":', rf'"(?:default\|)?{a}":', r'"bfd"'),
            (r"^\s+neighbor:", rf'^\s+"?{a}"?:', r"^\s+bfd:"), *_neighbor(peer))


def _session_state(peer: str) -> tuple[Path, ...]:
    a = re.escape(peer)
    return ((_BGP, rf"^\s+neighbor {a} shutdown\b"), (r'^\s*"BGP_NEIGHBOR":', rf'"(?:default\|)?{a}":', r'"admin_status"'),
            (r"^\s+neighbor:", rf'^\s+"?{a}"?:', r"^\s+shutdown:"), *_neighbor(peer))


def _activation(peer: str) -> tuple[Path, ...]:
    a = re.escape(peer)
    return ((_BGP, r"^\s+address-family ipv4\s*$", rf"^\s+(no )?neighbor {a} activate\b"),
            (r'^\s*"BGP_NEIGHBOR_AF":', rf'"default\|{a}\|ipv4_unicast":', r'"admin_status"'),
            (r'^\s*"BGP_NEIGHBOR_AF":',),
            (r"^\s+neighbor:", rf'^\s+"?{a}"?:', r"^\s+address-family:", r"ipv4-unicast"),
            (_BGP, r"^\s+address-family ipv4\s*$"), *_neighbor(peer))


def _network(prefix: str) -> tuple[Path, ...]:
    n = re.escape(prefix)
    return ((_BGP, rf"^\s+network {n}(\s|$)"), (r'^\s*"BGP_GLOBALS_AF_NETWORK":', rf'\|{n}"'),
            (r"^\s+network:", rf'^\s+"?{n}"?:'), *_NETWORKS)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def line_of(text: str, paths: Iterable[Path]) -> int:
    """The line of the first path that matches whole; else of the deepest part of one that matched; else 1."""
    lines = text.splitlines()
    best, depth = 1, 0
    for path in paths:
        start, end, found = 0, len(lines), 0
        for step, pattern in enumerate(path):
            compiled = re.compile(pattern)
            at = next((i for i in range(start, end) if compiled.search(lines[i])), None)
            if at is None:
                break
            found = at + 1
            if step + 1 > depth:
                best, depth = found, step + 1
            level = _indent(lines[at])
            start, end = at + 1, next((i for i in range(at + 1, len(lines))
                                       if lines[i].strip() and _indent(lines[i]) <= level), len(lines))
        else:
            return found or best
    return best


@dataclass(frozen=True)
class _Difference:
    message: str
    paths: tuple[Path, ...]
    fix: str


def _known(plan: FabricPlan) -> frozenset[str]:
    """Every routing value the plan holds, as the pictures spell them: a deployed value among them may be shown."""
    known: set[str] = set()
    for switch in plan.switches:
        known.update((switch.loopback, switch.loopback.split("/")[0]))
        for port in switch.ports:
            length = port.address.partition("/")[2]
            known.update((port.address, port.address.split("/")[0], port.peer_address,
                          f"{port.peer_address}/{length}"))
        if switch.bgp is not None:
            bgp = switch.bgp
            known.update((str(bgp.asn), bgp.router_id, str(bgp.maximum_paths), *bgp.networks))
            known.update(value for n in bgp.neighbors for value in (n.address, str(n.remote_asn)))
    return frozenset(known)


def _shown(value: object, known: frozenset[str], what: str) -> str:
    """``what value`` when the plan has the value, else ``another what`` (a deployed value is not echoed)."""
    return f"{what} {value}" if str(value) in known else f"another {what}"


def _remote(value: str | None, known: frozenset[str]) -> str:
    """A neighbor's deployed remote AS as it may be shown (the OS's words ``external``/``internal`` are no secret)."""
    if value is None:
        return "no remote-as"
    return f"remote-as {value}" if value in known or value in ("external", "internal") else "another remote-as"


def _values(values: Sequence[str], known: frozenset[str], one: str, many: str) -> str:
    """The plan's values by name, the others counted."""
    shown = [v for v in values if v in known]
    other = len(values) - len(shown)
    parts = [preview(shown, 4)] if shown else []
    if other:
        parts.append(f"{other} {one if other == 1 else many} the plan does not have")
    return " and ".join(parts)


def routing_differences(deployed: CommonRouting, expected: CommonRouting, known: frozenset[str],
                        planned_ports: frozenset[str] = frozenset()) -> list[_Difference]:
    """Each way the deployed picture differs from the planned one, with where it stands and what to do."""
    d, e = deployed, expected
    out: list[_Difference] = []
    if d.hwsku != e.hwsku and e.hwsku is not None:  # first: the ports' lanes and the buffers follow from it
        has = "no hwsku" if d.hwsku is None else f"hwsku {d.hwsku}" if d.hwsku in SKUS else "another hwsku"
        out.append(_Difference(f"the file names {has}, the plan's is {e.hwsku}", _HWSKU,
                               "deploy the plan's config_db.json for this switch, or set the tier's hwsku in the spec "
                               "if the hardware is another SKU: SONiC lays out the ports' lanes and computes the "
                               "lossless buffers from the SKU"))
    if d.asn != e.asn:
        if d.asn is None:
            out.append(_Difference(f"runs no BGP instance, the plan one with ASN {e.asn}", _ASN, _REDEPLOY))
        elif e.asn is None:
            out.append(_Difference("runs a BGP instance the plan does not give it", _ASN, _REDEPLOY))
        else:
            out.append(_Difference(f"BGP runs with {_shown(d.asn, known, 'ASN')}, the plan's is {e.asn}", _ASN,
                                   f"set the local ASN to {e.asn} (re-deploy)"))
    if d.router_id != e.router_id and e.asn is not None:
        has = "no router-id (the OS picks one)" if d.router_id is None else _shown(d.router_id, known, "router-id")
        want = "none" if e.router_id is None else e.router_id
        out.append(_Difference(f"BGP has {has}, the plan's is {want}", _ROUTER_ID, _REDEPLOY))
    if d.max_paths != e.max_paths and e.asn is not None:
        has = "no maximum-paths (the OS default)" if d.max_paths is None else \
            _shown(d.max_paths, known, "maximum-paths")
        out.append(_Difference(f"BGP has {has}, the plan's is {e.max_paths}", _MAX_PATHS,
                               f"set maximum-paths {e.max_paths}: fewer paths than uplinks leaves links idle"))
    if d.loopback != e.loopback:
        missing = [v for v in e.loopback if v not in d.loopback]
        extra = [v for v in d.loopback if v not in e.loopback]
        parts = ([f"lacks {', '.join(missing)}"] if missing else []) + \
            ([f"carries {_values(extra, known, 'address', 'addresses')}"] if extra else [])
        out.append(_Difference("loopback " + "; ".join(parts), _LOOPBACK, _REDEPLOY))
    if e.asn is not None:
        out += _switched(d.multipath_relax, e.multipath_relax, "BGP multipath relax",
                         "BGP multipath relax is off, the plan's is on: routes through peers of different ASNs are "
                         "not balanced", _RELAX,
                         "turn multipath relax on (re-deploy): without it one uplink carries what the plan spreads "
                         "over several")
    out += _spread_differences(d, e)
    out += _address_differences(d, e, known, planned_ports)
    out += _session_differences(d, e, known)
    out += _state_differences(d, e)
    out += _value_differences(d, e)
    if d.networks != e.networks:
        missing = [v for v in e.networks if v not in d.networks]
        extra = [v for v in d.networks if v not in e.networks]
        if missing:
            out.append(_Difference(f"BGP does not announce {preview(missing, 4)}, which the plan does", _NETWORKS,
                                   "announce every planned prefix: a host /31 left out is a host the fabric "
                                   "cannot reach (re-deploy)"))
        if extra:
            out.append(_Difference(f"BGP announces more than the plan: {_values(extra, known, 'prefix', 'prefixes')}",
                                   _network(extra[0]), "remove them, or put them in the spec"))
    return out


def _switched(have: bool, want: bool, what: str, lost: str, paths: tuple[Path, ...], fix: str) -> list[_Difference]:
    """A setting on or off against the plan: ``lost`` says what its absence costs, one on the plan lacks is
    ``what`` named."""
    if have == want:
        return []
    if want:
        return [_Difference(lost, paths, fix)]
    return [_Difference(f"{what} is on, the plan's is off", paths, _REDEPLOY)]


def _spread_differences(d: CommonRouting, e: CommonRouting) -> list[_Difference]:
    """How ECMP spreads flows over the uplinks: the member choice, RoCE QP hashing and the hashed fields.

    The fields are ``sonic-hash.yang``'s names the readers checked or mapped, never the file's own words.
    """
    out: list[_Difference] = []
    if d.load_balancing != e.load_balancing:
        fix = _REDEPLOY if e.load_balancing == "ecmp" else \
            f"turn {_SPREAD[e.load_balancing]} on again (re-deploy): by the hash alone, flows that land on one uplink stay there"
        out.append(_Difference(f"ECMP members are chosen by {_SPREAD.get(d.load_balancing, 'another method')}, "
                               f"the plan's is {_SPREAD[e.load_balancing]}", _DLB, fix))
    out += _switched(d.qp_hash, e.qp_hash, "RoCE QP hashing",
                     "RoCE QP hashing is off (no default sand profile hashing UDP 4791 on payload bytes 5-7), the "
                     "plan's is on", _QP_HASH,
                     "hash RoCE on the destination QP again (re-deploy): queue pairs that share a 5-tuple then "
                     "share one path")
    if d.ecmp_hash != e.ecmp_hash:
        if e.ecmp_hash is None:
            said = "the file chooses them, the plan leaves them to the platform"
        elif d.ecmp_hash is None:
            said = f"left to the platform's default, the plan hashes on {', '.join(e.ecmp_hash)}"
        else:
            missing = [f for f in e.ecmp_hash if f not in d.ecmp_hash]
            extra = [f for f in d.ecmp_hash if f not in e.ecmp_hash]
            said = "; ".join(([f"without {', '.join(missing)}"] if missing else [])
                             + ([f"also on {', '.join(extra)}"] if extra else []))
            said += f" (plan {', '.join(e.ecmp_hash)})"
        lost_port = e.ecmp_hash is not None and "L4_SRC_PORT" in e.ecmp_hash and (
            d.ecmp_hash is not None and "L4_SRC_PORT" not in d.ecmp_hash)
        fix = ("hash on the plan's fields (re-deploy): RoCE gives each queue pair its own UDP source port, so without "
               "L4_SRC_PORT every queue pair of a host pair takes one path") if lost_port else _REDEPLOY
        out.append(_Difference(f"ECMP hash fields differ: {said}", _ECMP_HASH, fix))
    return out


def _address_differences(d: CommonRouting, e: CommonRouting, known: frozenset[str],
                         planned_ports: frozenset[str]) -> list[_Difference]:
    have: dict[str, list[str]] = {}
    want: dict[str, list[str]] = {}
    for port, value in d.addresses:
        have.setdefault(port, []).append(value)
    for port, value in e.addresses:
        want.setdefault(port, []).append(value)
    out: list[_Difference] = []
    changed = sorted((port for port in want if have.get(port) != want[port]), key=natural_key)
    if changed:
        said = []
        for port in changed[:4]:
            found = have.get(port, [])
            has = "no address" if not found else ", ".join(found) if all(v in known for v in found) else \
                "another address"
            said.append(f"{port} has {has} (plan {', '.join(want[port])})")
        out.append(_Difference("fabric port addresses differ: " + _joined(said, len(changed), "more ports"),
                               _port(changed[0]),
                               "re-deploy fabgen's configuration: a moved /31 takes the BGP session over it down"))
    # a port the plan leaves without an address, named only when the plan has the port (its name is then ours)
    extra = sorted((port for port in have if port not in want), key=natural_key)
    if extra:
        out.append(_stray(extra, planned_ports, plural(len(extra), "port") + " the plan gives no address carry one",
                          _port(extra[0]), "remove the address, or put the port in the spec"))
    return out


def _joined(said: list[str], count: int, what: str = "more") -> str:
    """The first few of ``count`` differences, then how many more."""
    return "; ".join(said) + (f" and {count - len(said)} {what}" if count > len(said) else "")


def _stray(extra: list[str], nameable: frozenset[str], what: str, paths: tuple[Path, ...], fix: str) -> _Difference:
    """Deployed items the plan does not have: counted, and named only where the plan has the name too."""
    named = [item for item in extra if item in nameable]
    return _Difference(what + (f" ({preview(named, 4)})" if named else ""), paths, fix)


def _session_differences(d: CommonRouting, e: CommonRouting, known: frozenset[str]) -> list[_Difference]:
    have, want = dict(d.neighbors), dict(e.neighbors)
    out: list[_Difference] = []
    moved = sorted((peer for peer in want if peer in have and have[peer] != want[peer]), key=natural_key)
    if moved:
        said = [f"{peer} has {_remote(have[peer], known)} (plan {want[peer]})" for peer in moved[:4]]
        out.append(_Difference("BGP neighbors with another remote-as: " + _joined(said, len(moved)),
                               _neighbor(moved[0]), "set each neighbor's remote-as to the plan's (re-deploy)"))
    missing = sorted((peer for peer in want if peer not in have), key=natural_key)
    if missing:
        said = [f"{peer} (AS {want[peer]})" for peer in missing]
        out.append(_Difference(f"BGP lacks {plural(len(missing), 'planned session')}: {preview(said, 4)}",
                               _SESSIONS, "configure the planned neighbors (re-deploy)"))
    extra = sorted((peer for peer in have if peer not in want), key=natural_key)
    if extra:
        out.append(_stray(extra, known, plural(len(extra), "BGP neighbor") + " the plan does not have",
                          _neighbor(extra[0]), "remove them, or plan the link in the spec"))
    return out


def _value_differences(d: CommonRouting, e: CommonRouting) -> list[_Difference]:
    """Per-port and per-session values that are not the plan's: port speeds and lane counts (on ports both files
    address), BGP timers and BFD (on planned sessions the file has: a lost one is said once, by
    :func:`_session_differences`)."""
    addressed = {port for port, _ in e.addresses} & {port for port, _ in d.addresses}
    have_speed, want_speed = dict(d.speeds), dict(e.speeds)
    have_lanes, want_lanes = dict(d.lanes), dict(e.lanes)
    # lanes where both files state them (EOS's ``speed 400g`` leaves them to the platform's one way) and the speed
    # is the plan's (at another speed that is the finding, the lanes following it)
    on_lanes = {port for port in addressed & want_lanes.keys() & have_lanes.keys()
                if have_speed.get(port) == want_speed.get(port)}
    sessions = {peer for peer, _ in e.neighbors} & {peer for peer, _ in d.neighbors}
    return [
        *_keyed("fabric ports at another speed", addressed & want_speed.keys(), have_speed, want_speed, _speed,
                _port_speed, "set the planned speed (re-deploy): the peer runs the plan's, so the link stays down",
                "more ports"),
        *_keyed("fabric ports on another lane count", on_lanes, have_lanes, want_lanes, "{} lanes".format, _port_lanes,
                "set the planned lanes (re-deploy): a port on other lanes than its optic and peer stays down",
                "more ports"),
        *_keyed("BGP timers differ", sessions, {t[0]: t[1:] for t in d.timers}, {t[0]: t[1:] for t in e.timers},
                _units("keepalive/hold {}/{} s"), _timers, "set the planned keepalive and hold (re-deploy)"),
        *_keyed("BFD differ", sessions, {t[0]: t[1:] for t in d.bfd}, {t[0]: t[1:] for t in e.bfd},
                _units("tx/rx {} ms/{} ms x {}"), _bfd,
                "turn BFD on at the planned timers (re-deploy): without it a dead link is noticed only when the "
                "hold time runs out"),
    ]


def _keyed(what: str, scope: set[str], have: Mapping[str, object], want: Mapping[str, object],
           show: Callable[[Any], str], paths: Callable[[str], tuple[Path, ...]], fix: str,
           more: str = "more sessions") -> list[_Difference]:
    """One finding for the names of ``scope`` whose value differs, the first few shown: numbers, never free text."""
    changed = sorted((name for name in scope if have.get(name) != want.get(name)), key=natural_key)
    if not changed:
        return []
    said = [f"{name} {show(have.get(name))} (plan {show(want.get(name))})" for name in changed[:4]]
    return [_Difference(f"{what}: " + _joined(said, len(changed), more), paths(changed[0]), fix)]


def _speed(mbps: int | None) -> str:
    return "auto or unset" if mbps is None else f"{mbps / 1000:g}G"


def _units(unit: str) -> Callable[[tuple[int, ...] | None], str]:
    return lambda values: "none (the OS default)" if values is None else unit.format(*values)


def _state_differences(d: CommonRouting, e: CommonRouting) -> list[_Difference]:
    """Ports and sessions in another state than the plan's: held down, left up, carrying no IPv4, or with
    adaptive routing off or on against the plan.

    Only ports both files address (a port either lacks is an address difference already) and planned sessions
    (a stranger is counted by :func:`_session_differences`), so every name printed is the plan's.
    """
    ports = {port for port, _ in e.addresses} & {port for port, _ in d.addresses}
    sessions = {peer for peer, _ in e.neighbors}
    checks: tuple[tuple[set[str], tuple[str, ...], tuple[str, ...], str, str, Callable[[str], tuple[Path, ...]],
                        str], ...] = (
        (ports, d.ports_down, e.ports_down, "fabric port", "administratively down, up in the plan", _port_state,
         "bring the port up (no shutdown / admin_status up / link state up): its link and the paths over it "
         "are gone"),
        (ports, e.ports_down, d.ports_down, "port", "up that the plan shuts (an out-of-service NIC's)", _port_state,
         "shut the port, or take the NIC out of hosts[].nics_out_of_service"),
        (ports, e.adaptive_ports, d.adaptive_ports, "fabric port", "without adaptive routing, on in the plan",
         _port_adaptive, "turn adaptive routing on for the port (re-deploy): with spray, a port left out takes no "
                         "part in the per-packet choice"),
        (ports, d.adaptive_ports, e.adaptive_ports, "port", "with adaptive routing the plan does not turn on",
         _port_adaptive, _REDEPLOY),
        (sessions, d.shutdown, e.shutdown, "planned BGP session", "administratively shut down", _session_state,
         "remove the shutdown (re-deploy): a shut session takes every path over its link away"),
        (sessions, d.inactive, e.inactive,
         "planned BGP session", "not activated for IPv4 unicast (up, but exchanging no route)", _activation,
         "activate each session for IPv4 unicast (re-deploy)"),
    )
    out: list[_Difference] = []
    for scope, found, planned, what, state, paths, fix in checks:
        names = sorted((scope & set(found)) - set(planned), key=natural_key)
        if names:
            out.append(_Difference(f"{plural(len(names), what)} {state}: {preview(names, 4)}", paths(names[0]), fix))
    return out


def switch_routing_drift(ctx: LintContext) -> Iterator[Hit]:
    """A deployed switch configuration's underlay routing differs from the plan.

    What it checks:
        With ``--deployed DIR``, each switch configuration found there
        (``switches/NAME.cfg``, ``switches/NAME/config_db.json``,
        ``switches/NAME/startup.yaml``) is read back into its routing picture
        (local ASN, router-id, loopback and fabric port addresses, the BGP
        sessions of the default VRF with their remote AS, maximum-paths, the
        announced prefixes, multipath relax, which sessions are shut or not
        activated for IPv4, their timers and BFD, each fabric port's speed,
        lane count and admin state, SONiC's hwsku, and how ECMP spreads: DLB
        or adaptive routing (and on which ports), RoCE QP hashing, and the
        hashed header fields)
        and compared with the picture of what fabgen renders
        for that switch. Each kind of difference is one finding, at the line that
        holds it. A value of the deployed file the plan does not have is not
        printed: another ASN is "another ASN", a neighbor the plan lacks is
        counted.

    Why it matters:
        The underlay is what every RoCE flow rides on: a hand-edited remote AS
        takes a session down, a moved /31 strands the link, a lower
        maximum-paths leaves uplinks idle and doubles the load on the others,
        and a prefix no longer announced makes a host unreachable. A port or
        session left shut after maintenance, or a session that comes up without
        IPv4 activated, looks healthy in a summary and carries nothing; without
        multipath relax, uplinks to spines of different ASNs are not balanced.
        A hash that drops the UDP source port (or the QP hash, or DLB) puts a
        host pair's queue pairs on one uplink: the job runs at a fraction of
        its bandwidth with every link up. A SONiC config_db.json written for
        another SKU lays the ports' lanes and the lossless buffers out for
        hardware the switch is not.
        Such edits survive until the next push and break what the FG6xx rules
        checked in the plan.

    Example:
        # DIR/switches/leaf-r0-p00-01.cfg, edited on the box
        router bgp 4200100000
           maximum-paths 1 ecmp 1

    Fix:
        Push the generated configuration again (``fabgen generate``), or, if the
        change was intended, put it in the spec.
    """
    if ctx.deployed is None or not ctx.deployed.switches:
        return
    known = _known(ctx.plan)
    switches = ctx.switches
    for switch in ctx.deployed.switches:
        if switch.routing is None or switch.expected_routing is None or switch.routing == switch.expected_routing:
            continue  # None: the file is fabgen's own bytes
        planned = switches.get(switch.name)
        ports = frozenset(port.name for port in planned.ports) if planned is not None else frozenset()
        for difference in routing_differences(switch.routing, switch.expected_routing, known, ports):
            yield Hit(f"{switch.name}: {difference.message}", Location(switch.file, line_of(switch.text,
                                                                                          difference.paths), 1),
                      difference.fix)
