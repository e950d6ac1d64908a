"""Stable addressing: every address from a device's position, never from enumeration order.

Why: when addresses are handed out in list order, one explicit cable (which
moves a link to the end of the list) or a ratio change (which changes how many
switches come before the hosts) renumbers every device after it, and a review of
a two-cable change drowns in a fabric-wide diff. Here each pool is cut into
fixed blocks, one per tier (and hosts), and a device's address is its block's
start plus its position in the layout:

- **p2p** (``/31`` each): every leaf owns ``radix`` /31s, one per front-panel
  port; the /31 of a host-leaf or leaf-spine link is the one of its *leaf port*.
  In a 3-tier fabric every spine owns ``radix`` /31s the same way for its links
  to super-spines. Cables whose port is outside the OS's scheme (or beyond the
  radix, or a second cable on one port) take /31s from the top of the pool
  down, in ``fabric.cabling`` order, skipping /31s a port already has.
- **loopbacks** (``/32``): leaves, then spines, then super-spines.
- **mgmt**: hosts (spec order), then leaves, spines, super-spines.

A block holds the next power of two of its tier's slots (at least 1), so a tier
can grow inside its block without moving the next one. Positions: leaf ``j`` of
rail ``r`` in pod ``p`` is ``(p * leaves_per_rail + j) * rails + r`` (rail
topology) or ``p * racks_per_pod + j`` (rack topology); spine ``s`` of pod ``p``
is ``p * spines_per_pod + s``; super-spine ``m`` of plane ``q`` is
``q * supers_per_plane + m``.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabgen.errors import Problem, SpecError
from fabgen.plan._fast import blank, replaced
from fabgen.plan.model import Link
from fabgen.plan.ports import model_port_index
from fabgen.source import DataPath, SourceDoc, spec_problem

if TYPE_CHECKING:
    from fabgen.plan.layout import Layout
    from fabgen.plan.slots import RawLink, SwitchSlot
    from fabgen.spec import ClusterSpec

_PACK = struct.Struct("!I").pack
_ADDR = ("fabric", "addressing")


def _ntoa(value: int) -> str:
    return socket.inet_ntoa(_PACK(value))  # ipaddress objects are too slow for 300k addresses


def room(count: int) -> int:
    """Slots a block keeps for ``count`` devices: the next power of two, so a tier can grow in place."""
    return 1 << max(count - 1, 0).bit_length()


@dataclass(frozen=True, slots=True)
class Block:
    """One tier's share of a pool, as ``fabgen plan`` and the README describe it."""

    pool: str
    role: str
    first: str
    last: str
    slots: int
    """Devices (or, for p2p, /31s) the block can hold."""
    used: int


def carve(pool: ipaddress.IPv4Network, wants: Sequence[tuple[str, int, int]], label: str, first_offset: int,
          doc: SourceDoc | None, path: DataPath) -> dict[str, tuple[int, Block]]:
    """Cut ``pool`` into consecutive blocks: ``(role, used, slots)`` each of ``width`` addresses per slot.

    ``wants`` gives each block's role, the slots it uses and the width of a slot
    in addresses (1 for a host address, 2 for a /31). Returns each role's first
    address (as an int) and its description; refuses, at the pool's spec line, a
    pool too small for the layout, naming every block.
    """
    base = int(pool.network_address) + first_offset
    end = int(pool.broadcast_address) - (1 if first_offset else 0)  # host pools keep the broadcast address
    out: dict[str, tuple[int, Block]] = {}
    cursor = base
    rows = []
    for role, used, width in wants:
        slots = room(used)
        size = slots * width
        rows.append(f"{role} {used} (block of {slots}" + (f" x {width} addresses)" if width > 1 else ")"))
        out[role] = (cursor, Block(label, role, _ntoa(cursor), _ntoa(cursor + size - 1), slots, used))
        cursor += size
    if cursor - 1 > end:
        need = cursor - base
        raise SpecError([spec_problem(doc, (
            f"the {label} pool {pool} has {end - base + 1} usable addresses, but the layout needs {need}: "
            + ", ".join(rows) + "; every tier gets a power-of-two block so that it can grow in place"), path)])
    return out


def switch_ordinals(slots: Sequence[SwitchSlot], layout: Layout, rails: int) -> dict[str, int]:
    """Each switch's position in its tier (see the module docstring), independent of which others exist."""
    out: dict[str, int] = {}
    racks = getattr(layout, "rack", False)
    for slot in slots:
        pod = slot.pod or 0
        if slot.tier == "leaf":
            if racks:
                out[slot.name] = pod * layout.leaves_per_rail + slot.index
            else:
                out[slot.name] = (pod * layout.leaves_per_rail + slot.index) * rails + (slot.rail or 0)
        elif slot.tier == "spine":
            out[slot.name] = pod * layout.spines_per_pod + slot.index
        else:
            out[slot.name] = (slot.plane or 0) * layout.supers_per_plane + slot.index
    return out


def tier_slots(layout: Layout, rails: int) -> dict[str, int]:
    """How many positions each tier has in this layout (empty leaf positions included)."""
    leaves = layout.pods * layout.leaves_per_rail * (1 if getattr(layout, "rack", False) else rails)
    out = {"leaf": leaves, "spine": layout.pods * layout.spines_per_pod}
    if layout.tiers == 3:
        out["super_spine"] = layout.planes * layout.supers_per_plane
    return out


_TIER_ROLE = {"leaf": "leaves", "spine": "spines", "super_spine": "super-spines"}


@dataclass(frozen=True, slots=True)
class SwitchInfo:
    tier: str
    os: str
    model: str
    speed: int
    radix: int
    ordinal: int


class StableAddresses:
    """The address of every link, loopback and management interface of one plan."""

    def __init__(self, spec: ClusterSpec, layout: Layout, slots: Sequence[SwitchSlot], doc: SourceDoc | None) -> None:
        self.spec = spec
        self.doc = doc
        tiers = spec.fabric.tiers
        shapes = {"leaf": tiers.leaf, "spine": tiers.spine}
        if tiers.super_spine is not None:
            shapes["super_spine"] = tiers.super_spine
        ordinals = switch_ordinals(slots, layout, spec.fabric.rails)
        self.switches = {s.name: SwitchInfo(s.tier, shapes[s.tier].os, shapes[s.tier].model, shapes[s.tier].speed, shapes[s.tier].ports,
                                            ordinals[s.name]) for s in slots}
        self.slots = tier_slots(layout, spec.fabric.rails)
        self.tiers = [t for t in ("leaf", "spine", "super_spine") if t in self.slots]
        self.blocks: list[Block] = []
        self.pinned: dict[tuple[str, str], str] = {}
        addressing = spec.fabric.addressing
        p2p = [("leaves", self.slots["leaf"], 2 * tiers.leaf.ports)]
        if layout.tiers == 3:
            p2p.append(("spines", self.slots["spine"], 2 * tiers.spine.ports))
        self.p2p_pool = addressing.p2p
        self.p2p = carve(addressing.p2p, p2p, "p2p", 0, doc, (*_ADDR, "p2p"))
        self.blocks += [b for _, b in self.p2p.values()]
        loops = [(_TIER_ROLE[t], self.slots[t], 1) for t in self.tiers]
        self.loopbacks = carve(addressing.loopbacks, loops, "loopback", 1, doc, (*_ADDR, "loopbacks"))
        self.blocks += [b for _, b in self.loopbacks.values()]
        self.mgmt: dict[str, tuple[int, Block]] | None = None
        self.mgmt_length = f"/{addressing.mgmt.prefixlen}" if addressing.mgmt is not None else ""
        """``/NN`` of a management address (3,000 hosts and 2,000 switches at 24k GPUs ask)."""
        if addressing.mgmt is not None:
            hosts = sum(g.host_count() for g in spec.hosts)
            self.mgmt = carve(addressing.mgmt, [("hosts", hosts, 1), *loops], "mgmt", 1, doc, (*_ADDR, "mgmt"))
            self.blocks += [b for _, b in self.mgmt.values()]

    def pin(self, pinned: dict[tuple[str, str], str]) -> None:
        """Pinned addresses ((device, ``loopback``/``mgmt``) -> address), checked by :mod:`fabgen.plan.pins`."""
        self.pinned = pinned

    def loopback(self, name: str) -> str:
        pinned = self.pinned.get((name, "loopback"))
        if pinned is not None:
            return f"{pinned}/32"
        info = self.switches[name]
        return f"{_ntoa(self.loopbacks[_TIER_ROLE[info.tier]][0] + info.ordinal)}/32"

    def switch_mgmt(self, name: str) -> str | None:
        if self.mgmt is None:
            return None
        pinned = self.pinned.get((name, "mgmt"))
        if pinned is not None:
            return f"{pinned}{self.mgmt_length}"
        info = self.switches[name]
        return f"{_ntoa(self.mgmt[_TIER_ROLE[info.tier]][0] + info.ordinal)}{self.mgmt_length}"

    def host_mgmt(self, index: int, name: str) -> str | None:
        """``index``: the host's position in the spec's host list (group order, then the group's own order)."""
        if self.mgmt is None:
            return None
        pinned = self.pinned.get((name, "mgmt"))
        if pinned is not None:
            return f"{pinned}{self.mgmt_length}"
        return f"{_ntoa(self.mgmt['hosts'][0] + index)}{self.mgmt_length}"

    def links(self, raw: Sequence[RawLink], lengths: dict[tuple[str, str], int] | None = None) -> list[Link]:
        """Every link with its /31, numbered by its owner's port: the leaf of a host or leaf-spine link, the
        spine of a spine-super-spine link."""
        blocks = {"leaf": self.p2p["leaves"][0]}
        if "spines" in self.p2p:
            blocks["spine"] = self.p2p["spines"][0]
        taken: set[int] = set()
        spill: list[int] = []
        # Hot loop (800k links at 262k GPUs): per owning switch its first /31, radix and the port numbers of its
        # kind's port names (memoised per kind), looked up once per link.
        numbers: dict[tuple[str, str, int], dict[str, int]] = {}
        owners: dict[str, tuple[int, int, dict[str, int], SwitchInfo]] = {}
        for name, info in self.switches.items():
            if info.tier in blocks:
                known = numbers.setdefault((info.os, info.model, info.speed), {})
                owners[name] = (blocks[info.tier] + 2 * info.ordinal * info.radix, info.radix, known, info)
        owner_of = owners.get
        out: list[Link] = []
        add = out.append
        # A /31's two addresses share their first three octets (``first`` is even): one "a.b.c." per /24, and
        # the last octet with its "/31" from a table, in place of two inet_ntoa calls and two f-strings a link.
        heads: dict[int, str] = {}
        tails = _TAILS
        blank_link, link_class = _BLANK_LINK, Link
        # One pass: a link whose owner port has its own /31 is built at once; the others (outside the port
        # scheme, or a second cable on a port) are built in ``spill`` below, once every port's /31 is known.
        # The layout emits each owner's links one after the other: its look-up is redone only when it changes.
        device: str | None = None
        owner: tuple[int, int, dict[str, int], SwitchInfo] | None = None
        for a, ap, b, bp, role, rail, speed, explicit in raw:
            if role == "host-leaf":
                if b is not device:
                    device, owner = b, owner_of(b)
                port = bp
            else:
                if a is not device:
                    device, owner = a, owner_of(a)
                port = ap
            first = -1
            if owner is not None:
                base, radix, known, info = owner
                try:
                    index = known[port]
                except KeyError:  # the first port of this name on the switch kind
                    index = known[port] = model_port_index(info.os, info.model, port, info.speed)
                if 1 <= index <= radix:
                    first = base + 2 * (index - 1)
                    if first in taken:
                        first = -1
                    else:
                        taken.add(first)
            if first < 0:
                spill.append(len(out))
                first = 0  # a placeholder /31: the link is built again below
            length = (lengths.get((a, ap)) or lengths.get((b, bp))) if explicit and lengths else None
            try:
                head = heads[first >> 8]
            except KeyError:  # the first /31 of this /24
                head = heads[first >> 8] = _ntoa(first & ~0xFF)[:-1]
            low = first & 0xFF
            # Link(...) with every field, set one by one on its slot twin (fabgen.plan._fast.blank)
            item = blank_link()
            item.a_device = a
            item.a_port = ap
            item.b_device = b
            item.b_port = bp
            item.role = role
            item.rail = rail
            item.speed = speed
            item.a_address = head + tails[low + 1]
            item.b_address = head + tails[low]
            item.explicit = explicit
            item.length_m = length
            item.__class__ = link_class
            add(item)
        if spill:
            # From the top of the pool down, skipping /31s a port already has: the top of the last block is the
            # last position's last ports, rarely cabled, so a tight pool still takes a few odd cables.
            candidate = int(self.p2p_pool.broadcast_address) + 1
            floor = int(self.p2p_pool.network_address)
            for position in spill:
                candidate -= 2
                while candidate in taken and candidate >= floor:
                    candidate -= 2
                if candidate < floor:
                    raise SpecError([spec_problem(self.doc, (
                        f"{len(spill)} cable(s) outside the port scheme need /31s, but every /31 of the p2p pool "
                        f"{self.p2p_pool} is taken"), (*_ADDR, "p2p"))])
                out[position] = replaced(out[position], a_address=f"{_ntoa(candidate + 1)}{P2P_SUFFIX}",
                                         b_address=f"{_ntoa(candidate)}{P2P_SUFFIX}")
        return out


P2P_SUFFIX = "/31"
"""The prefix length every link address carries (:meth:`StableAddresses.links` makes them all)."""
BARE = -len(P2P_SUFFIX)
"""``address[:BARE]`` is a link address without its prefix length: a slice, where ``partition("/")`` also makes a
tuple and the ``"31"`` string (200k link addresses are cut at 24k GPUs)."""
_TAILS = tuple(f"{n}{P2P_SUFFIX}" for n in range(256))
_BLANK_LINK = blank(Link)


def refuse(message: str, doc: SourceDoc | None, path: DataPath) -> SpecError:
    return SpecError([spec_problem(doc, message, path)]) if doc else SpecError([Problem(message, file="fabric")])
