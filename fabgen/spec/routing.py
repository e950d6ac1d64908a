"""``fabric.routing``: the eBGP underlay, in the style of RFC 7938 (BGP in large data centres).

Every switch-to-switch /31 carries one eBGP session; hosts do not speak BGP. The
ASN scheme decides which switches share an ASN, and that choice decides how the
fabric converges when a link or a leaf fails:

- ``rfc7938`` (the default): one ASN per leaf, one per pod's spine group, one
  per super-spine plane (in a 2-tier fabric all spines share one). Switches
  that share an ASN can never appear twice in one AS path, so BGP's own loop
  check rejects every "valley" path (leaf -> spine -> leaf -> spine, spine ->
  super-spine -> spine of the same pod). When a leaf's prefix is withdrawn, no
  such longer path is left for the other switches to try one after another
  before they give up (*path hunting*, RFC 7938 section 7.2), so a withdrawal
  converges in one round of updates. And a leaf's uplinks all lead to one peer
  ASN, so plain ECMP applies without multipath relax.
- ``unique``: one ASN per switch. Valley paths are then loop-free to BGP and
  are explored on every withdrawal (path hunting); ECMP over peers of
  different ASNs needs multipath relax, which the plan then sets.

ASNs derive from each switch's position (tier, pod, rail, index), never from
enumeration order, so adding a pod changes no existing switch's ASN.
"""

from typing import Annotated, Literal, Self

from pydantic import Field, StringConstraints, field_validator, model_validator

from fabgen.spec.common import SpecModel
from fabgen.units import Duration

PRIVATE_ASN_4BYTE = (4_200_000_000, 4_294_967_294)
"""RFC 6996: private use, 4-byte."""
PRIVATE_ASN_2BYTE = (64_512, 65_534)
"""RFC 6996: private use, 2-byte (allowed for overrides, too small for a whole fabric's scheme)."""

Glob = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9*?\[\]._-]{1,64}$")]


class Bfd(SpecModel):
    """BFD on every BGP session, so a failed link is detected in ``interval * multiplier`` instead of the hold time.

    The ranges are the narrowest of the three OSes': EOS (AVD's model: multiplier
    3-50; intervals 50-60000 ms), FRR (multiplier 2-255, 10-60000 ms), NVUE
    (multiplier 2-255, 50 ms and up). EOS's default is 300 ms x 3.
    """

    enabled: bool = True
    interval: Annotated[Duration, Field(ge=50, le=60_000)] = "300ms"  # type: ignore[assignment]
    """Transmit and minimum receive interval, e.g. ``300ms``."""
    multiplier: Annotated[int, Field(ge=3, le=50)] = 3


class Timers(SpecModel):
    """BGP keepalive and hold time in seconds; unset, each OS keeps its default.

    The ranges are EOS's (``timers bgp <0-3600> <0|3-7200>``), the narrowest of
    the three; SONiC's FRR and NVUE take up to 65535.
    """

    keepalive: Annotated[int, Field(ge=0, le=3_600)] = 3
    hold: Annotated[int, Field(ge=0, le=7_200)] = 9
    """0 (never expire, RFC 4271) or at least 3 keepalives, so one lost keepalive never drops a session."""

    @model_validator(mode="after")
    def _hold_covers_keepalives(self) -> Self:
        if self.hold != 0 and self.hold < 3 * self.keepalive:
            raise ValueError(f"hold ({self.hold}) must be 0 or at least 3 x keepalive ({3 * self.keepalive})")
        if self.hold != 0 and self.keepalive == 0:
            raise ValueError("keepalive 0 sends no keepalives, so a hold time other than 0 would expire every session")
        return self


def _private(asn: int) -> bool:
    return PRIVATE_ASN_4BYTE[0] <= asn <= PRIVATE_ASN_4BYTE[1] or PRIVATE_ASN_2BYTE[0] <= asn <= PRIVATE_ASN_2BYTE[1]


class AsnOverride(SpecModel):
    """A fixed ASN for the switches whose names match ``match`` (glob); the first matching entry wins."""

    match: Glob
    asn: int

    @field_validator("asn")
    @classmethod
    def _private_asn(cls, asn: int) -> int:
        if not _private(asn):
            raise ValueError(f"ASN {asn} is not private (RFC 6996: {PRIVATE_ASN_2BYTE[0]}-{PRIVATE_ASN_2BYTE[1]} "
                             f"or {PRIVATE_ASN_4BYTE[0]}-{PRIVATE_ASN_4BYTE[1]})")
        return asn


class Routing(SpecModel):
    """The eBGP underlay (on by default: without it a fabric routes nothing past a leaf's own ports)."""

    enabled: bool = True
    asn_base: Annotated[int, Field(ge=PRIVATE_ASN_4BYTE[0], le=PRIVATE_ASN_4BYTE[1])] = PRIVATE_ASN_4BYTE[0]
    """First ASN of the scheme. Super-spine planes take ``base + plane``, spine groups ``base + 10000 + pod``,
    leaves ``base + 100000 + n`` with n from (pod, rail, index) (``fabgen.plan.routing``); all must stay private."""
    asn_scheme: Literal["rfc7938", "unique"] = "rfc7938"
    asn_overrides: list[AsnOverride] = Field(default_factory=list)
    exclude: list[Glob] = Field(default_factory=list)
    """Switches that run no BGP from fabgen (routed by hand or by another system); their links get no session."""
    maximum_paths: Annotated[int, Field(ge=1, le=1024)] | None = None
    """ECMP width of every switch; unset, each switch's is sized from its uplinks and parallel links."""
    bfd: Bfd | None = None
    timers: Timers | None = None
