"""FG25x observed wiring: the cables a site really has against the planned ones (``--wiring``).

One analysis, shared by the four rules, sorts every observed cable that is not
in the plan into the mistake that explains it best, so that one physical error
gives one finding:

* two observed cables that are two planned cables with their ends exchanged are
  a *swap* (FG251), however many rails they cross;
* a host NIC on a leaf of another rail is a *rail crossing* (FG254);
* anything else on a fabric port is an *unexpected neighbour* (FG253);
* a planned cable that a reporting device does not show, and that no finding
  above already explains, is *missing* (FG252).

Ports that are not fabric ports (a host's frontend NIC, a switch's management
port) are not compared: their neighbours belong to another network.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from fabgen.bounded import MAX_WIRING_BYTES, read_text
from fabgen.errors import FabgenError
from fabgen.lint.context import LintContext, MemoKey
from fabgen.lint.finding import Hit, Location
from fabgen.plan.model import Link
from fabgen.wiring import ObservedLink

End = tuple[str, str]


def _ends(link: ObservedLink) -> tuple[End, End]:
    return (link.local_device, link.local_port), (link.remote_device, link.remote_port)


def _planned_ends(link: Link) -> tuple[End, End]:
    return (link.a_device, link.a_port), (link.b_device, link.b_port)


def _key(a: End, b: End) -> frozenset[End]:
    return frozenset({a, b})


def _fmt(end: End) -> str:
    return f"{end[0]}:{end[1]}"


@dataclass
class WiringReport:
    swaps: list[tuple[ObservedLink, ObservedLink, Link, Link]] = field(default_factory=list)
    crossings: list[tuple[ObservedLink, End, int, int, Link | None]] = field(default_factory=list)
    """(observation, host end, NIC rail, leaf rail, the NIC's planned link)."""
    unexpected: list[tuple[ObservedLink, list[Link]]] = field(default_factory=list)
    missing: list[Link] = field(default_factory=list)


def _other(link: Link, end: End) -> End:
    a, b = _planned_ends(link)
    return b if end == a else a


_REPORT: MemoKey[WiringReport] = MemoKey("wiring report")
_EVIDENCE_LINES: MemoKey[dict[str, list[str]]] = MemoKey("wiring evidence lines by path")


def analyse(ctx: LintContext) -> WiringReport | None:
    """Compare ``ctx.wiring`` with the plan once per run (see the module docstring)."""
    if ctx.wiring is None:
        return None
    cached = ctx.memo.get(_REPORT)
    if cached is not None:
        return cached
    from fabgen.plan.ports import model_port_index

    plan = ctx.plan
    planned: dict[frozenset[End], Link] = {}
    by_end: dict[End, Link] = {}
    for link in plan.links:
        a, b = _planned_ends(link)
        planned.setdefault(_key(a, b), link)
        by_end.setdefault(a, link)
        by_end.setdefault(b, link)
    backend = {(h.name, n.netdev): n.rail for h in plan.hosts for n in h.nics if n.rail is not None}
    switches = ctx.switches

    def fabric_port(end: End) -> bool:
        device, port = end
        if end in backend or end in by_end:
            return True
        switch = switches.get(device)
        return switch is not None and model_port_index(switch.os, switch.model, port, switch.speed, switch.port_width) > 0

    seen: set[frozenset[End]] = set()
    odd: list[ObservedLink] = []
    for obs in ctx.wiring.links:
        u, v = _ends(obs)
        key = _key(u, v)
        if key in planned:
            seen.add(key)
        elif fabric_port(u) or fabric_port(v):
            odd.append(obs)

    report = WiringReport()
    explained: set[int] = set()
    odd_by_key = {_key(*_ends(o)): o for o in odd}
    used: set[int] = set()
    for obs in odd:
        if id(obs) in used:
            continue
        u, v = _ends(obs)
        lu, lv = by_end.get(u), by_end.get(v)
        if lu is None or lv is None or lu is lv:
            continue
        partner = odd_by_key.get(_key(_other(lu, u), _other(lv, v)))
        if partner is None or id(partner) in used or partner is obs:
            continue
        used.update({id(obs), id(partner)})
        explained.update({id(lu), id(lv)})
        report.swaps.append((obs, partner, lu, lv))
    for obs in odd:
        if id(obs) in used:
            continue
        u, v = _ends(obs)
        involved = [link for link in (by_end.get(u), by_end.get(v)) if link is not None]
        explained.update(id(link) for link in involved)
        host_end, leaf_end = (u, v) if u in backend else (v, u) if v in backend else (None, None)
        leaf = switches.get(leaf_end[0]) if leaf_end else None
        if host_end is not None and leaf is not None and leaf.tier == "leaf" and leaf.rail is not None \
                and leaf.rail != backend[host_end]:
            report.crossings.append((obs, host_end, backend[host_end], leaf.rail, by_end.get(host_end)))
        else:
            report.unexpected.append((obs, involved))
    reporters = ctx.wiring.reporters
    out_of_service = {(h.name, n.netdev) for h in plan.hosts for n in h.nics if not n.in_service}
    for link in plan.links:
        a, b = _planned_ends(link)
        if _key(a, b) in seen or id(link) in explained or a in out_of_service:
            continue
        if a[0] in reporters or b[0] in reporters:
            report.missing.append(link)
    ctx.memo.put(_REPORT, report)
    return report


def _lines(ctx: LintContext, path: str) -> list[str]:
    cache = ctx.memo.setdefault(_EVIDENCE_LINES, {})
    if path not in cache:
        try:
            cache[path] = read_text(path, MAX_WIRING_BYTES, what="wiring file", bom=True).splitlines()
        except FabgenError:  # replaced since it was read: no column, still the line
            cache[path] = []
    return cache[path]


def _evidence(ctx: LintContext, obs: ObservedLink, note: str = "") -> Location:
    """The observation's place in its file, at the first character of its line."""
    col = 0
    if obs.line:
        lines = _lines(ctx, obs.source)
        text = lines[obs.line - 1] if obs.line <= len(lines) else ""
        col = len(text) - len(text.lstrip()) + 1
    return Location(obs.source, obs.line, col, "", note)


def swapped_cables(ctx: LintContext) -> Iterator[Hit]:
    """Two cables are swapped.

    What it checks:
        With ``--wiring``, pairs of observed cables that are two planned cables with
        their ends exchanged: A is on D where the plan has A -- C, and B on C where
        the plan has B -- D.

    Why it matters:
        A swap inside a rail puts two hosts on each other's leaf ports: their
        addresses, descriptions and per-port configuration no longer match and
        traffic is black-holed until routing adapts. A swap across rails also
        breaks rail alignment for both hosts.

    Example:
        lab01.json: ens1np0 -> leaf-r0-p00-01 Ethernet2/1
        lab02.json: ens1np0 -> leaf-r0-p00-01 Ethernet1/1

    Fix:
        Swap the two cables back at one end, as the message says.
    """
    report = analyse(ctx)
    if report is None:
        return
    for first, second, l1, l2 in report.swaps:
        a1, b1 = _planned_ends(l1)
        a2, b2 = _planned_ends(l2)
        if a1[0] == a2[0]:
            fix = f"swap the cables at {_fmt(a1)} and {_fmt(a2)}"
        else:
            fix = f"swap the cables at {_fmt(b1)} and {_fmt(b2)}"
        rails = {link.rail for link in (l1, l2)}
        crossing = " (across rails)" if len(rails - {None}) > 1 else ""
        yield Hit(
            f"cables swapped{crossing}: {_fmt(a1)} is on {_fmt(b2)} and {_fmt(a2)} is on {_fmt(b1)}; the plan has "
            f"{_fmt(a1)} -- {_fmt(b1)} and {_fmt(a2)} -- {_fmt(b2)}",
            _evidence(ctx, first),
            fix,
            (_evidence(ctx, second, "the other cable"), ctx.at(ctx.link_path(l1), note="planned here")),
        )


def missing_link(ctx: LintContext) -> Iterator[Hit]:
    """A planned cable is not there.

    What it checks:
        With ``--wiring``, every planned cable with an end on a device that reported
        (an LLDP capture of it, or a cabling CSV naming it) must be observed. Cables
        of NICs taken out of service are not expected.

    Why it matters:
        A missing host cable leaves a rail dark on that host: NCCL's connections on
        that NIC time out. A missing uplink halves a leaf's bandwidth to one spine
        and unbalances ECMP.

    Example:
        lab04.json: no neighbour on ens1np0 (planned: leaf-r0-p00-01:Ethernet4/1)

    Fix:
        Plug (or replace) the cable; if the NIC is known broken, list it in the
        host's ``nics_out_of_service``.
    """
    report = analyse(ctx)
    if report is None:
        return
    reporters = ctx.wiring.reporters  # type: ignore[union-attr]
    for link in report.missing:
        a, b = _planned_ends(link)
        related = tuple(Location(reporters[d], 0, 0, "", f"{d} reported here") for d in (a[0], b[0]) if d in reporters)
        yield Hit(
            f"planned cable {_fmt(a)} -- {_fmt(b)} is not in the observed wiring",
            ctx.at(ctx.link_path(link)),
            f"plug in the cable between {_fmt(a)} and {_fmt(b)}",
            related,
        )


def unexpected_neighbour(ctx: LintContext) -> Iterator[Hit]:
    """A fabric port has a neighbour the plan does not have.

    What it checks:
        With ``--wiring``, every observed cable on a fabric port (a backend NIC, a
        switch front-panel port) that is not planned, not part of a swap and not a
        rail crossing: a cable in the wrong port, a neighbour that is not in the
        spec, a cable on a port the plan leaves empty.

    Why it matters:
        The switch configuration for that port (addresses, QoS, description) is
        for another neighbour: the link does not route, or routes the wrong
        device's traffic.

    Example:
        lab02.json: ens2np0 -> leaf-r1-p00-01 Ethernet9/1 (planned: Ethernet2/1)

    Fix:
        Move the cable to the planned port (the message names it), or change the
        spec's cabling if the site is right.
    """
    report = analyse(ctx)
    if report is None:
        return
    for obs, involved in report.unexpected:
        u, v = _ends(obs)
        known = v[0] in ctx.switches or v[0] in ctx.hosts
        plans = "; ".join(f"the plan has {_fmt(e)} -- {_fmt(_other(link, e))}"
                          for e in (u, v) for link in involved if e in _planned_ends(link))
        yield Hit(
            f"{_fmt(u)} is cabled to {_fmt(v)}" + ("" if known else f" ({v[0]} is not in the spec)")
            + (f"; {plans}" if plans else "; the plan leaves these ports empty"),
            _evidence(ctx, obs),
            "move the cable to the planned port" if involved else "remove the cable, or plan it in fabric.cabling",
            tuple(ctx.at(ctx.link_path(link), note="planned here") for link in involved[:1]),
        )


def rail_crossing_observed(ctx: LintContext) -> Iterator[Hit]:
    """A host NIC is cabled to a leaf of another rail.

    What it checks:
        With ``--wiring``, every observed cable between a host's backend NIC and a
        leaf: the leaf must serve the NIC's rail.

    Why it matters:
        The host's rail-r traffic enters another rail's leaf: NCCL's rail-aligned
        connections then cross the spines, or, where rails are separate networks,
        cannot connect (QP timeouts at init, nccl.md §4.4).

    Example:
        lab03.json: ens2np0 (rail 1) -> leaf-r2-p00-01 Ethernet7/1

    Fix:
        Move the cable to the planned port on the NIC's own rail (the message
        names it).
    """
    report = analyse(ctx)
    if report is None:
        return
    for obs, host_end, nic_rail, leaf_rail, link in report.crossings:
        leaf_end = _ends(obs)[1] if _ends(obs)[0] == host_end else _ends(obs)[0]
        planned = f"; the plan has it on {_fmt(_other(link, host_end))}" if link is not None else ""
        yield Hit(
            f"{_fmt(host_end)} (rail {nic_rail}) is cabled to {_fmt(leaf_end)}, a leaf of rail {leaf_rail}{planned}",
            _evidence(ctx, obs),
            f"move the cable to {_fmt(_other(link, host_end))}" if link is not None
            else f"move the cable to a leaf of rail {nic_rail}",
            (ctx.at(ctx.link_path(link), note="planned here"),) if link is not None else (),
        )
