"""The structured config an EOS switch's templates print: one frozen value per section, every value final.

Its own module so that :mod:`fabgen.targets.eos.fill` (which renders a config
shape once and fills it per switch) and :mod:`fabgen.targets.eos.config`
(which derives the values from the plan and calls it) share the types without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabgen.targets.eos.headroom import MmuProfile


@dataclass(frozen=True, slots=True)
class DscpMap:
    dscps: tuple[int, ...]
    traffic_class: int


@dataclass(frozen=True, slots=True)
class TxQueueMap:
    traffic_class: int
    tx_queue: int


@dataclass(frozen=True, slots=True)
class Ecn:
    minimum: int
    maximum: int
    units: str
    probability: int
    weight: int


@dataclass(frozen=True, slots=True)
class TxQueue:
    id: int
    comment: str
    strict: bool
    bandwidth_percent: int | None
    ecn: Ecn | None


@dataclass(frozen=True, slots=True)
class Watchdog:
    enabled: bool
    timeout: str
    recovery_time: str
    polling_interval: str
    action: str | None
    """None only when the watchdog is off and the plan's action has no EOS spelling."""


@dataclass(frozen=True, slots=True)
class QosProfile:
    name: str
    trust: str
    pfc_enabled: bool
    no_drop_priorities: tuple[int, ...]
    watchdog: Watchdog
    tx_queues: tuple[TxQueue, ...]


ROCE_UDP_PORT = 4791
BTH_DEST_QP_BYTES = "5-7"
"""Destination QP inside the InfiniBand Base Transport Header (UDP payload offsets), as a sand profile's
``payload bytes`` takes them."""


@dataclass(frozen=True, slots=True)
class SandProfile:
    name: str
    udp_dst_port: int
    payload_bytes: str


@dataclass(frozen=True, slots=True)
class LoadBalance:
    notes: tuple[str, ...]
    sand_profile: SandProfile | None
    dynamic: bool = False
    """DLB: ``ip hardware fib load-balance distribution dynamic``."""


@dataclass(frozen=True, slots=True)
class EthernetInterface:
    name: str
    description: str
    mtu: int
    speed: str
    address: str
    service_profile: str
    shutdown: bool = False


@dataclass(frozen=True, slots=True)
class IpInterface:
    name: str
    address: str


@dataclass(frozen=True, slots=True)
class BfdTimers:
    interval: int
    """Milliseconds; also the minimum receive interval."""
    multiplier: int


@dataclass(frozen=True, slots=True)
class BgpNeighborConfig:
    address: str
    remote_as: int
    description: str
    bfd: BfdTimers | None


@dataclass(frozen=True, slots=True)
class RouterBgp:
    asn: int
    router_id: str
    timers: tuple[int, int] | None
    """(keepalive, hold) in seconds; None keeps EOS's 60/180."""
    maximum_paths: int
    multipath_relax: bool
    neighbors: tuple[BgpNeighborConfig, ...]
    networks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EosConfig:
    """One switch's configuration, every value final."""

    title: str
    notes: tuple[str, ...]
    hostname: str
    dscp_maps: tuple[DscpMap, ...]
    tx_queue_maps: tuple[TxQueueMap, ...]
    qos_profiles: tuple[QosProfile, ...]
    watchdog_defaults: Watchdog
    load_balance: LoadBalance
    ethernet_interfaces: tuple[EthernetInterface, ...]
    loopback: IpInterface
    management: IpInterface | None
    router_bgp: RouterBgp | None = None
    mmu: MmuProfile | None = None
    """PFC headroom where EOS has a Trident MMU queue profile (:mod:`fabgen.targets.eos.headroom`)."""
    mmu_note: str = ""
    """What the config says about headroom: its size and the cable that set it, or why EOS keeps its own."""
