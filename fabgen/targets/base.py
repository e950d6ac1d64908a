"""What a target is: one consumer's row (scope, devices, render, check, read-back, limits).

Kept apart from :mod:`fabgen.targets.registry` (the list of rows) so that a
target module can import its row type without importing every other target.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from fabgen.errors import Problem

if TYPE_CHECKING:
    from jinja2 import Environment

    from fabgen.plan import FabricPlan
    from fabgen.plan.layout import Layout
    from fabgen.source import SourceDoc
    from fabgen.spec import ClusterSpec
    from fabgen.targets.qos_common import CommonQos
    from fabgen.targets.routing_common import CommonRouting

Scope = Literal["cluster", "profile", "host", "switch"]

Rendered = tuple[str, str, tuple[str, str]]
"""(path, text, (target, device)) of one rendered and checked file."""


@dataclass(frozen=True)
class RenderContext:
    plan: FabricPlan
    env: Environment
    cache: dict[str, Any] = field(default_factory=dict)
    """Per-run memo for targets whose output repeats across devices (hosts of one profile)."""


RenderMany = Callable[[RenderContext, Sequence[tuple[str, Any]]], "tuple[list[Rendered], list[Problem]] | None"]
"""A target's optional batch render (:attr:`Target.render_many`)."""


LayoutLimits = Callable[["ClusterSpec", "Layout", "SourceDoc | None"], list[Problem]]
"""A consumer's refusals that the layout's numbers alone decide (the ECMP width a switch OS cannot configure),
located at the spec's lines.

Run by :func:`fabgen.plan.build.build_plan` right after sizing, before a link
exists (:attr:`Target.layout_limits`, through
:func:`fabgen.targets.registry.layout_limit_problems`): a fabric the
target refuses anyway is not built first, which at 200k hosts is a minute and
gigabytes. Each must say exactly what the target's :attr:`Target.limits` says
of the built plan, and say nothing where the plan could still differ.
"""


@dataclass(frozen=True)
class ReadBack:
    """How ``lint --deployed`` reads a device's deployed file back into the OS-neutral QoS and routing pictures."""

    os: str
    path: str
    """Relative path with ``{name}``."""
    parse: Callable[[Any], CommonQos]
    kind: Literal["text", "json"]
    """What ``parse`` and ``parse_routing`` take: the file's text, or its decoded JSON."""
    parse_routing: Callable[[Any], CommonRouting]
    """The same file's underlay (:class:`~fabgen.targets.routing_common.CommonRouting`)."""


def every_device(device: Any) -> bool:
    """The default ``applies``: named so that :func:`fabgen.targets.registry.devices_of` can skip calling it."""
    return True


@dataclass(frozen=True)
class Target:
    name: str
    scope: Scope
    summary: str
    render: Callable[[RenderContext, Any], dict[str, str]]
    applies: Callable[[Any], bool] = every_device
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
    layout_limits: LayoutLimits | None = None
    """The part of :attr:`limits` that the layout's numbers alone decide, run before any link is built
    (:data:`LayoutLimits`)."""
    read_back: ReadBack | None = None
    render_many: RenderMany | None = None
    """Optional: many devices' files at once, from their (name, device) pairs, already checked, for a target whose
    per-device cost is a few calls.

    It must give exactly what :attr:`render` then :attr:`check` give device by
    device: the same ``(path, text, owner)`` rows in the same order and the same
    problems. When it returns None (a case it does not take) or raises,
    :mod:`fabgen.targets.render` renders those devices one by one instead, so
    an error is reported as that path has always reported it.
    """
    default: bool = True
    """Rendered when no ``--only`` is given; an export few users want (``avd``) is opt-in."""
