"""The switch fabric: rails, tiers, oversubscription, addressing, explicit cabling."""

from __future__ import annotations

import ipaddress
from fractions import Fraction
from typing import Annotated, Literal

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


class Tier(SpecModel):
    os: SwitchOs
    model: Token
    ports: Annotated[int, Field(ge=4, le=2048)]
    """Radix: front-panel ports at ``speed``."""
    speed: Speed = "400G"
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
    def _hwsku_is_sonic(self) -> Tier:
        if self.hwsku is not None and self.os != "sonic":
            raise ValueError(f"hwsku names a SONiC SKU; this tier runs {self.os}")
        return self


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
    def _gateway_in_mgmt(self) -> Addressing:
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
    def _distinct(self) -> Cable:
        if self.a == self.b:
            raise ValueError("a cable cannot connect a port to itself")
        return self


class SwitchOverride(SpecModel):
    """A different QoS policy for the switches whose names match ``match`` (glob)."""

    match: Glob
    qos: QosPolicy


class Fabric(SpecModel):
    rails: Annotated[int, Field(ge=1, le=32)]
    tiers: Tiers
    oversubscription: Ratio = "1:1"
    """Downlink to uplink bandwidth per switch, ``3:1`` or ``1:1``."""
    load_balancing: LoadBalancing = LoadBalancing()
    addressing: Addressing = Addressing()
    cabling: list[Cable] = []
    switch_overrides: list[SwitchOverride] = []
    routing: Routing = Routing()
    """The eBGP underlay (``fabgen.spec.routing``)."""

    @field_validator("oversubscription")
    @classmethod
    def _ratio_positive(cls, value: str) -> str:
        down, up = (Fraction(p) for p in value.split(":"))
        if down <= 0 or up <= 0 or down < up:
            raise ValueError("oversubscription is down:up with down >= up > 0, e.g. '1:1' or '3:1'")
        return value

    @property
    def ratio(self) -> Fraction:
        down, up = (Fraction(p) for p in self.oversubscription.split(":"))
        return down / up
