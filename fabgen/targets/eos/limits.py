"""What EOS accepts from a plan, checked at validation with the spec's line.

Kept beside the renderer so that one folder says everything about EOS; the
pipeline runs :func:`plan_limits` for every plan, so ``fabgen validate`` refuses
what ``generate`` could not write.
"""

from __future__ import annotations

import re
from operator import attrgetter
from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.platforms import features
from fabgen.source import spec_problem
from fabgen.targets.cabling_limits import cable_port_problems
from fabgen.targets.ecmp_limits import EcmpLimit
from fabgen.targets.eos.syntax import ECN_THRESHOLD_MAX, speed_problem
from fabgen.targets.qos_common import WatchdogLimits, watchdog_limit_problems

if TYPE_CHECKING:
    from fabgen.plan.model import ClassIntent, FabricPlan, Switch, SwitchPort

WATCHDOG = WatchdogLimits(
    "EOS", (10, 60_000), (10, 60_000), (5, 30_000), 10, ("drop",),
    "EOS takes timeout and recovery-time 0.01-60 s in 0.01 s steps, polling 0.005-30 s and at most half the "
    "shorter of the two; its actions are drop, notify-only and errdisable, and only drop unblocks a stuck queue",
    poll_at_most_half=True)

ECMP = EcmpLimit("eos", "EOS", 600, "maximum-paths ... ecmp ...")
"""``maximum-paths`` and its ``ecmp`` bound in AVD's ``router_bgp`` schema (1-600)."""

PORT_FORM = re.compile(r"Ethernet[1-9][0-9]{0,2}(/[1-9][0-9]?){0,2}")


def interface_speed(switch: Switch, port: SwitchPort) -> str:
    """``400g-8``: the link speed over as many lanes of the port's native SerDes rate as it needs."""
    return _speed_token(switch.speed, port.speed, len(port.lanes))


def _speed_token(native: int, speed: int, lanes: int) -> str:
    """:func:`interface_speed` of a port of ``lanes`` lanes at ``speed`` on a switch of ``native`` speed."""
    if lanes and native and (speed * lanes) % native == 0:
        used = speed * lanes // native
        if used >= 1:
            return f"{speed}g-{used}"
    return f"{speed}g"


def _shapes(ports: tuple[SwitchPort, ...]) -> set[tuple[int, int]]:
    """Every (speed, lane count) among ``ports``: ints read by C loops, one speed and one width on most switches,
    where pairing them port by port would make and hash a tuple per port."""
    speeds, widths = set(map(_SPEED, ports)), set(map(len, map(_LANES, ports)))
    if len(speeds) == 1 or len(widths) == 1:  # every pair of the two sets occurs
        return {(speed, width) for speed in speeds for width in widths}
    return set(zip(map(_SPEED, ports), map(len, map(_LANES, ports)), strict=True))


_SPEED = attrgetter("speed")
_LANES = attrgetter("lanes")


def plan_limits(plan: FabricPlan) -> list[Problem]:
    eos = [s for s in plan.switches if s.os == "eos"]
    if not eos:
        return []
    problems = watchdog_limit_problems(plan, "eos", WATCHDOG)
    problems += cable_port_problems(plan, "eos", PORT_FORM, "Ethernet1/1")
    problems += load_balancing_problems(plan, eos)
    problems += ECMP.plan_problems(plan.spec, plan.source, eos)
    seen_policies: set[tuple[str | int, ...]] = set()
    seen_speeds: set[tuple[str, str]] = set()
    for switch in eos:
        if switch.qos_path not in seen_policies:
            seen_policies.add(switch.qos_path)
            problems += _shared_queues(plan, switch)
            problems += _ecn_thresholds(plan, switch)
        # A port's speed token depends only on its speed, its lane count and its switch's speed: a switch
        # whose (tier, token)s were all judged on an earlier switch has nothing new to say, and most have
        # none (123k ports at 24k GPUs, a handful of shapes). Its shapes are read by C loops; a switch
        # with a new token gets the port-by-port pass below, which names its first port of that token.
        ports = switch.ports
        if all((switch.tier, _speed_token(switch.speed, speed, lanes)) in seen_speeds
               for speed, lanes in _shapes(ports)):
            continue
        for port in ports:
            token = interface_speed(switch, port)
            if (switch.tier, token) in seen_speeds:
                continue
            seen_speeds.add((switch.tier, token))
            why = speed_problem(token)
            if why is not None:
                problems.append(spec_problem(
                    plan.source, f"{switch.name} {port.name} (to {port.peer_device}): {why}",
                    ("fabric", "tiers", switch.tier, "speed")))
    return problems


def _shared_queues(plan: FabricPlan, switch: Switch) -> list[Problem]:
    """EOS schedules per tx-queue: two classes on one queue cannot keep their own weights or ECN."""
    by_queue: dict[int, list[str]] = {}
    for c in switch.qos.classes:
        by_queue.setdefault(c.queue, []).append(c.name)
    return [spec_problem(plan.source, f"classes {', '.join(names)} share egress queue {queue} on EOS "
                                      f"({switch.name} and the switches that share its policy); EOS schedules "
                                      "per tx-queue, so each class needs its own queue",
                         (*switch.qos_path, "classes"))
            for queue, names in sorted(by_queue.items()) if len(names) > 1]


def _ecn_thresholds(plan: FabricPlan, switch: Switch) -> list[Problem]:
    """ECN thresholds EOS's ``random-detect ecn`` would refuse, at the spec's ``ecn`` field.

    The renderer writes them in ``bytes`` exactly as planned, and the output
    check (:mod:`fabgen.targets.eos.syntax`) allows 1 to
    :data:`~fabgen.targets.eos.syntax.ECN_THRESHOLD_MAX`; checking the same
    bound here keeps ``validate`` from passing a spec that ``generate`` refuses.
    The spec already keeps min >= 1, min < max and probability 1-100.
    """
    return [spec_problem(plan.source, f"class {c.name}: ECN {field} {value} bytes is above EOS's "
                                      f"{ECN_THRESHOLD_MAX} (random-detect ecn thresholds 1-{ECN_THRESHOLD_MAX} "
                                      f"bytes; {switch.name} and the switches that share its policy)",
                         (*switch.qos_path, "classes", c.name, "ecn", field))
            for c in switch.qos.classes for field, value in _ecn_bytes(c) if value > ECN_THRESHOLD_MAX]


def _ecn_bytes(c: ClassIntent) -> tuple[tuple[str, int], ...]:
    """(spec field, bytes) of the class's ECN thresholds; none for a class without ECN."""
    if c.ecn_min is None or c.ecn_max is None:
        return ()
    return ("min", c.ecn_min), ("max", c.ecn_max)


def load_balancing_problems(plan: FabricPlan, eos: list[Switch]) -> list[Problem]:
    """``spray`` has no EOS command; ``dlb`` only where the platform has ``load-balance distribution dynamic``.

    Refused at ``fabric.load_balancing.mode`` rather than rendered as plain ECMP:
    a fabric planned for per-packet or load-aware balancing that silently hashes
    flows is the failure this check exists to prevent.
    """
    mode = plan.spec.fabric.load_balancing.mode
    where = ("fabric", "load_balancing", "mode")
    if mode == "spray":
        return [spec_problem(plan.source, "load-balancing mode spray cannot be configured on EOS (no per-packet "
                                          "spraying of routed ECMP in EOS); use dlb on a platform that has it, "
                                          "or ecmp", where)]
    if mode == "dlb":
        lacking = sorted({f"{s.model}{f' ({s.asic})' if s.asic else ''}" for s in eos
                          if not features(s.model, s.asic)[1]})
        if lacking:
            return [spec_problem(plan.source, f"load-balancing mode dlb: EOS has 'ip hardware fib load-balance "
                                              f"distribution dynamic' only on Tomahawk 4/5 platforms "
                                              f"(fabgen.platforms), not on {', '.join(lacking)}; "
                                              "use ecmp (with roce_qp_hash on Jericho platforms)", where)]
    return []
