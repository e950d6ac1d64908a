"""What SONiC accepts from a plan, checked at validation with the spec's line.

The watchdog ranges are SONiC's YANG model's (``sonic-pfcwd.yang``); a port a
cable names must be a SONiC port (``Ethernet<first lane>``), or the renderer
could not give it lanes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.targets.cabling_limits import cable_port_problems
from fabgen.targets.qos_common import WatchdogLimits, watchdog_limit_problems
from fabgen.targets.sonic.routing_limits import routing_limit_problems

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan

WATCHDOG = WatchdogLimits(
    "SONiC", (100, 5_000), (100, 60_000), (100, 1_000), 1, ("drop", "forward"),
    "SONiC's YANG takes detection_time 100-5000 ms, restoration_time 100-60000 ms and POLL_INTERVAL "
    "100-1000 ms, not above either", poll_at_most_timers=True)

PORT_FORM = re.compile(r"Ethernet(0|[1-9][0-9]{0,3})")


def plan_limits(plan: FabricPlan) -> list[Problem]:
    if not any(s.os == "sonic" for s in plan.switches):
        return []
    return [*watchdog_limit_problems(plan, "sonic", WATCHDOG),
            *cable_port_problems(plan, "sonic", PORT_FORM, "Ethernet0, Ethernet8 (the first lane)"),
            *routing_limit_problems(plan)]
