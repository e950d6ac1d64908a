"""PFC headroom on EOS: a Trident MMU queue profile where EOS has one, a stated default elsewhere.

Why per platform family:

* Broadcom StrataXGS switches (Trident and Tomahawk: 7050X, 7060X, 7388X)
  have a small on-chip buffer, and EOS lets a ``platform trident mmu queue
  profile`` reserve ingress headroom (Arista TOI "MMU queue profile": port and
  priority-group level; AVD 6.4.0 models it as ``platform.trident.mmu.
  queue_profiles[].ingress.headroom``, and ``active_profile`` renders the
  global ``platform trident mmu queue profile NAME apply``). The profile is
  chip-wide (one ``apply``), so it is sized for the switch's longest lossless
  cable, from the same per-port lengths SONiC's ``CABLE_LENGTH`` uses
  (``SwitchPort.cable_m``: the cable's own length, else its role's).
* Jericho ("sand": 7280R3, 7500R3, 7800R3, 7700R4) buffers in deep off-chip
  memory behind virtual output queues; EOS has no headroom command for it and
  AVD's ``platform.sand`` models none, so headroom is left to EOS's defaults
  and the config says so.
* A model the table does not place in either family gets the same comment: a
  ``platform trident`` line on an unknown chip would be a guess.

The size, in bytes, follows the worst case of IEEE 802.1Qbb as Cisco's
"Congestion Management in Ethernet Storage Networks" (ch. 7) itemises it, in
bit times (BT) at the port's speed:

* a maximum frame the receiver has started before its PAUSE can leave, and one
  the sender has started when the PAUSE arrives: 2 x (MTU + 38) x 8
  (38: Ethernet header 14, FCS 4, preamble and SFD 8, inter-frame gap 12);
* the PAUSE frame itself: 672;
* interface latency both ways: 2 x ``INTERFACE_BT`` (IEEE 802.3's bound);
* the cable both ways: 2 x metres x 5 ns/m x speed;
* the sender's response time: ``RESPONSE_BT`` (IEEE 802.3 Annex 31D).

Speeds between the listed ones take the next listed speed's bound (more bit
times, so more headroom); above the table, the top entry's time in ns is kept
and scaled by the speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from math import ceil

from fabgen.plan import Switch
from fabgen.platforms import features, platform

PROFILE = "FABGEN-HEADROOM"
FRAME_OVERHEAD = 38
"""Bytes on the wire beyond the IP MTU: header 14, FCS 4, preamble+SFD 8, inter-frame gap 12."""
PAUSE_BT = 672
NS_PER_METRE = 5
INTERFACE_BT: dict[int, int] = {10: 8192, 25: 6144, 40: 24576, 100: 122880}
"""Gb/s -> upper bound of PHY+MAC latency, one direction, in bit times (IEEE 802.3, via Cisco ch. 7)."""
RESPONSE_BT: dict[int, int] = {10: 30720, 25: 40960, 40: 60416, 100: 201728, 400: 463360}
"""Gb/s -> upper bound of a sender's PAUSE response, in bit times (IEEE 802.3 Annex 31D)."""


@dataclass(frozen=True, slots=True)
class MmuProfile:
    """``platform trident mmu queue profile NAME`` with its ingress headroom, applied chip-wide."""

    name: str
    headroom_bytes: int
    port: str
    """The port whose cable sized it (the longest, first by name on a tie)."""
    cable_m: int


def _bound(table: dict[int, int], speed: int) -> int:
    """The table's bit times at ``speed``: the next listed speed up, or the top entry scaled past it."""
    for listed in sorted(table):
        if speed <= listed:
            return table[listed]
    top = max(table)
    return ceil(table[top] * speed / top)


@lru_cache(maxsize=4096)
def headroom_bytes(speed: int, cable_m: int, mtu: int) -> int:
    """Bytes a lossless ingress port needs after it sends PAUSE, at ``speed`` Gb/s over ``cable_m`` metres.

    Memoised: a fabric has a few speeds and cable lengths, and every port of every switch asks.
    """
    bits = (2 * (mtu + FRAME_OVERHEAD) * 8 + PAUSE_BT + 2 * _bound(INTERFACE_BT, speed)
            + 2 * cable_m * NS_PER_METRE * speed + _bound(RESPONSE_BT, speed))
    return ceil(bits / 8)


def has_trident_mmu(switch: Switch) -> bool:
    """A Broadcom StrataXGS chip (Trident, Tomahawk): the spec's ``asic:`` first, else the model table."""
    family = switch.asic or (row.asic if (row := platform(switch.model)) else "")
    return family.lower().startswith(("trident", "tomahawk"))


def mmu_profile(switch: Switch, mtu: int) -> tuple[MmuProfile | None, str]:
    """The profile (None where headroom is left to EOS) and the comment the config carries about it."""
    if not switch.qos.lossless_priorities or not switch.ports:
        return None, "PFC headroom: no lossless priority on this switch, so EOS keeps its default buffers"
    if not has_trident_mmu(switch):
        why = ("a Jericho (sand) platform buffers in deep off-chip memory behind virtual output queues and EOS "
               "has no headroom command for it" if features(switch.model, switch.asic)[0] else
               f"{switch.model} is not a known Trident or Tomahawk platform, the only ones with an EOS MMU "
               "queue profile")
        return None, f"PFC headroom left to EOS defaults: {why}"
    size, cable, port = min((-headroom_bytes(p.speed, p.cable_m, mtu), -p.cable_m, p.name) for p in switch.ports)
    size, cable = -size, -cable
    note = (f"PFC headroom: {size} bytes per port, sized for the longest cable ({cable} m, {port}) at MTU {mtu}, "
            "one MMU queue profile applies to every port")
    return MmuProfile(PROFILE, size, port, cable), note
