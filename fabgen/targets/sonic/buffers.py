"""Lossless PG headroom (xoff, xon, size) of SONiC switches, from speed, cable and MTU.

Why here: a lossless priority group must hold everything that still arrives
after the switch sends PAUSE (the cable round trip, the peer's reaction time,
the frame on the wire); too little headroom drops RoCE packets despite PFC.
The plan has the speed, cable length and MTU; this module turns them into the
three numbers of SONiC's ``pg_lossless_<speed>_<cable>_profile``.

The formula is SONiC's own for Spectrum, ``sonic-swss``
``cfgmgr/buffer_headroom_mellanox.lua`` (switch.md §5.3), followed step by step
and in exact rational arithmetic, so a profile fabgen writes is the profile
buffermgrd would compute in SONiC's dynamic buffer model. The ASIC constants
come from :mod:`fabgen.spec.buffers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil

from fabgen.plan.model import FabricPlan, Switch
from fabgen.spec.buffers import ASIC_PRESETS, SonicBuffers, asic_key

#: IEEE 802.3 31B.3.7 pause quanta a peer may still send at each speed (Mb/s),
#: as in ``buffer_headroom_mellanox.lua``. One quantum is 512 bit times.
PAUSE_QUANTA: dict[int, int] = {
    800_000: 905,
    400_000: 905,
    200_000: 453,
    100_000: 394,
    50_000: 147,
    40_000: 118,
    25_000: 80,
    10_000: 67,
    1_000: 2,
    100: 1,
}
SPEED_OF_LIGHT_IN_CABLE = 198_000_000
"""Metres per second, as SONiC assumes for copper and fibre alike."""
MINIMAL_PACKET = 64


@dataclass(frozen=True, slots=True)
class Headroom:
    """Bytes of one lossless PG profile: PAUSE at ``xoff``, resume at ``xon``, reserve ``size``."""

    xoff: int
    xon: int
    size: int


@dataclass(frozen=True, slots=True)
class LosslessProfile:
    """A lossless PG profile shared by every port of one speed and lane count."""

    name: str
    speed: int
    """Gb/s."""
    lanes: int
    cable_m: int
    headroom: Headroom


@dataclass(frozen=True, slots=True)
class SwitchBuffers:
    """Everything a SONiC renderer prints about buffers for one switch."""

    constants: SonicBuffers
    profiles: tuple[LosslessProfile, ...]
    """Sorted by name."""
    port_profile: tuple[tuple[str, str], ...]
    """(port name, lossless profile name), in port order."""


def _ceil_kb(value: Fraction) -> int:
    return ceil(value / 1024) * 1024


def _kb(value: float) -> Fraction:
    """Exact bytes of a decimal KB figure (``0.8`` -> 819.2, not 819.2000000000000455)."""
    return Fraction(str(value)) * 1024


def lossless_headroom(speed: int, cable_m: int, port_mtu: int, lanes: int, constants: SonicBuffers) -> Headroom:
    """Headroom of a lossless PG on a ``speed`` Gb/s port, as buffer_headroom_mellanox.lua computes it."""
    speed_mbps = speed * 1000
    pipeline = _kb(constants.pipeline_latency_kb)
    speed_overhead = 0
    if lanes == 8:
        # 8-lane ports carry a second pipeline stage and one more frame in flight.
        pipeline = pipeline * 2 - 1024
        speed_overhead = port_mtu
    cell = constants.cell_size
    worst_case = Fraction(cell, MINIMAL_PACKET) if cell > 2 * MINIMAL_PACKET else Fraction(2 * cell, 1 + cell)
    small = constants.small_packet_percentage
    cell_occupancy = (100 - small + small * worst_case) / 100
    gearbox = Fraction(speed_mbps * constants.gearbox_delay_ns, 8 * 1024)
    quanta = PAUSE_QUANTA.get(speed_mbps)
    peer_response = Fraction(quanta * 512, 8) if quanta is not None else _kb(constants.peer_response_time_kb)
    on_cable = Fraction(2 * cable_m * speed_mbps * 1_000_000_000, SPEED_OF_LIGHT_IN_CABLE * 8 * 1024)
    propagation = port_mtu + on_cable + 2 * gearbox + _kb(constants.mac_phy_delay_kb) + peer_response
    xoff = _ceil_kb(constants.lossless_mtu + propagation * cell_occupancy)
    xon = _ceil_kb(pipeline)
    if constants.shared_headroom_pool:
        size = _ceil_kb(Fraction(xon))  # xoff comes from the shared pool
    else:
        size = _ceil_kb(Fraction(xoff + xon + speed_overhead))
    return Headroom(xoff=xoff, xon=xon, size=size)


def resolve_constants(asic: str | None, overrides: SonicBuffers | None) -> SonicBuffers:
    """The ASIC's preset (default: Spectrum-4) with the fields the spec wrote on top."""
    base = ASIC_PRESETS.get(asic_key(asic), SonicBuffers())
    if overrides is None:
        return base
    return base.model_copy(update={name: getattr(overrides, name) for name in overrides.model_fields_set})


def profile_name(speed: int, cable_m: int, lanes: int | None = None) -> str:
    """SONiC's own name, so buildimage tools and buffermgrd recognise (and reuse) the profile."""
    suffix = f"_{lanes}lane" if lanes is not None else ""
    return f"pg_lossless_{speed * 1000}_{cable_m}m{suffix}_profile"


def switch_buffers(plan: FabricPlan, switch: Switch) -> SwitchBuffers:
    """Buffer constants and the lossless profile of every port of ``switch``."""
    tier = getattr(plan.spec.fabric.tiers, switch.tier)
    constants = resolve_constants(switch.asic, tier.buffers if tier is not None else None)
    qos = switch.qos
    cable = qos.cable_length_m
    kinds = sorted({(p.speed, len(p.lanes)) for p in switch.ports})
    lane_counts: dict[int, set[int]] = {}
    for speed, lanes in kinds:
        lane_counts.setdefault(speed, set()).add(lanes)
    names: dict[tuple[int, int], str] = {}
    profiles = []
    for speed, lanes in kinds:
        name = profile_name(speed, cable, lanes if len(lane_counts[speed]) > 1 else None)
        names[(speed, lanes)] = name
        profiles.append(LosslessProfile(name, speed, lanes, cable,
                                        lossless_headroom(speed, cable, qos.mtu, lanes, constants)))
    return SwitchBuffers(
        constants=constants,
        profiles=tuple(sorted(profiles, key=lambda p: p.name)),
        port_profile=tuple((p.name, names[(p.speed, len(p.lanes))]) for p in switch.ports),
    )
