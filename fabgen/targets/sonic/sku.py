"""The SONiC SKUs fabgen knows: platform, ports, buffer pools and the headroom lookup table.

Why fabgen carries this itself: swss and syncd mount
``/usr/share/sonic/device/$PLATFORM/$HWSKU`` and fail when it does not exist,
and the port names, lanes and aliases of CONFIG_DB ``PORT`` must be the ones
the SKU's ``port_config.ini`` and ``hwsku.json`` define, or ``portsyncd``
creates ports the ASIC does not have. So a SKU here is written down by us as a
rule (the SN5600's cages are regular) and a few numbers, and
``tests/targets/sonic/test_sonic_sku.py`` proves it equal, field by field, to
sonic-buildimage's files (``../shared/reference/sonic-device``).

A leaf module: it imports nothing from fabgen, because the planner names SONiC
ports with it (:func:`lanes_per_port`) and the SONiC target renders from it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache

__all__ = [
    "MODEL_DEFAULT_SKU",
    "SKUS",
    "Headroom",
    "Pools",
    "Sku",
    "SkuPort",
    "breakout_speeds",
    "fabric_ports",
    "lanes_per_port",
    "lookup_cable",
    "resolve_hwsku",
    "sku_hint",
]


@dataclass(frozen=True, slots=True)
class SkuPort:
    """One line of ``port_config.ini`` with its ``hwsku.json`` entry."""

    name: str
    lanes: tuple[int, ...]
    alias: str
    index: int
    """Front-panel cage (two ports of a 2x400G breakout share one)."""
    speed: int
    """Mb/s the SKU brings the port up at (``port_config.ini`` speed, or the breakout mode's)."""
    breakout: str
    """``hwsku.json`` ``default_brkout_mode``, e.g. ``2x400G[200G,100G,50G,40G,25G,10G]``."""
    autoneg: str | None = None
    """``hwsku.json`` ``autoneg`` when the SKU sets it."""


@dataclass(frozen=True, slots=True)
class Pools:
    """Bytes of the four pools of a SKU's ``buffers_defaults_t0/t1.j2``."""

    ingress_lossless: int
    ingress_lossy: int
    egress_lossless: int
    egress_lossy: int


@dataclass(frozen=True, slots=True)
class Headroom:
    """One row of ``pg_profile_lookup.ini``: bytes of a lossless PG profile."""

    size: int
    xon: int
    xoff: int
    threshold: int
    """``dynamic_th`` buffermgrd writes with it."""


@dataclass(frozen=True, slots=True)
class Sku:
    name: str
    platform: str
    asic: str
    """Key of :data:`fabgen.spec.buffers.ASIC_PRESETS` (``spectrum4``): the platform's ASIC_TABLE row."""
    ports: tuple[SkuPort, ...]
    pools_t0: Pools
    """For ToR routers (fabgen's leaves)."""
    pools_t1: Pools
    """For leaf routers (fabgen's spines and super-spines; the SN5600 ships no t2 file)."""
    pg_lookup: tuple[tuple[int, int, Headroom], ...]
    """(speed Mb/s, cable m, headroom) of the traditional buffer model, in file order."""
    create_only_config_db_buffers: bool = False
    """The SKU's ``create_only_config_db_buffers.json``: orchagent creates only the buffers CONFIG_DB names."""

    @property
    def model_number(self) -> int:
        """buffermgrd's ``m_model_number`` (5600): it names 8-lane profiles by it."""
        match = re.search(r"sn(\d{4})", self.platform)
        return int(match.group(1)) if match else 0

    def port(self, name: str) -> SkuPort | None:
        return _port_index(self).get(name)

    def port_named(self, spelling: str) -> str | None:
        """The port an LLDP peer or an operator calls ``spelling``: its name or alias, any case."""
        return _spellings(self).get(spelling.lower())

    def headroom(self, speed_mbps: int, cable_m: int) -> Headroom | None:
        for speed, cable, row in self.pg_lookup:
            if speed == speed_mbps and cable == cable_m:
                return row
        return None


_SPEEDS = re.compile(r"^(\d+)x(\d+)G(?:\[([0-9G,]*)\])?$")


@cache
def breakout_speeds(mode: str) -> tuple[int, int, frozenset[int]]:
    """``2x400G[200G,100G]`` -> (2 ports, 400 Gb/s default, {400, 200, 100} Gb/s allowed)."""
    match = _SPEEDS.match(mode)
    if not match:
        raise ValueError(f"not a breakout mode: {mode!r}")
    count, default, alternatives = int(match.group(1)), int(match.group(2)), match.group(3) or ""
    speeds = {default} | {int(s[:-1]) for s in alternatives.split(",") if s}
    return count, default, frozenset(speeds)


@cache
def _port_index(sku: Sku) -> dict[str, SkuPort]:
    return {p.name: p for p in sku.ports}


@cache
def _spellings(sku: Sku) -> dict[str, str]:
    table = {p.alias.lower(): p.name for p in sku.ports}
    table.update({p.name.lower(): p.name for p in sku.ports})
    return table


@cache
def fabric_ports(sku: Sku, speed: int) -> tuple[SkuPort, ...]:
    """The SKU's ports that can run at ``speed`` Gb/s, in port order: what fabgen cables."""
    return tuple(p for p in sku.ports if speed in breakout_speeds(p.breakout)[2])


def lanes_per_port(sku: Sku, speed: int) -> int | None:
    """SerDes lanes of the SKU's ports at ``speed``; None when no port runs at it or widths differ."""
    widths = {len(p.lanes) for p in fabric_ports(sku, speed)}
    return widths.pop() if len(widths) == 1 else None


# ----------------------------------------------------------------------------- SN5600

_SN5600_PLATFORM = "x86_64-nvidia_sn5600-r0"
_CAGES = 64
_CAGE_LANES = 8
_ONE_800G = "1x800G[400G,200G,100G,50G,40G,25G,10G]"
_TWO_400G = "2x400G[200G,100G,50G,40G,25G,10G]"
_SFP = SkuPort("Ethernet512", (512,), "etp65", 65, 25_000, "1x25G[10G]")
"""The SN5600's 65th port: one SFP28 lane, not for the fabric."""


def _sn5600_ports(per_cage: int, breakout: str, autoneg: str | None) -> tuple[SkuPort, ...]:
    width = _CAGE_LANES // per_cage
    speed = breakout_speeds(breakout)[1] * 1000
    ports = []
    for cage in range(_CAGES):
        for sub in range(per_cage):
            first = cage * _CAGE_LANES + sub * width
            alias = f"etp{cage + 1}" + ("ab"[sub] if per_cage == 2 else "")
            ports.append(SkuPort(f"Ethernet{first}", tuple(range(first, first + width)), alias, cage + 1, speed,
                                 breakout, autoneg))
    return (*ports, _SFP)


def _lookup(rows: str) -> tuple[tuple[int, int, Headroom], ...]:
    """``speed cable size xon xoff threshold`` lines, as pg_profile_lookup.ini writes them."""
    table = []
    for line in rows.strip().splitlines():
        speed, cable, size, xon, xoff, threshold = line.split()
        table.append((int(speed), int(cable.rstrip("m")), Headroom(int(size), int(xon), int(xoff), int(threshold))))
    return tuple(table)


_SN5600_LOOKUP = _lookup("""
 10000    5m 64512   19456  45056   0
 25000    5m 67584   19456  48128   0
 40000    5m 75776   19456  57344   0
 50000    5m 82944   19456  63488   0
100000    5m 133120  19456  113664  0
200000    5m 150528  19456  131072  0
400000    5m 250880  19456  231424  0
800000    5m 304128  38912  257024  0
 10000   40m 65536   19456  46080   0
 25000   40m 71680   19456  52224   0
 40000   40m 81920   19456  62464   0
 50000   40m 89088   19456  69632   0
100000   40m 146432  19456  126976  0
200000   40m 177152  19456  157696  0
400000   40m 303104  19456  283648  0
800000   40m 410624  38912  362496  0
 10000  300m 75776   19456  56320   0
 25000  300m 96256   19456  76800   0
 40000  300m 120832  19456  101376  0
 50000  300m 138240  19456  118784  0
100000  300m 244736  19456  225280  0
200000  300m 374784  19456  355328  0
400000  300m 697344  19456  677888  0
800000  300m 1198080 38912  1150976 0
""")
_SN5600_T0 = Pools(ingress_lossless=67_737_959, ingress_lossy=67_737_959, egress_lossless=158_229_504,
                   egress_lossy=67_737_959)
_SN5600_T1 = Pools(ingress_lossless=52_161_690, ingress_lossy=52_161_690, egress_lossless=158_229_504,
                   egress_lossy=52_161_690)


def _sn5600(name: str, ports: tuple[SkuPort, ...]) -> Sku:
    return Sku(name, _SN5600_PLATFORM, "spectrum4", ports, _SN5600_T0, _SN5600_T1, _SN5600_LOOKUP, True)


SKUS: dict[str, Sku] = {
    sku.name: sku for sku in (
        _sn5600("ACS-SN5600", _sn5600_ports(1, _ONE_800G, None)),
        _sn5600("Mellanox-SN5600-O128", _sn5600_ports(2, _TWO_400G, "off")),
    )
}
"""hwsku -> SKU. Only SKUs whose files fabgen has checked; others are refused, not guessed."""

MODEL_DEFAULT_SKU: dict[str, str] = {"sn5600": "ACS-SN5600"}
"""Switch model (lower case) -> the SKU SONiC installs on it by default."""


def resolve_hwsku(model: str, hwsku: str | None) -> str:
    """The hwsku a SONiC tier runs: the spec's ``hwsku``, else the model's default SKU, else the model itself."""
    if hwsku:
        return hwsku
    return MODEL_DEFAULT_SKU.get(model.lower(), model)


def sku_hint(name: str) -> str:
    """``; did you mean 'Mellanox-SN5600-O128'?`` over the SKUs fabgen knows, else the list of them."""
    close = difflib.get_close_matches(name, list(SKUS), n=1, cutoff=0.5)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f"; fabgen knows {', '.join(sorted(SKUS))}"


def lookup_cable(sku: Sku, speed_mbps: int, cable_m: int) -> int | None:
    """The shortest cable length of the SKU's lookup table at ``speed`` that covers ``cable_m``.

    The traditional buffer model matches ``CABLE_LENGTH`` against the table's
    rows exactly; a length between rows has no profile and buffermgrd refuses
    the port, so fabgen writes the next longer row (more headroom, never less).
    """
    lengths = sorted(cable for speed, cable, _ in sku.pg_lookup if speed == speed_mbps)
    return next((length for length in lengths if length >= cable_m), None)
