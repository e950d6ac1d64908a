"""What Cumulus NVUE accepts from a plan, checked at validation with the spec's line.

NVUE's watchdog has two knobs (polling interval, robustness) and always drops;
a restore time it cannot set is a comment in the output, not a refusal (the
queue comes back sooner than planned, never later). ECN thresholds and
probability are held to the ranges the output check applies to
``qos congestion-control`` (:data:`ECN_LEAVES`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.source import spec_problem
from fabgen.targets.cabling_limits import cable_port_problems
from fabgen.targets.nvue.parse import HOSTNAME, QOS, SPEEDS, Coll, Leaf, Node, Obj
from fabgen.targets.nvue.routing_limits import routing_limit_problems
from fabgen.targets.qos_common import WatchdogLimits, watchdog_limit_problems

if TYPE_CHECKING:
    from fabgen.plan.model import ClassIntent, FabricPlan, QosIntent, Switch

WATCHDOG = WatchdogLimits(
    "Cumulus NVUE", None, None, (100, 5_000), 1, ("drop",),
    "NVUE takes polling-interval 100-5000 ms; detection is polling-interval x robustness (1-1000); "
    "the action is always drop", detect_in_polls=(1, 1000))

PORT_FORM = re.compile(r"swp[1-9][0-9]{0,2}(s[0-9])?")


def _member(node: Node, key: str) -> Node:
    """``key``'s schema below ``node``, through a collection's items (its keys are ids, not field names)."""
    if isinstance(node, Coll):
        node = node.item
    if not isinstance(node, Obj):
        raise TypeError(f"the NVUE schema has no object above {key!r}")
    return node.fields[key]


def _ecn_leaves() -> Mapping[str, Leaf]:
    """Spec ``ecn`` field -> the schema leaf of ``qos congestion-control <profile> traffic-class <tc>`` it fills."""
    traffic_class = _member(_member(QOS, "congestion-control"), "traffic-class")
    leaves: dict[str, Leaf] = {}
    for field, name in (("min", "min-threshold"), ("max", "max-threshold"), ("probability", "probability")):
        leaf = _member(traffic_class, name)
        if not isinstance(leaf, Leaf):  # fail at import rather than let the check vanish
            raise TypeError(f"the NVUE schema's {name} is not a leaf")
        leaves[field] = leaf
    return leaves


ECN_LEAVES = _ecn_leaves()
"""The very leaves :func:`~fabgen.targets.nvue.parse.check_nvue_startup` holds the output to (bytes, percent)."""


def plan_limits(plan: FabricPlan) -> list[Problem]:
    cumulus = [s for s in plan.switches if s.os == "cumulus"]
    if not cumulus:
        return []
    problems = [*watchdog_limit_problems(plan, "cumulus", WATCHDOG),
                *cable_port_problems(plan, "cumulus", PORT_FORM, "swp1"),
                *routing_limit_problems(plan),
                *ecn_limit_problems(plan, cumulus),
                *hostname_problems(plan, cumulus)]
    seen: set[tuple[str, int]] = set()
    for switch in cumulus:
        for port in switch.ports:
            if (switch.tier, port.speed) not in seen:
                seen.add((switch.tier, port.speed))
                if f"{port.speed}G" not in SPEEDS:
                    problems.append(spec_problem(
                        plan.source, f"{switch.name} {port.name} (to {port.peer_device}): NVUE has no link speed "
                        f"{port.speed}G (it has {', '.join(SPEEDS[1:])})", ("fabric", "tiers", switch.tier, "speed")))
    return problems


def ecn_limit_problems(plan: FabricPlan, cumulus: list[Switch]) -> list[Problem]:
    """One refusal per policy (default or override), class and ``ecn`` field NVUE's schema would refuse.

    Without it ``validate`` passes a threshold NVUE cannot store (its leaves
    are 32-bit, the spec takes up to 2**53 bytes) and ``generate`` then fails
    on its own output check.
    """
    problems: list[Problem] = []
    seen: set[tuple[str | int, ...]] = set()
    for switch in cumulus:
        if switch.qos_path in seen:
            continue
        seen.add(switch.qos_path)
        for _, c in queue_classes(switch.qos):
            problems += _class_ecn_problems(plan, switch, c)
    return problems


def queue_classes(qos: QosIntent) -> list[tuple[int, ClassIntent]]:
    """(traffic class, class) for every egress queue a class uses; the first class of a queue decides.

    The renderer (:mod:`fabgen.targets.nvue.config`) writes each queue's ECN and scheduler from these, and
    :func:`ecn_limit_problems` judges only these: a later class on the same queue writes nothing, so refusing
    its values would make ``validate`` stricter than ``generate``.
    """
    chosen: dict[int, ClassIntent] = {}
    for c in qos.classes:
        chosen.setdefault(c.queue, c)
    return sorted(chosen.items())


def _class_ecn_problems(plan: FabricPlan, switch: Switch, c: ClassIntent) -> list[Problem]:
    """The class's ECN values outside NVUE's ranges, each at its spec field."""
    if c.ecn_min is None:
        return []
    values = {"min": c.ecn_min, "max": c.ecn_max, "probability": c.ecn_probability}
    problems = []
    for field, leaf in ECN_LEAVES.items():
        why = leaf.problem(values[field])
        if why is not None:
            problems.append(spec_problem(
                plan.source, f"class {c.name}: ECN {field} {why} on Cumulus NVUE (qos congestion-control "
                f"traffic-class {c.queue}; {switch.name} and the switches that share its policy)",
                (*switch.qos_path, "classes", c.name, "ecn", field)))
    return problems


_HOSTNAME = re.compile(HOSTNAME)


def hostname_problems(plan: FabricPlan, cumulus: list[Switch]) -> list[Problem]:
    """A Cumulus switch whose name NVUE's ``system hostname`` refuses (a ``.``, a ``_``, a ``-`` at either end,
    over 63 characters), at the ``fabric.devices`` pin that gave it: the spec's name pattern admits them for
    EOS and SONiC, and ``generate`` would otherwise stop on the output check."""
    pins = {pin.name: key for key, pin in plan.spec.fabric.devices.items() if pin.name is not None}
    return [spec_problem(plan.source, f"{switch.name} is not a hostname NVUE takes (letters, digits and inner "
                                      "'-', at most 63 characters)",
                         ("fabric", "devices", pins[switch.name], "name") if switch.name in pins
                         else ("fabric", "tiers", switch.tier))
            for switch in cumulus if not _HOSTNAME.fullmatch(switch.name)]
