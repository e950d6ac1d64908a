"""How a host profile configures its backend (RoCE) NICs: which network stack, which MTU."""

from typing import Annotated, Literal

from pydantic import Field

from fabgen.spec.common import SpecModel

NetworkConfig = Literal["netplan", "networkmanager"]


class BackendNetwork(SpecModel):
    """The backend NICs' addresses and routes come from the plan; only what a site chooses is here."""

    config: NetworkConfig = "netplan"
    """``netplan`` (Ubuntu, DGX OS) or ``networkmanager`` keyfiles (RHEL, Rocky)."""
    mtu: Annotated[int, Field(ge=1280, le=9216)] | None = None
    """Netdev MTU of every backend NIC. Omitted: the smallest round MTU that gives ``nic.roce_mtu``
    (mlx5 derives the RoCE MTU from it), capped at the leaves' MTU. Set: refused above a leaf's
    MTU or below ``nic.roce_mtu`` plus the 96 bytes of RoCE headers the kernel reserves."""
