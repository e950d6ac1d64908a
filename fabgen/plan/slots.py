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

    An explicit cable (:mod:`fabgen.plan.cabling`) is one of these; the automatic layout's links are
    :data:`RawLink`, the same fields as a plain tuple.
    """

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    role: Role
    rail: int | None
    speed: int
    explicit: bool


RawLink = tuple[str, str, str, str, "Role", "int | None", int, bool]
"""A cable before addressing as the automatic layout makes it: :class:`PlannedLink`'s fields, in its order, as a
plain tuple. Why not a PlannedLink: the layout's 74k links at 24k GPUs (800k at 262k) are made by ``zip`` over
the port-name tables, in C, with no Python call (PlannedLink's ``__new__`` is one) or bytecode per link. Every
reader takes them by position."""
