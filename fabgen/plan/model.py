"""The plan: every device, port, link and per-device intent, as plain frozen data.

Templates read these objects and print them; they never compute. Dataclasses
with slots (not pydantic models) because a 24k-GPU fabric has ~74k links and
~150k switch ports, built in a hot loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from fabgen.plan.layout import Layout

if TYPE_CHECKING:
    from fabgen.plan.nic_intent import FirmwareIntent, HostNicIntent
    from fabgen.source import SourceDoc
    from fabgen.spec import ClusterSpec

Role = Literal["host-leaf", "leaf-spine", "spine-superspine"]
TierName = Literal["leaf", "spine", "super_spine"]


@dataclass(frozen=True, slots=True)
class Link:
    """One cable. ``a`` is the lower end (host or lower switch), ``b`` the upper."""

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    role: Role
    rail: int | None
    speed: int
    a_address: str
    """``a``'s interface address with prefix length (``10.0.0.1/31``)."""
    b_address: str
    explicit: bool = False
    """Taken from the spec's ``fabric.cabling`` rather than the automatic layout."""
    length_m: int | None = None
    """The cable's own length (``fabric.cabling[].length``); None: its role's ``qos.cable_length``."""


@dataclass(frozen=True, slots=True)
class SwitchPort:
    name: str
    index: int
    """1-based front-panel port; 0 when the name does not follow the OS's scheme."""
    lanes: tuple[int, ...]
    speed: int
    direction: Literal["down", "up"]
    peer_device: str
    peer_port: str
    peer_kind: Literal["host", "switch"]
    address: str
    peer_address: str
    rail: int | None
    description: str
    """``peer:port``: what an operator reads on the switch."""
    shutdown: bool = False
    """Administratively down: the leaf port of a host NIC that is out of service (its subnet is not announced)."""
    cable_m: int = 0
    """Metres of this port's cable: its own length, else its role's in the switch's QoS policy."""


@dataclass(frozen=True, slots=True)
class ClassIntent:
    name: str
    role: str
    dscps: tuple[int, ...]
    priority: int
    queue: int
    lossless: bool
    strict: bool
    weight: int | None
    """Percent of the bandwidth left by strict queues; weights of a policy sum to 100."""
    ecn_min: int | None
    """Bytes."""
    ecn_max: int | None
    ecn_probability: int | None


@dataclass(frozen=True, slots=True)
class WatchdogIntent:
    enabled: bool
    detect_ms: int
    restore_ms: int
    action: str
    poll_ms: int


@dataclass(frozen=True, slots=True)
class QosIntent:
    """A QoS policy resolved into the tables every OS needs."""

    trust: str
    classes: tuple[ClassIntent, ...]
    """Ordered by priority."""
    dscp_to_priority: tuple[int, ...]
    """64 entries: switch priority (traffic class) of each DSCP."""
    priority_to_queue: tuple[int, ...]
    """8 entries."""
    lossless_priorities: tuple[int, ...]
    watchdog: WatchdogIntent
    mtu: int
    cable_length_m: int
    """The longest cable of any role (what one-length consumers size for)."""
    roce: ClassIntent
    cnp: ClassIntent | None
    cable_by_role: tuple[tuple[str, int], ...] = ()
    """(link role, metres), sorted by role: ``qos.cable_length`` per role."""

    def cable_for(self, role: str) -> int:
        """Metres of a link of ``role`` that the spec gives no length of its own."""
        return dict(self.cable_by_role).get(role, self.cable_length_m)


@dataclass(frozen=True, slots=True)
class BfdIntent:
    interval_ms: int
    """Transmit and minimum receive interval."""
    multiplier: int


@dataclass(frozen=True, slots=True)
class BgpNeighbor:
    address: str
    """The peer's interface address, no prefix length (``10.0.0.1``)."""
    remote_asn: int
    port: str
    """This switch's port (``SwitchPort.name``) the session runs over."""
    peer_device: str
    description: str
    """``peer:port``, as the port's description."""


@dataclass(frozen=True, slots=True)
class BgpIntent:
    """One switch's eBGP underlay, OS-neutral (``fabgen.plan.routing``)."""

    asn: int
    router_id: str
    """The switch's loopback address, no prefix length."""
    neighbors: tuple[BgpNeighbor, ...]
    """One per planned switch-to-switch /31 whose peer runs BGP, in port order."""
    maximum_paths: int
    """At least the number of equal-cost next hops any prefix can have (uplinks; parallel links to one peer)."""
    multipath_relax: bool
    """True where ECMP must span peers of different ASNs (uplinks to more than one peer ASN)."""
    networks: tuple[str, ...]
    """Prefixes this switch originates: its loopback /32 and (leaves) the /31 of every in-service host port,
    sorted by address."""
    bfd: BfdIntent | None
    keepalive: int | None
    """Seconds; None keeps the OS default."""
    hold: int | None


@dataclass(frozen=True, slots=True)
class Switch:
    name: str
    tier: TierName
    os: str
    model: str
    asic: str | None
    radix: int
    speed: int
    pod: int | None
    rail: int | None
    plane: int | None
    loopback: str
    mgmt: str | None
    ports: tuple[SwitchPort, ...]
    qos: QosIntent
    qos_path: tuple[str | int, ...]
    """Where the switch's QoS policy is written in the spec: ``("qos",)`` or its ``switch_overrides`` entry."""
    load_balancing: str
    roce_qp_hash: bool
    index: int = 0
    """0-based position in its group: leaf j of its pod and rail, spine s of its pod, super-spine m of its plane."""
    bgp: BgpIntent | None = None
    """None when routing is off or the switch is excluded from it."""
    hwsku: str | None = None
    """SONiC SKU (``DEVICE_METADATA.hwsku``); None on other OSes."""
    platform: str | None = None
    """SONiC platform of a SKU fabgen knows (``x86_64-nvidia_sn5600-r0``); None otherwise."""
    port_width: int | None = None
    """SerDes lanes per port where the SKU fixes it (SONiC names ports by first lane); None: the OS's rule."""


@dataclass(frozen=True, slots=True)
class HostNic:
    name: str
    netdev: str
    pci: str
    numa: int
    rail: int | None
    speed: int
    port: int
    in_service: bool
    address: str | None
    leaf: str | None
    leaf_port: str | None


@dataclass(frozen=True, slots=True)
class HostRoute:
    """One route in a backend NIC's own table: on-link (``via`` None) or through the NIC's leaf."""

    to: str
    """Destination prefix (``10.10.0.0/24``)."""
    via: str | None
    """Next hop (the leaf's end of the NIC's /31), or None for the /31 itself."""
    source: str
    """Preferred source address (the NIC's, no prefix length)."""
    table: int


@dataclass(frozen=True, slots=True)
class HostRule:
    """``ip rule``: traffic from this NIC's address looks up the NIC's table, so it leaves by its own rail."""

    priority: int
    source: str
    """``10.10.0.1/32``."""
    table: int


@dataclass(frozen=True, slots=True)
class BackendInterface:
    """One in-service backend NIC as the host's network stack configures it (OS-neutral)."""

    nic: str
    """RDMA device (``mlx5_0``)."""
    netdev: str
    rail: int
    address: str
    """The NIC's end of its /31, with prefix length (``10.10.0.1/31``)."""
    gateway: str
    """The leaf's end of the /31, no prefix length."""
    mtu: int
    table: int
    """Routing table id, from the rail (never from enumeration order)."""
    routes: tuple[HostRoute, ...]
    """The /31 on-link first, then the backend pools via the leaf."""
    rule: HostRule
    leaf: str
    leaf_port: str


@dataclass(frozen=True, slots=True)
class HostNetwork:
    """A host's backend network: what netplan, NetworkManager, sysctl and the twin all print or apply."""

    config: Literal["netplan", "networkmanager"]
    mtu: int
    roce_mtu: int
    """The RoCE active MTU mlx5 derives from ``mtu`` (what ``ibv_devinfo`` shows)."""
    interfaces: tuple[BackendInterface, ...]
    """In rail order."""


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    profile: str
    group: int
    pod: int
    mgmt: str | None
    nics: tuple[HostNic, ...]
    """Every NIC of the profile, backend ones in rail order first."""
    nccl_env: tuple[tuple[str, str], ...]
    """NCCL variables in file order, values as NCCL reads them."""
    nic_intent: HostNicIntent | None
    description: str
    network: HostNetwork | None = None
    """Backend addressing, MTU and source routing (:mod:`fabgen.plan.host_network`)."""


@dataclass(frozen=True)
class FabricPlan:
    """Everything the renderers and the linter need, computed once from the spec."""

    spec: ClusterSpec
    source: SourceDoc | None
    layout: Layout
    hosts: tuple[Host, ...]
    switches: tuple[Switch, ...]
    links: tuple[Link, ...]
    qos: QosIntent
    firmware: dict[str, FirmwareIntent] = field(default_factory=dict)
    """Per host profile."""
    nccl_env: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Per host profile with hosts: the NCCL variables of its hosts with every NIC in service and no override
    (the profile's shared ``nccl.conf``); a host whose :attr:`Host.nccl_env` differs has files of its own."""

    def switch(self, name: str) -> Switch:
        return self._switch_index[name]

    def host(self, name: str) -> Host:
        return self._host_index[name]

    def named(self, scope: Literal["switch", "host"]) -> tuple[tuple[str, Any], ...]:
        """``(name, device)`` of every switch or every host, in plan order, made once per plan.

        Why: every switch or host target's list of devices to render starts
        from it; each had built its own, 2,048 or 3,072 new pairs, which cost a
        2,048-switch target as much as a third of its render.
        """
        key = f"_{scope}_named"
        cached: tuple[tuple[str, Any], ...] | None = self.__dict__.get(key)
        if cached is None:
            cached = tuple([(d.name, d) for d in (self.switches if scope == "switch" else self.hosts)])
            object.__setattr__(self, key, cached)
        return cached

    @property
    def _switch_index(self) -> dict[str, Switch]:
        cached = self.__dict__.get("_switches_by_name")
        if cached is None:
            cached = {s.name: s for s in self.switches}
            object.__setattr__(self, "_switches_by_name", cached)
        return cached

    @property
    def _host_index(self) -> dict[str, Host]:
        cached = self.__dict__.get("_hosts_by_name")
        if cached is None:
            cached = {h.name: h for h in self.hosts}
            object.__setattr__(self, "_hosts_by_name", cached)
        return cached
