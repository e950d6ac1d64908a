"""Arista platform families: which EOS load-balancing features a switch model has.

A leaf module (no fabgen imports) so that the renderer (``config.py``) and the
validation limits (``limits.py``) read one table, and a model missing from it is
a one-line change here rather than a regex to widen.

Why a table and not a pattern: a regex over model names (``7(?:020|280|500|800)R``)
silently missed the chassis Meta used (``7804R3``, ``7808R3`` spell the series
``78xx``) and the 7700R4, so QP hashing degraded to a comment on exactly the
platforms that have it. The table names each series by its prefix (``DCS-`` and
what follows it is not a digit), and the longest prefix wins: ``7280CR3K-32P4``
is a 7280CR3 and ``7280R3`` never matches as a ``7280R``.

Sources:

* ``load-balance sand profile`` (RoCE QP hashing on BTH bytes) exists on the
  Jericho-family "sand" platforms only; AVD 6.4.0's schema
  (``load_balance.policies.sand_profiles``) says EOS 4.33.1F or later.
* ``ip hardware fib load-balance distribution dynamic`` (DLB on ECMP groups) is
  EOS 4.30.2F (Arista TOI "ECMP Load Balancing DLB"); AVD 6.4.0 models it as
  ``ip_hardware.fib.load_balance_distribution.dynamic``. The TOI describes it on
  Broadcom Tomahawk-family (StrataXGS) fixed switches, whose ASIC measures port
  load per ECMP member; fabgen enables it on Tomahawk 4 and 5 platforms only
  and refuses ``dlb`` elsewhere (Jericho platforms balance through their fabric,
  not through DLB).
* Per-packet spray has no EOS command at all (the 7700R4's cell spraying is
  internal to the distributed chassis, not a routed-ECMP mode), so ``spray``
  is refused on every EOS platform.
* Modular chassis (7300, 7500, 7800 series) name their management port
  ``Management0`` (the supervisor's), fixed systems ``Management1``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Platform:
    """What fabgen needs to know about one Arista series."""

    series: str
    asic: str
    """ASIC family, lower case (``jericho2``, ``tomahawk4``)."""
    sand: bool
    """Jericho-family: has ``load-balance sand profile``."""
    dlb: bool
    """Has ``ip hardware fib load-balance distribution dynamic``."""
    modular: bool
    """A chassis with supervisors: management port ``Management0``."""


PLATFORMS: tuple[Platform, ...] = (
    # Jericho family ("sand").
    Platform("7020R", "qumran", sand=True, dlb=False, modular=False),
    Platform("7280R", "jericho", sand=True, dlb=False, modular=False),
    Platform("7280R2", "jericho-plus", sand=True, dlb=False, modular=False),
    Platform("7280R3", "jericho2", sand=True, dlb=False, modular=False),
    Platform("7280CR3", "jericho2", sand=True, dlb=False, modular=False),
    Platform("7280SR3", "jericho2", sand=True, dlb=False, modular=False),
    Platform("7280PR3", "jericho2", sand=True, dlb=False, modular=False),
    Platform("7280DR3", "jericho2", sand=True, dlb=False, modular=False),
    Platform("7500R", "jericho", sand=True, dlb=False, modular=True),
    Platform("7500R2", "jericho-plus", sand=True, dlb=False, modular=True),
    Platform("7500R3", "jericho2", sand=True, dlb=False, modular=True),
    Platform("7800R3", "jericho2", sand=True, dlb=False, modular=True),
    Platform("7804R3", "jericho2", sand=True, dlb=False, modular=True),
    Platform("7808R3", "jericho2", sand=True, dlb=False, modular=True),
    Platform("7812R3", "jericho2", sand=True, dlb=False, modular=True),
    Platform("7816R3", "jericho2", sand=True, dlb=False, modular=True),
    Platform("7800R4", "jericho3", sand=True, dlb=False, modular=True),
    Platform("7700R4", "jericho3-ai", sand=True, dlb=False, modular=True),
    # Broadcom Tomahawk family.
    Platform("7060X4", "tomahawk3", sand=False, dlb=False, modular=False),
    Platform("7060DX4", "tomahawk3", sand=False, dlb=False, modular=False),
    Platform("7060PX4", "tomahawk3", sand=False, dlb=False, modular=False),
    Platform("7060X5", "tomahawk4", sand=False, dlb=True, modular=False),
    Platform("7060DX5", "tomahawk4", sand=False, dlb=True, modular=False),
    Platform("7060PX5", "tomahawk4", sand=False, dlb=True, modular=False),
    Platform("7388X5", "tomahawk4", sand=False, dlb=True, modular=False),
    Platform("7060X6", "tomahawk5", sand=False, dlb=True, modular=False),
    # Broadcom Trident family.
    Platform("7050X3", "trident3", sand=False, dlb=False, modular=False),
    Platform("7050X4", "trident4", sand=False, dlb=False, modular=False),
    Platform("7300X3", "trident3", sand=False, dlb=False, modular=True),
)

ASIC_FAMILIES: dict[str, tuple[bool, bool]] = {
    "qumran": (True, False), "jericho": (True, False), "jericho-plus": (True, False),
    "jericho2": (True, False), "jericho2c": (True, False), "jericho2c-plus": (True, False),
    "jericho3": (True, False), "jericho3-ai": (True, False), "qumran2": (True, False), "qumran3": (True, False),
    "tomahawk3": (False, False), "tomahawk4": (False, True), "tomahawk5": (False, True),
    "trident3": (False, False), "trident4": (False, False),
}
"""The spec's ``asic:`` override -> (sand, dlb), for a model this table does not know."""

_BY_SERIES = sorted(PLATFORMS, key=lambda p: -len(p.series))


def series_of(model: str) -> str:
    """``DCS-7060DX5-64S`` -> ``7060DX5-64S`` (upper case, vendor prefix off)."""
    name = model.upper()
    return name.removeprefix("DCS-")


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
        family = asic.lower()
        return ASIC_FAMILIES.get(family, (family.startswith(("jericho", "qumran")), False))
    row = platform(model)
    return (row.sand, row.dlb) if row else (False, False)


def is_modular(model: str) -> bool:
    """A chassis (management port ``Management0``); unknown models are taken as fixed systems."""
    row = platform(model)
    if row is not None:
        return row.modular
    return series_of(model).startswith(("7300", "7500", "7800"))
