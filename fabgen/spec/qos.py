"""The QoS policy: traffic classes, PFC and its watchdog, ECN, MTU.

One policy describes what every switch and every NIC must agree on; the
planner turns it into per-device intents and the linter checks the agreement.
"""

from typing import Annotated, Any, Literal, Self

from pydantic import Discriminator, Field, Tag, model_validator

from fabgen.spec.common import SpecModel
from fabgen.units import Duration, Length, Size

Dscp = Annotated[int, Field(ge=0, le=63)]
Priority = Annotated[int, Field(ge=0, le=7)]


class Ecn(SpecModel):
    """ECN marking thresholds of a queue (WRED in ECN mode: mark, never drop)."""

    min: Annotated[Size, Field(ge=1)]
    max: Size
    probability: Annotated[int, Field(ge=1, le=100)] = 20
    """Marking probability at ``max``, in percent."""

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.min >= self.max:
            raise ValueError(f"ECN min ({self.min} bytes) must be below max ({self.max} bytes)")
        return self


class TrafficClass(SpecModel):
    role: Literal["roce", "cnp", "cts", "default", "other"] = "other"
    """What the class carries: RoCE data, congestion notifications, NCCL's clear-to-send and credit
    messages (``cts``: NCCL_IB_FIFO_TC points at it when the class is ``strict``), everything else."""
    dscp: list[Dscp] | Literal["other"]
    """DSCP values of this class, or ``other`` for every DSCP no class names."""
    priority: Priority
    """Switch priority / traffic class; PFC pauses this priority when the class is lossless."""
    queue: Priority | None = None
    """Egress queue; the priority's number when omitted."""
    lossless: bool = False
    ecn: Ecn | None = None
    strict: bool = False
    weight: Annotated[int, Field(ge=1, le=100)] | None = None
    """DWRR weight in percent of the bandwidth left by strict queues."""

    @model_validator(mode="after")
    def _scheduling(self) -> Self:
        if self.strict and self.weight is not None:
            raise ValueError("a class is either 'strict' or has a 'weight', not both")
        if not self.strict and self.weight is None:
            raise ValueError("give the class a 'weight' (percent) or make it 'strict'")
        if isinstance(self.dscp, list) and len(set(self.dscp)) != len(self.dscp):
            raise ValueError("a DSCP appears twice in this class")
        return self

    @property
    def egress_queue(self) -> int:
        return self.priority if self.queue is None else self.queue


class Watchdog(SpecModel):
    """PFC watchdog: breaks a PFC storm by dropping (or forwarding) a stuck queue."""

    enabled: bool = True
    detect: Annotated[Duration, Field(ge=1, le=60_000)] = "200ms"  # type: ignore[assignment]
    restore: Annotated[Duration, Field(ge=1, le=60_000)] = "400ms"  # type: ignore[assignment]
    action: Literal["drop", "forward"] = "drop"
    poll: Annotated[Duration, Field(ge=1, le=60_000)] = "100ms"  # type: ignore[assignment]
    """How often the switch checks queues (SONiC POLL_INTERVAL, NVUE polling-interval)."""


class Pfc(SpecModel):
    watchdog: Watchdog = Watchdog()


CableLength = Annotated[Length, Field(ge=1, le=40_000)]


class CableLengths(SpecModel):
    """Longest cable per link role (metres): a 3 m host DAC needs far less PFC headroom than a 40 m uplink."""

    host_leaf: CableLength = 5
    leaf_spine: CableLength = 5
    spine_super_spine: CableLength = 5

    def of(self, role: str) -> int:
        """Length for a plan link role (``host-leaf``, ``leaf-spine``, ``spine-superspine``)."""
        return {"host-leaf": self.host_leaf, "leaf-spine": self.leaf_spine,
                "spine-superspine": self.spine_super_spine}[role]


def _cable_form(value: Any) -> str:
    return "roles" if isinstance(value, (dict, CableLengths)) else "scalar"


class QosPolicy(SpecModel):
    trust: Literal["dscp"] = "dscp"
    classes: Annotated[dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")], TrafficClass], Field(min_length=1)]
    pfc: Pfc = Pfc()
    mtu: Annotated[int, Field(ge=1500, le=9216)] = 9214
    """Switch port IP MTU (bytes). 9214 by default: the largest EOS accepts, and fine for SONiC and Cumulus."""
    cable_length: Annotated[
        Annotated[CableLength, Tag("scalar")] | Annotated[CableLengths, Tag("roles")], Discriminator(_cable_form)
    ] = 5
    """Longest cable on a lossless port (metres): sizes PFC headroom. One length for every link, or one per
    role: ``{host_leaf: 3m, leaf_spine: 40m, spine_super_spine: 100m}`` (``fabric.cabling[].length`` wins)."""

    @property
    def cable_lengths(self) -> CableLengths:
        """The lengths per role, a scalar ``cable_length`` applying to every role."""
        if isinstance(self.cable_length, CableLengths):
            return self.cable_length
        value = self.cable_length
        return CableLengths(host_leaf=value, leaf_spine=value, spine_super_spine=value)
