"""What a target is: one consumer's row (scope, devices, render, check, read-back, limits).

Kept apart from :mod:`fabgen.targets.registry` (the list of rows) so that a
target module can import its row type without importing every other target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from fabgen.errors import Problem

if TYPE_CHECKING:
    from jinja2 import Environment

    from fabgen.plan import FabricPlan
    from fabgen.targets.qos_common import CommonQos

Scope = Literal["cluster", "profile", "host", "switch"]


@dataclass(frozen=True)
class RenderContext:
    plan: FabricPlan
    env: Environment
    cache: dict[str, Any] = field(default_factory=dict)
    """Per-run memo for targets whose output repeats across devices (hosts of one profile)."""


@dataclass(frozen=True)
class ReadBack:
    """How ``lint --deployed`` reads a device's deployed file back into the OS-neutral QoS picture."""

    os: str
    path: str
    """Relative path with ``{name}``."""
    parse: Callable[[Any], CommonQos]
    kind: Literal["text", "json"]
    """What ``parse`` takes: the file's text, or its decoded JSON."""


@dataclass(frozen=True)
class Target:
    name: str
    scope: Scope
    summary: str
    render: Callable[[RenderContext, Any], dict[str, str]]
    applies: Callable[[Any], bool] = lambda device: True
    devices: Callable[[FabricPlan], list[tuple[str, Any]]] | None = None
    """``(name, device)`` pairs it renders, in plan order, when ``applies`` cannot tell from the device
    alone (a host's NCCL files depend on its profile's): the plan is walked once, not a render per host."""
    check: Callable[[str, str], list[Problem]] | None = None
    """Checks one produced file the way its consumer would; any problem is a fabgen bug, nothing is written."""
    limits: Callable[[FabricPlan], list[Problem]] | None = None
    """What this consumer cannot express in a plan, as problems located at the spec's lines.

    Run by :func:`fabgen.pipeline.plan_fabric`, so ``validate`` refuses
    everything ``generate`` would.
    """
    read_back: ReadBack | None = None
    default: bool = True
    """Rendered when no ``--only`` is given; an export few users want (``avd``) is opt-in."""
