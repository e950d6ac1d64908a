"""Buffers of a SONiC switch as SONiC itself computes them, in the buffer model the spec selects.

Why: a lossless priority group must hold everything that still arrives after
the switch sends PAUSE; too little headroom drops RoCE packets despite PFC,
and numbers that differ from SONiC's own are overwritten or refused by
buffermgrd. So fabgen does not invent headroom:

* **dynamic** model (NVIDIA's images): fabgen writes what buffermgrd reads
  (per-port ``CABLE_LENGTH``, ``LOSSLESS_TRAFFIC_PATTERN``,
  ``DEFAULT_LOSSLESS_BUFFER_PARAMETER``, lossless PGs with profile ``NULL``) and
  buffermgrd runs ``buffer_headroom_mellanox.lua``. :func:`lossless_headroom`
  is that script, operation for operation in IEEE doubles as Redis's Lua
  computes, so fabgen knows (and a test proves, against the real script in a
  real redis-server) what each port will get;
* **traditional** model: buffermgrd looks the port's speed and cable up in the
  SKU's ``pg_profile_lookup.ini`` and reuses a profile of its own name; fabgen
  writes exactly that row (:meth:`fabgen.targets.sonic.sku.Sku.headroom`).

Pools and the lossy profiles are the SKU's ``buffers_defaults_t0/t1.j2`` and
Mellanox's ``buffers_defaults_objects.j2``; t0 (ToR router) for leaves, t1
(leaf router) for spines and super-spines, as ``buffers_config.j2`` picks by
``DEVICE_METADATA.type``.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import Literal

from fabgen.plan.model import FabricPlan, Switch
from fabgen.spec.buffers import ASIC_PRESETS, SonicBuffers, asic_key
from fabgen.targets.sonic.sku import SKUS, Pools, Sku, lookup_cable

__all__ = [
    "PAUSE_QUANTA",
    "Headroom",
    "LosslessProfile",
    "SwitchBuffers",
    "asic_generation",
    "lossless_headroom",
    "profile_name",
    "resolve_constants",
    "switch_buffers",
]

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
SPEED_OF_LIGHT_IN_CABLE = 198_000_000.0
"""Metres per second, as SONiC assumes for copper and fibre alike."""
MINIMAL_PACKET = 64.0
HEADROOM_COMPENSATION = 2 * 1024.0
"""Added to xoff without a shared headroom pool when the worst case (all small packets) needs it."""
SPECTRUM6_COMPENSATION = 18 * 1024.0

BufferModel = Literal["dynamic", "traditional"]


@dataclass(frozen=True, slots=True)
class Headroom:
    """Bytes of one lossless PG profile: PAUSE at ``xoff``, resume at ``xon``, reserve ``size``."""

    xoff: int
    xon: int
    size: int


@dataclass(frozen=True, slots=True)
class LosslessProfile:
    """A lossless PG profile fabgen writes (traditional model): one per speed and cable length."""

    name: str
    speed: int
    """Gb/s."""
    cable_m: int
    headroom: Headroom
    dynamic_th: int


@dataclass(frozen=True, slots=True)
class SwitchBuffers:
    """Everything the SONiC renderer prints about buffers for one switch."""

    model: BufferModel
    sku: Sku
    topology: Literal["t0", "t1"]
    constants: SonicBuffers
    pools: Pools
    """After the spec's overrides."""
    profiles: tuple[LosslessProfile, ...]
    """Traditional model only; sorted by name."""
    port_profile: tuple[tuple[str, str], ...]
    """(port, lossless profile name): traditional model only, in port order."""
    cable: tuple[tuple[str, int], ...]
    """(port, metres CABLE_LENGTH says): the port's cable, or (traditional) the lookup row covering it."""
    headroom: tuple[tuple[str, Headroom], ...]
    """(port, what buffermgrd computes for it in the dynamic model), in port order."""


def asic_generation(asic: str | None) -> int:
    """Spectrum generation of an ASIC name (``spectrum4`` -> 4; plain ``spectrum`` -> 1; unknown -> 4).

    The Lua keys per-generation terms on the last character of ``ASIC_TABLE|MELLANOX-SPECTRUM-N``.
    """
    key = asic_key(asic)
    if key == "spectrum":
        return 1
    if key.startswith("spectrum") and key[8:].isdigit():
        return int(key[8:])
    return 4


def _ceil_kb(value: float) -> float:
    return float(ceil(value / 1024) * 1024)


def lossless_headroom(speed: int, cable_m: int, port_mtu: int, lanes: int, constants: SonicBuffers,
                      generation: int = 4, shared_headroom: bool = False) -> Headroom:
    """Headroom of a lossless PG on a ``speed`` Gb/s port: ``buffer_headroom_mellanox.lua`` step by step.

    Floats on purpose, in the script's order of operations: Redis's Lua numbers
    are IEEE doubles, and exact arithmetic could round differently at a KB edge.
    """
    port_speed = float(speed * 1000)
    cable = float(cable_m)
    mtu = float(port_mtu)
    gearbox_delay = float(constants.gearbox_delay_ns)
    quanta = PAUSE_QUANTA.get(speed * 1000)
    cell_size = float(constants.cell_size)
    pipeline_latency = float(constants.pipeline_latency_kb) * 1024
    mac_phy_delay = float(constants.mac_phy_delay_kb) * 1024
    peer_response_time = float(constants.peer_response_time_kb) * 1024
    kb_on_tile = port_speed / 1000 * 120 / 8 if generation in (4, 5) else 0.0
    lossless_mtu = float(constants.lossless_mtu)
    small = float(constants.small_packet_percentage)

    if lanes == 8:
        pipeline_latency = pipeline_latency * 2
        speed_overhead = mtu
    else:
        speed_overhead = 0.0
    if cell_size > 2 * MINIMAL_PACKET:
        worst_case_factor = cell_size / MINIMAL_PACKET
    else:
        worst_case_factor = (2 * cell_size) / (1 + cell_size)
    worst_case_factor = float(ceil(worst_case_factor))
    small_by_byte = 100 * MINIMAL_PACKET / ((small * MINIMAL_PACKET + (100 - small) * lossless_mtu) / 100)
    cell_occupancy = (100 - small_by_byte + small_by_byte * worst_case_factor) / 100
    bytes_on_gearbox = 0.0 if gearbox_delay == 0 else port_speed * gearbox_delay / (8 * 1024)
    if quanta is not None:
        peer_response_time = float(quanta) * 512 / 8
    bytes_on_cable = 2 * cable * port_speed * 1000000000 / SPEED_OF_LIGHT_IN_CABLE / (8 * 1000)
    propagation = mtu + bytes_on_cable + 2 * bytes_on_gearbox + mac_phy_delay + peer_response_time + kb_on_tile

    xoff = _ceil_kb(lossless_mtu + propagation * cell_occupancy)
    if generation == 6:
        xoff = xoff + SPECTRUM6_COMPENSATION
    if not shared_headroom and small != 100:
        full_small = _ceil_kb(lossless_mtu + propagation * worst_case_factor)
        if xoff + HEADROOM_COMPENSATION < full_small:
            xoff = xoff + HEADROOM_COMPENSATION
    xon = _ceil_kb(pipeline_latency)
    size = _ceil_kb(xon if shared_headroom else xoff + xon + speed_overhead)
    return Headroom(xoff=ceil(xoff), xon=ceil(xon), size=ceil(size))


def resolve_constants(asic: str | None, overrides: SonicBuffers | None) -> SonicBuffers:
    """The ASIC's preset (default: Spectrum-4) with the fields the spec wrote on top."""
    base = ASIC_PRESETS.get(asic_key(asic), SonicBuffers())
    if overrides is None:
        return base
    return base.model_copy(update={name: getattr(overrides, name) for name in overrides.model_fields_set})


def profile_name(speed: int, cable_m: int) -> str:
    """The name traditional buffermgrd gives (and reuses): ``pg_lossless_400000_40m_profile``."""
    return f"pg_lossless_{speed * 1000}_{cable_m}m_profile"


def _pools(sku: Sku, topology: str, c: SonicBuffers) -> Pools:
    base = sku.pools_t0 if topology == "t0" else sku.pools_t1
    return Pools(
        ingress_lossless=c.ingress_lossless_pool or base.ingress_lossless,
        ingress_lossy=c.ingress_lossy_pool or base.ingress_lossy,
        egress_lossless=c.egress_lossless_pool or base.egress_lossless,
        egress_lossy=c.egress_lossy_pool or base.egress_lossy,
    )


def switch_buffers(plan: FabricPlan, switch: Switch) -> SwitchBuffers:
    """Pools, lossless profiles and per-port cable and headroom of one SONiC switch of a known SKU."""
    sku = SKUS[switch.hwsku or ""]
    tier = getattr(plan.spec.fabric.tiers, switch.tier)
    constants = resolve_constants(switch.asic or sku.asic, tier.buffers if tier is not None else None)
    generation = asic_generation(switch.asic or sku.asic)
    topology: Literal["t0", "t1"] = "t0" if switch.tier == "leaf" else "t1"
    shared = constants.shared_headroom_pool > 0
    mtu = switch.qos.mtu
    cable: list[tuple[str, int]] = []
    headroom: list[tuple[str, Headroom]] = []
    port_profile: list[tuple[str, str]] = []
    profiles: dict[str, LosslessProfile] = {}
    for port in switch.ports:
        lanes = len(port.lanes)
        headroom.append((port.name, lossless_headroom(port.speed, port.cable_m, mtu, lanes, constants,
                                                      generation, shared)))
        if constants.model == "dynamic":
            cable.append((port.name, port.cable_m))
            continue
        length = lookup_cable(sku, port.speed * 1000, port.cable_m)
        row = sku.headroom(port.speed * 1000, length) if length is not None else None
        if length is None or row is None:  # refused by the target's limits; CABLE_LENGTH as given
            cable.append((port.name, port.cable_m))
            continue
        cable.append((port.name, length))
        name = profile_name(port.speed, length)
        profiles[name] = LosslessProfile(name, port.speed, length, Headroom(xoff=row.xoff, xon=row.xon,
                                                                              size=row.size),
                                         constants.lossless_dynamic_th)
        port_profile.append((port.name, name))
    return SwitchBuffers(
        model=constants.model, sku=sku, topology=topology, constants=constants,
        pools=_pools(sku, topology, constants),
        profiles=tuple(sorted(profiles.values(), key=lambda p: p.name)),
        port_profile=tuple(port_profile), cable=tuple(cable), headroom=tuple(headroom),
    )
