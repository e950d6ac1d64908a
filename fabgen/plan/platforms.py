"""Switch models fabgen knows: fixed or modular, ASIC family, cage speed, and the port names that follow.

Why a table: a port name is a fact of the chassis, not of the OS alone. EOS
names a fixed switch's 400G port ``Ethernet1/1`` (cage 1, first lane), the two
400G halves of an 800G cage ``Ethernet1/1`` and ``Ethernet1/5`` (first lane of
each 4-lane group), and a modular chassis's port ``Ethernet3/1/1`` (line-card
slot, port, lane). A model not in the table keeps the OS's plain scheme
(``fabgen.plan.ports``). Plain data on purpose: targets read it (the EOS
management interface), nothing here knows a template.

Sources: Arista's 7800R3 platform overview (7804R3: 4 line-card slots and 144
x 400G; 7808R3: 8 slots and 288 x 400G; two supervisor slots, so line cards
start at slot 3); the 7812R3/7816R3 follow the same 36-port line cards. The
7700R4 row (Jericho3-AI, 800G cages) is modelled the same way and should be
checked against ``show interfaces status`` of a real system before relying on
its slot count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from fabgen.plan.ports import port_index, port_lanes, port_name


@dataclass(frozen=True, slots=True)
class Platform:
    model: str
    vendor: str
    asic: str
    """ASIC family (``jericho2``, ``tomahawk4`` ...), for buffer and hashing decisions."""
    chassis: Literal["fixed", "modular"]
    cage_speed: int
    """Gb/s of one front-panel cage; a tier speed below it is a breakout (2 x 400G on an 800G cage)."""
    cages: int
    """Front-panel cages (per line card on a modular chassis)."""
    slots: int = 0
    """Line-card slots (modular)."""
    first_slot: int = 3
    """Number of the first line-card slot (after the two supervisors)."""
    lanes: int = 8
    """Electrical lanes per cage."""
    deep_buffer: bool = False

    @property
    def management_port(self) -> str:
        """EOS: ``Management0`` is the active supervisor's port on a modular chassis, ``Management1`` on a fixed one."""
        return "Management0" if self.chassis == "modular" else "Management1"

    def breakout(self, speed: int) -> int:
        """Ports per cage at ``speed`` (1 when the cage runs at its own speed)."""
        return max(self.cage_speed // speed, 1) if speed < self.cage_speed else 1

    def radix(self, speed: int) -> int:
        """Front-panel ports at ``speed`` on a full chassis."""
        return self.cages * max(self.slots, 1) * self.breakout(speed)


def _r3(model: str, slots: int) -> Platform:
    """A 7800R3 chassis with 36 x 400G line cards (7800R3-36D/36P)."""
    return Platform(model, "arista", "jericho2", "modular", 400, 36, slots=slots, deep_buffer=True)


PLATFORMS: dict[str, Platform] = {p.model: p for p in (
    _r3("7804R3", 4), _r3("7808R3", 8), _r3("7812R3", 12), _r3("7816R3", 16),
    _r3("7800R3", 16),  # the family read as its largest member
    Platform("7700R4", "arista", "jericho3-ai", "modular", 800, 18, slots=16, deep_buffer=True),
    Platform("7280R3", "arista", "jericho2", "fixed", 400, 24, deep_buffer=True),
    Platform("7060DX5-64S", "arista", "tomahawk4", "fixed", 400, 64),
    Platform("7060PX5-64S", "arista", "tomahawk4", "fixed", 400, 64),
    Platform("7060DX5-32", "arista", "tomahawk4", "fixed", 400, 32),
    Platform("7060X5", "arista", "tomahawk4", "fixed", 400, 64),
    Platform("7060X6-64PE", "arista", "tomahawk5", "fixed", 800, 64),
    Platform("7060X6", "arista", "tomahawk5", "fixed", 800, 64),
    Platform("SN5600", "nvidia", "spectrum4", "fixed", 800, 64),
    Platform("Mellanox-SN5600-O64", "nvidia", "spectrum4", "fixed", 800, 64),
)}

_PREFIX = re.compile(r"^(?:DCS-)?", re.IGNORECASE)


@cache
def platform(model: str) -> Platform | None:
    """The table's row for ``model`` (a ``DCS-`` prefix and a ``-suffix`` after the known name allowed)."""
    bare = _PREFIX.sub("", model)
    if bare in PLATFORMS:
        return PLATFORMS[bare]
    for known in sorted(PLATFORMS, key=len, reverse=True):  # longest first: 7060DX5-64S before 7060X5
        if bare.upper().startswith(known.upper() + "-"):
            return PLATFORMS[known]
    return None


def _named(os: str, model: str, speed: int) -> Platform | None:
    """The platform whose naming applies: EOS only (SONiC and Cumulus name ports by lane or ``swp``)."""
    if os != "eos":
        return None
    found = platform(model)
    if found is None or (found.chassis == "fixed" and found.breakout(speed) == 1):
        return None  # the OS's plain scheme is already right
    return found


@cache
def model_port_name(os: str, model: str, index: int, speed: int, width: int | None = None) -> str:
    """The name of front-panel port ``index`` (1-based, counted at ``speed``) on ``model``.

    ``width``: lanes per port where a SONiC SKU fixes it (SONiC names ports by their first lane).
    """
    found = _named(os, model, speed)
    if found is None:
        return port_name(os, index, speed, width)
    per_cage = found.breakout(speed)
    cage, sub = divmod(index - 1, per_cage)
    lane = 1 + sub * (found.lanes // per_cage)
    if found.chassis == "modular":
        slot, port = divmod(cage, found.cages)
        return f"Ethernet{found.first_slot + slot}/{port + 1}/{lane}"
    return f"Ethernet{cage + 1}/{lane}"


_EOS_NAME = re.compile(r"^Ethernet(\d+)/(\d+)(?:/(\d+))?$")


@cache
def model_port_index(os: str, model: str, name: str, speed: int, width: int | None = None) -> int:
    """1-based port number of ``name`` on ``model``, or 0 when it is not in the model's scheme."""
    found = _named(os, model, speed)
    if found is None:
        return port_index(os, name, speed, width)
    match = _EOS_NAME.match(name)
    if not match:
        return 0
    per_cage = found.breakout(speed)
    step = found.lanes // per_cage
    if found.chassis == "modular":
        if match.group(3) is None:
            return 0
        slot, port, lane = int(match.group(1)) - found.first_slot, int(match.group(2)), int(match.group(3))
        if not 0 <= slot < found.slots or not 1 <= port <= found.cages:
            return 0
        cage = slot * found.cages + port - 1
    else:
        if match.group(3) is not None:
            return 0
        cage, lane = int(match.group(1)) - 1, int(match.group(2))
    if (lane - 1) % step or not 1 <= lane <= found.lanes:
        return 0
    return cage * per_cage + (lane - 1) // step + 1


def management_port(model: str) -> str | None:
    """EOS management interface of ``model``, or None when the table does not know the model."""
    found = platform(model)
    return found.management_port if found else None


@cache
def model_port_lanes(os: str, model: str, index: int, speed: int, width: int | None = None) -> tuple[int, ...]:
    """SerDes lanes of port ``index``: a breakout half of an 800G cage has 4 of the cage's 8, not 8."""
    found = _named(os, model, speed)
    if found is None or found.breakout(speed) == 1:
        return port_lanes(os, index, speed, width)
    width = found.lanes // found.breakout(speed)
    return tuple(range((index - 1) * width, index * width))
