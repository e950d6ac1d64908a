"""Arista switch models fabgen knows: ASIC family, chassis, cages, and what follows from them.

One table for every stage: the planner reads the cage layout to name ports
(a port name is a fact of the chassis, not of the OS alone), the EOS target
reads the ASIC family for load balancing and buffers and the chassis for the
management port, and validation refuses what the family lacks. It is a leaf
module (no fabgen imports) so that plan and targets can both import it without
a cycle, and a model missing from it is a one-line change here.

Why a table and not a pattern: a regex over model names (``7(?:020|280|500|800)R``)
silently missed the chassis Meta used (``7804R3``, ``7808R3`` spell the series
``78xx``) and the 7700R4. Each row names a series by its prefix (``DCS-`` and
what follows it is not a digit), and the longest prefix wins:
``7280CR3K-32P4`` is a 7280CR3, ``7060DX5-32`` is not read as a 64-port
7060DX5-64S, and ``7280R3`` never matches as a ``7280R``.

Port naming: EOS names a fixed switch's 400G port ``Ethernet1/1`` (cage 1,
first lane), the two 400G halves of an 800G cage ``Ethernet1/1`` and
``Ethernet1/5``, and a modular chassis's port ``Ethernet3/1/1`` (line-card
slot, port, lane). A row without a cage layout (``cages == 0``) keeps the OS's
plain scheme (:mod:`fabgen.plan.ports`).

Sources:

* Arista's 7800R3 platform overview: 7804R3 has 4 line-card slots and 144 x
  400G, 7808R3 8 slots and 288 x 400G; two supervisor slots, so line cards
  start at slot 3; the 7812R3/7816R3 take the same 36-port line cards. The
  7700R4 row (Jericho3-AI, 800G cages) is modelled the same way and should be
  checked against ``show interfaces status`` of a real system before relying
  on its slot count.
* ``load-balance sand profile`` (RoCE QP hashing on BTH bytes) exists on the
  Jericho-family "sand" platforms only; AVD 6.4.0's schema
  (``load_balance.policies.sand_profiles``) says EOS 4.33.1F or later.
* ``ip hardware fib load-balance distribution dynamic`` (DLB on ECMP groups) is
  EOS 4.30.2F (Arista TOI "ECMP Load Balancing DLB"); AVD 6.4.0 models it as
  ``ip_hardware.fib.load_balance_distribution.dynamic``. The TOI describes it on
  Broadcom Tomahawk-family (StrataXGS) fixed switches, whose ASIC measures port
  load per ECMP member; fabgen enables it on Tomahawk 4 and 5 only and refuses
  ``dlb`` elsewhere (Jericho platforms balance through their fabric).
* Per-packet spray has no EOS command at all (the 7700R4's cell spraying is
  internal to the distributed chassis, not a routed-ECMP mode), so ``spray``
  is refused on every EOS platform.
* Modular chassis (7300, 7500, 7800 series) name their management port
  ``Management0`` (the active supervisor's), fixed systems ``Management1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

ASIC_FAMILIES: dict[str, tuple[bool, bool]] = {
    "qumran": (True, False), "jericho": (True, False), "jericho-plus": (True, False),
    "jericho2": (True, False), "jericho2c": (True, False), "jericho2c-plus": (True, False),
    "jericho3": (True, False), "jericho3-ai": (True, False), "qumran2": (True, False), "qumran3": (True, False),
    "tomahawk3": (False, False), "tomahawk4": (False, True), "tomahawk5": (False, True),
    "trident3": (False, False), "trident4": (False, False),
}
"""ASIC family -> (sand, dlb); also what the spec's ``asic:`` override is read against."""


def family_features(asic: str) -> tuple[bool, bool]:
    """(sand, dlb) of an ASIC family; an unknown Jericho/Qumran name is still sand, nothing else has DLB."""
    family = asic.lower()
    return ASIC_FAMILIES.get(family, (family.startswith(("jericho", "qumran")), False))


@dataclass(frozen=True, slots=True)
class Platform:
    """What fabgen needs to know about one Arista series or model."""

    series: str
    asic: str
    """ASIC family, lower case (``jericho2``, ``tomahawk4``)."""
    modular: bool
    """A chassis with supervisors: management port ``Management0``, ports named by slot."""
    cage_speed: int = 0
    """Gb/s of one front-panel cage; a tier speed below it is a breakout (2 x 400G on an 800G cage)."""
    cages: int = 0
    """Front-panel cages (per line card on a modular chassis); 0 when the layout is not modelled."""
    slots: int = 0
    """Line-card slots (modular)."""
    first_slot: int = 3
    """Number of the first line-card slot (after the two supervisors)."""
    lanes: int = 8
    """Electrical lanes per cage."""

    @property
    def sand(self) -> bool:
        """Jericho family: has ``load-balance sand profile``."""
        return family_features(self.asic)[0]

    @property
    def dlb(self) -> bool:
        """Has ``ip hardware fib load-balance distribution dynamic``."""
        return family_features(self.asic)[1]

    @property
    def deep_buffer(self) -> bool:
        """Jericho's off-chip HBM packet buffer: every sand platform has one, no Tomahawk or Trident does."""
        return self.sand

    @property
    def management_port(self) -> str:
        """EOS: ``Management0`` is the active supervisor's port on a modular chassis, ``Management1`` on a fixed one."""
        return "Management0" if self.modular else "Management1"

    def breakout(self, speed: int) -> int:
        """Ports per cage at ``speed`` (1 when the cage runs at its own speed)."""
        return max(self.cage_speed // speed, 1) if speed < self.cage_speed else 1

    def radix(self, speed: int) -> int:
        """Front-panel ports at ``speed`` on a full chassis."""
        return self.cages * max(self.slots, 1) * self.breakout(speed)


def _r3(series: str, slots: int) -> Platform:
    """A 7800R3 chassis with 36 x 400G line cards (7800R3-36D/36P)."""
    return Platform(series, "jericho2", True, 400, 36, slots=slots)


PLATFORMS: tuple[Platform, ...] = (
    # Jericho family ("sand").
    Platform("7020R", "qumran", False),
    Platform("7280R", "jericho", False),
    Platform("7280R2", "jericho-plus", False),
    Platform("7280R3", "jericho2", False, 400, 24),
    Platform("7280CR3", "jericho2", False),
    Platform("7280SR3", "jericho2", False),
    Platform("7280PR3", "jericho2", False),
    Platform("7280DR3", "jericho2", False),
    Platform("7500R", "jericho", True),
    Platform("7500R2", "jericho-plus", True),
    Platform("7500R3", "jericho2", True),
    _r3("7800R3", 16),  # the family read as its largest member
    _r3("7804R3", 4), _r3("7808R3", 8), _r3("7812R3", 12), _r3("7816R3", 16),
    Platform("7800R4", "jericho3", True),
    Platform("7700R4", "jericho3-ai", True, 800, 18, slots=16),
    # Broadcom Tomahawk family.
    Platform("7060X4", "tomahawk3", False),
    Platform("7060DX4", "tomahawk3", False),
    Platform("7060PX4", "tomahawk3", False),
    Platform("7060X5", "tomahawk4", False, 400, 64),
    Platform("7060DX5", "tomahawk4", False),
    Platform("7060DX5-64S", "tomahawk4", False, 400, 64),
    Platform("7060DX5-32", "tomahawk4", False, 400, 32),
    Platform("7060PX5", "tomahawk4", False),
    Platform("7060PX5-64S", "tomahawk4", False, 400, 64),
    Platform("7388X5", "tomahawk4", False),
    Platform("7060X6", "tomahawk5", False, 800, 64),
    # Broadcom Trident family.
    Platform("7050X3", "trident3", False),
    Platform("7050X4", "trident4", False),
    Platform("7300X3", "trident3", True),
)

_BY_SERIES = sorted(PLATFORMS, key=lambda p: -len(p.series))


def series_of(model: str) -> str:
    """``DCS-7060DX5-64S`` -> ``7060DX5-64S`` (upper case, vendor prefix off)."""
    return model.upper().removeprefix("DCS-")


@cache
def platform(model: str) -> Platform | None:
    """The row whose series is the longest prefix of ``model``; None for a model fabgen does not know."""
    name = series_of(model)
    for row in _BY_SERIES:
        if name.startswith(row.series) and not name[len(row.series):len(row.series) + 1].isdigit():
            return row
    return None


def features(model: str, asic: str | None) -> tuple[bool, bool]:
    """(sand, dlb) for a switch: the spec's ``asic:`` decides when given, else the model's row."""
    if asic:
        return family_features(asic)
    row = platform(model)
    return (row.sand, row.dlb) if row else (False, False)


def is_modular(model: str) -> bool:
    """A chassis (management port ``Management0``); an unknown model by its series number, else fixed."""
    row = platform(model)
    if row is not None:
        return row.modular
    return series_of(model).startswith(("7300", "7500", "7800"))


def management_port(model: str) -> str:
    """EOS management interface of ``model``."""
    return "Management0" if is_modular(model) else "Management1"
