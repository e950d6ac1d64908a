"""What Cumulus NVUE accepts from a plan, checked at validation with the spec's line.

NVUE's watchdog has two knobs (polling interval, robustness) and always drops;
a restore time it cannot set is a comment in the output, not a refusal (the
queue comes back sooner than planned, never later).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.source import spec_problem
from fabgen.targets.cabling_limits import cable_port_problems
from fabgen.targets.nvue.parse import SPEEDS
from fabgen.targets.nvue.routing_limits import routing_limit_problems
from fabgen.targets.qos_common import WatchdogLimits, watchdog_limit_problems

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan

WATCHDOG = WatchdogLimits(
    "Cumulus NVUE", None, None, (100, 5_000), 1, ("drop",),
    "NVUE takes polling-interval 100-5000 ms; detection is polling-interval x robustness (1-1000); "
    "the action is always drop", detect_in_polls=(1, 1000))

PORT_FORM = re.compile(r"swp[1-9][0-9]{0,2}(s[0-9])?")


def plan_limits(plan: FabricPlan) -> list[Problem]:
    cumulus = [s for s in plan.switches if s.os == "cumulus"]
    if not cumulus:
        return []
    problems = [*watchdog_limit_problems(plan, "cumulus", WATCHDOG),
                *cable_port_problems(plan, "cumulus", PORT_FORM, "swp1"),
                *routing_limit_problems(plan)]
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
