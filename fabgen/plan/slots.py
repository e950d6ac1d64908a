"""The fabric's positions before addressing: host and switch slots, and planned links.

Named types shared by the layout (:mod:`fabgen.plan.build`) and the explicit
cabling (:mod:`fabgen.plan.cabling`), kept apart so neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from fabgen.plan.model import Role, TierName
    from fabgen.spec.hosts import HostOverride


@dataclass(frozen=True, slots=True)
class HostSlot:
    name: str
    profile: str
    group: int
    override: HostOverride | None


@dataclass(frozen=True, slots=True)
class SwitchSlot:
    name: str
    tier: TierName
    pod: int | None
    rail: int | None
    plane: int | None
    index: int = 0
    """Position in its group (leaf j of its pod and rail, spine s of its pod, super-spine m of its plane)."""


class PlannedLink(NamedTuple):
    """A cable before addressing: ``a`` is the lower end (host or lower switch).

    A tuple underneath: the 24k layout makes ~74k of them in a hot loop.
    """

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    role: Role
    rail: int | None
    speed: int
    explicit: bool
