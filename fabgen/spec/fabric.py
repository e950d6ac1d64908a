"""The switch fabric: rails, tiers, oversubscription, addressing, explicit cabling."""

import ipaddress
from fractions import Fraction
from typing import Annotated, Literal, Self

from pydantic import Field, StringConstraints, field_validator, model_validator

from fabgen.spec.buffers import SonicBuffers
from fabgen.spec.common import Description, SpecModel, Token
from fabgen.spec.qos import QosPolicy
from fabgen.spec.routing import Routing
from fabgen.units import Length, Speed

SwitchOs = Literal["eos", "sonic", "cumulus"]
Endpoint = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}:[A-Za-z0-9][A-Za-z0-9_./-]{0,30}$")]
"""``device:port``, e.g. ``gt00001:ens1np0`` or ``leaf-r0-p00-01:Ethernet1/1``."""
Ratio = Annotated[str, StringConstraints(pattern=r"^[0-9]+(\.[0-9]+)?:[0-9]+(\.[0-9]+)?$")]
Glob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9*?\[\]._-]{1,64}$")]


def _check_ratio(value: str) -> str:
    down, up = (Fraction(p) for p in value.split(":"))
    if down <= 0 or up <= 0:
        raise ValueError("oversubscription is down:up with both > 0, e.g. '1:1', '3:1' or '1:1.125' (spare uplinks)")
    return value


def parse_ratio(value: str) -> Fraction:
    """``3:1`` -> 3, ``1:1.125`` -> 8/9: downlink bandwidth per unit of uplink bandwidth."""
    down, up = (Fraction(p) for p in value.split(":"))
    return down / up


class Tier(SpecModel):
    os: SwitchOs
    model: Token
    ports: Annotated[int, Field(ge=4, le=2048)]
    """Radix: front-panel ports at ``speed``."""
    speed: Speed = "400G"  # type: ignore[assignment]  # spec text; validate_default parses it to 400
    count: Annotated[int, Field(ge=1, le=100_000)] | None = None
    """Force the number of switches (per pod for spines of a 3-tier fabric) instead of the fewest that fit."""
    asic: Token | None = None
    """ASIC family (e.g. ``td4``, ``spectrum4``): selects buffer constants where an OS needs them."""
    buffers: SonicBuffers | None = None
    """SONiC buffer constants (headroom, pools), overriding those of ``asic`` field by field."""
    hwsku: Token | None = None
    """SONiC SKU (``ACS-SN5600``, ``Mellanox-SN5600-O128``): the port layout, pools and headroom table.
    Default: the model's default SKU (``SN5600`` -> ``ACS-SN5600``), else ``model`` itself."""

    @model_validator(mode="after")
    def _hwsku_is_sonic(self) -> Self:
        if self.hwsku is not None and self.os != "sonic":
            raise ValueError(f"hwsku names a SONiC SKU; this tier runs {self.os}")
        return self
    oversubscription: Ratio | None = None
    """This tier's down:up bandwidth (``1:1.125`` is undersubscribed: spare uplinks); ``fabric.oversubscription``
    when omitted. On the top tier it has no uplinks to apply to and is refused."""

    @field_validator("oversubscription")
    @classmethod
    def _tier_ratio(cls, value: str | None) -> str | None:
        return None if value is None else _check_ratio(value)


class Tiers(SpecModel):
    leaf: Tier
    spine: Tier
    super_spine: Tier | None = None


class LoadBalancing(SpecModel):
    mode: Literal["ecmp", "dlb", "spray"] = "ecmp"
    roce_qp_hash: bool = False
    """Hash RoCE flows on the destination QP in the BTH (UDP 4791), where the platform supports it."""


class Addressing(SpecModel):
    p2p: ipaddress.IPv4Network = ipaddress.IPv4Network("10.0.0.0/9")
    """Pool for /31 point-to-point links (every cable, hosts included)."""
    loopbacks: ipaddress.IPv4Network = ipaddress.IPv4Network("10.255.0.0/16")
    mgmt: ipaddress.IPv4Network | None = None
    """Management addresses for every device (Ansible inventory); none when omitted."""
    mgmt_gateway: ipaddress.IPv4Address | None = None
    """Default gateway of the management network, inside ``mgmt`` and above the addresses devices get
    (they are numbered from the first); SONiC's ``MGMT_INTERFACE`` needs one."""

    @model_validator(mode="after")
    def _gateway_in_mgmt(self) -> Self:
        gateway = self.mgmt_gateway
        if gateway is None:
            return self
        if self.mgmt is None:
            raise ValueError("mgmt_gateway needs a mgmt network")
        if gateway not in self.mgmt or gateway in (self.mgmt.network_address, self.mgmt.broadcast_address):
            raise ValueError(f"mgmt_gateway {gateway} is not a host address of {self.mgmt}")
        return self

    @field_validator("p2p", "loopbacks", "mgmt", mode="before")
    @classmethod
    def _network(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return ipaddress.IPv4Network(value, strict=True)
            except ValueError as exc:
                raise ValueError(f"not an IPv4 network: {exc}") from None
        return value


class Cable(SpecModel):
    """A link as cabled, overriding the planned link on either end."""

    a: Endpoint
    b: Endpoint
    description: Description = ""
    length: Annotated[Length, Field(ge=1, le=40_000)] | None = None
    """This cable's length (metres): sizes the PFC headroom of both ends instead of ``qos.cable_length``."""

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        if self.a == self.b:
            raise ValueError("a cable cannot connect a port to itself")
        return self


class SwitchOverride(SpecModel):
    """A different QoS policy for the switches whose names match ``match`` (glob)."""

    match: Glob
    qos: QosPolicy


class DevicePin(SpecModel):
    """What a site fixes by hand for one device, over what its position would give it."""

    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")] | None = None
    """A switch's name instead of the planner's (the key stays the planner's name)."""
    loopback: ipaddress.IPv4Address | None = None
    """A switch's loopback, inside ``addressing.loopbacks``."""
    mgmt: ipaddress.IPv4Address | None = None
    """A device's management address, inside ``addressing.mgmt``."""


class Fabric(SpecModel):
    rails: Annotated[int, Field(ge=1, le=32)]
    tiers: Tiers
    oversubscription: Ratio = "1:1"
    """Downlink to uplink bandwidth per switch, ``3:1``, ``1:1`` or ``1:1.125``; a tier's own
    ``oversubscription`` overrides it for that tier."""
    topology: Literal["rail", "rack"] = "rail"
    """``rail``: NIC r of every host to a leaf of rail r. ``rack``: one leaf (ToR) per ``hosts_per_rack``
    hosts, taking every NIC of them (Meta's RTSW)."""
    hosts_per_rack: Annotated[int, Field(ge=1, le=1024)] | None = None
    """Hosts behind one leaf in the ``rack`` topology."""
    hosts_per_zone: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    """Hosts per pod (AI zone) in a 3-tier fabric, instead of the fewest pods that fit."""
    load_balancing: LoadBalancing = LoadBalancing()
    addressing: Addressing = Addressing()
    cabling: list[Cable] = []
    switch_overrides: list[SwitchOverride] = []
    routing: Routing = Routing()
    """The eBGP underlay (``fabgen.spec.routing``)."""
    devices: dict[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")], DevicePin] = {}
    """Pins by the planner's device name (``leaf-r0-p00-01``, a host's name); ASNs are pinned with
    ``routing.asn_overrides``."""
    ipam: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_./-]{1,255}\.(ya?ml|csv)$")] | None = None
    """A YAML (``device: {loopback, mgmt}``) or CSV (``device,loopback,mgmt``) file of pinned addresses,
    relative to the spec's directory."""

    @field_validator("oversubscription")
    @classmethod
    def _ratio_positive(cls, value: str) -> str:
        return _check_ratio(value)

    @model_validator(mode="after")
    def _topology_fields(self) -> Self:
        if self.topology == "rack" and self.hosts_per_rack is None:
            raise ValueError("topology 'rack' needs hosts_per_rack (hosts behind one leaf)")
        if self.topology == "rail" and self.hosts_per_rack is not None:
            raise ValueError("hosts_per_rack applies to topology 'rack' only")
        if self.hosts_per_zone is not None and self.tiers.super_spine is None:
            raise ValueError("hosts_per_zone sizes the pods of a 3-tier fabric; add a super_spine tier")
        top = self.tiers.super_spine or self.tiers.spine
        if top.oversubscription is not None:
            raise ValueError("the top tier has no uplinks: its oversubscription applies to nothing")
        return self

    @property
    def ratio(self) -> Fraction:
        """The fabric-wide target (the default of every tier)."""
        return parse_ratio(self.oversubscription)

    def tier_ratio(self, tier: str) -> Fraction:
        """The down:up target of ``tier`` (``leaf``, ``spine``): its own, else the fabric's."""
        own = getattr(self.tiers, tier).oversubscription
        return parse_ratio(own) if own is not None else self.ratio

    def tier_ratio_text(self, tier: str) -> str:
        own = getattr(self.tiers, tier).oversubscription
        return str(own) if own is not None else self.oversubscription
