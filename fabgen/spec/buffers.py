"""Per-ASIC buffer constants a SONiC switch needs to size its lossless headroom.

Why a model of its own: the PFC headroom of a lossless priority group (how much
a port must still absorb after it sends PAUSE) depends on the ASIC's cell size
and pipeline latency, not only on speed and cable length. SONiC keeps these in
``STATE_DB`` ``ASIC_TABLE`` (``platform/mellanox/asic_table.j2``) and the pool
sizes in each SKU's ``buffers_defaults_t*.j2``; fabgen writes the resulting
``BUFFER_PROFILE`` itself, so it needs the same numbers.

Every headroom field has a default (NVIDIA Spectrum-4); pool sizes default to
the SKU's (:mod:`fabgen.targets.sonic.sku`). ``Tier.asic`` (else the SKU's
platform) picks a preset from :data:`ASIC_PRESETS`; ``Tier.buffers`` overrides
single fields on top of it (only the fields written in the spec). The formula
that uses them is in :mod:`fabgen.targets.sonic.buffers`. On a SKU fabgen
knows, the ASIC constants are the platform's (buffermgrd reads its ASIC_TABLE),
so the spec may not set them; what it may set is what CONFIG_DB carries: the
buffer model, the lossless traffic pattern, the shared headroom pool, the
default lossless ``dynamic_th`` and pool sizes.
"""

from typing import Annotated, Literal

from pydantic import Field

from fabgen.spec.common import SpecModel
from fabgen.units import Size

Kilobytes = Annotated[float, Field(ge=0, le=1024)]
"""Kilobytes (1024 bytes) as a decimal, the unit of SONiC's ASIC_TABLE (``0.8`` KB)."""
DynamicTh = Annotated[int, Field(ge=-8, le=7)]
"""SONiC ``dynamic_th``: the shared-buffer share is 2**dynamic_th of what is free."""


class SonicBuffers(SpecModel):
    """A SONiC tier's buffers: the buffer model, the ASIC's headroom constants, and pool sizes over the SKU's."""

    cell_size: Annotated[int, Field(ge=16, le=1024)] = 192
    """Bytes per buffer cell (Spectrum 96, Spectrum-2/3 144, Spectrum-4/5 192, Spectrum-6 256)."""
    pipeline_latency_kb: Kilobytes = 19
    """ASIC pipeline latency in KB: becomes the xon threshold (doubled on 8-lane ports)."""
    mac_phy_delay_kb: Kilobytes = 0.8
    """MAC/PHY delay in KB, part of the bytes in flight after PAUSE."""
    peer_response_time_kb: Kilobytes = 3.8
    """Peer response in KB, used only for speeds with no IEEE pause-quanta figure."""
    gearbox_delay_ns: Annotated[int, Field(ge=0, le=100_000)] = 0
    """External gearbox (PHY) delay; 0 when the ports have none."""
    lossless_mtu: Annotated[int, Field(ge=64, le=9216)] = 1024
    """Typical lossless packet size (``LOSSLESS_TRAFFIC_PATTERN.mtu``): RoCE at MTU 1024."""
    small_packet_percentage: Annotated[int, Field(ge=0, le=100)] = 50
    """Share of small packets assumed (``LOSSLESS_TRAFFIC_PATTERN``): worst-case cell use."""
    model: Literal["dynamic", "traditional"] = "dynamic"
    """SONiC's buffer model. ``dynamic`` (what NVIDIA's images build): buffermgrd computes each lossless
    PG's headroom from the port's speed, cable and MTU. ``traditional``: fabgen writes the profile of the
    SKU's ``pg_profile_lookup.ini`` row for the port's speed and (next longer) cable length."""
    ingress_lossless_pool: Size | None = None
    """Bytes of the ingress pool of lossless PGs. Default: the SKU's ``buffers_defaults_t0.j2`` on leaves,
    ``_t1.j2`` on spines and super-spines (written only in the traditional model; dynamic computes it)."""
    ingress_lossy_pool: Size | None = None
    """Bytes of the ingress pool of lossy PGs (the SKU's, as above)."""
    egress_lossless_pool: Size | None = None
    """Bytes of the egress pool of lossless queues (the SKU's; written in both models)."""
    egress_lossy_pool: Size | None = None
    """Bytes of the egress pool of lossy queues (the SKU's, as above)."""
    shared_headroom_pool: Size = 0
    """Bytes of shared headroom (ingress pool ``xoff``, dynamic model); 0 reserves full xoff per PG instead."""
    lossless_dynamic_th: DynamicTh = 0
    """``dynamic_th`` of lossless PGs (``DEFAULT_LOSSLESS_BUFFER_PARAMETER.default_dynamic_th``)."""


def _preset(**values: object) -> SonicBuffers:
    return SonicBuffers.model_validate(values)


#: ``Tier.asic`` (lower case, ``-`` and ``_`` ignored) -> constants: SONiC's ``asic_table.j2``.
ASIC_PRESETS: dict[str, SonicBuffers] = {
    "spectrum": _preset(cell_size=96),
    "spectrum1": _preset(cell_size=96),
    "spectrum2": _preset(cell_size=144),
    "spectrum3": _preset(cell_size=144),
    "spectrum4": _preset(cell_size=192),
    "spectrum5": _preset(cell_size=192),
    "spectrum6": _preset(cell_size=256, pipeline_latency_kb=42),
}


def asic_key(asic: str | None) -> str:
    """``Spectrum-4`` and ``spectrum_4`` both name the ``spectrum4`` preset."""
    return (asic or "").lower().replace("-", "").replace("_", "")
