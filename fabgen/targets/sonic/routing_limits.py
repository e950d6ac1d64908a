"""What SONiC's CONFIG_DB cannot carry of the routing and load-balancing plan, refused at the spec's line.

Beside :mod:`fabgen.targets.sonic.routing` (which says why each table is
written as it is); :func:`routing_limit_problems` runs from ``limits.py``.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.source import spec_problem
from fabgen.targets.ecmp_limits import EcmpLimit

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan

ECMP = EcmpLimit("sonic", "SONiC", 256, "BGP_GLOBALS_AF.max_ebgp_paths")
"""``BGP_GLOBALS_AF.max_ebgp_paths`` range in sonic-bgp-global.yang."""
FRR_BFD_DEFAULT = (300, 3)
"""FRR's BFD transmit/receive interval (ms) and detect multiplier, what ``BGP_NEIGHBOR.bfd`` gets."""


def routing_limit_problems(plan: FabricPlan) -> list[Problem]:
    sonic = [s for s in plan.switches if s.os == "sonic"]
    if not sonic:
        return []
    fabric = plan.spec.fabric
    problems: list[Problem] = []
    mode = fabric.load_balancing.mode
    if mode != "ecmp":
        what = "per-packet spraying" if mode == "spray" else "dynamic (load-aware) ECMP member selection"
        problems.append(spec_problem(
            plan.source, f"load-balancing mode {mode} cannot be configured on SONiC: CONFIG_DB has no "
                         f"{what} (SWITCH_HASH only chooses the hashed fields); use ecmp",
            ("fabric", "load_balancing", "mode")))
    bfd = fabric.routing.bfd
    if fabric.routing.enabled and bfd is not None and bfd.enabled and (bfd.interval, bfd.multiplier) != FRR_BFD_DEFAULT:
        problems.append(spec_problem(
            plan.source, f"BFD {bfd.interval} ms x {bfd.multiplier} cannot be configured on SONiC: "
                         "BGP_NEIGHBOR only turns BFD on, at FRR's 300 ms x 3; use those values",
            ("fabric", "routing", "bfd")))
    problems += ECMP.plan_problems(plan.spec, plan.source, sonic)
    gateway, pool = fabric.addressing.mgmt_gateway, fabric.addressing.mgmt
    if gateway is not None and pool is not None:
        devices = len(plan.switches) + len(plan.hosts)
        last = pool.network_address + devices
        if gateway <= last:
            problems.append(spec_problem(
                plan.source, f"mgmt_gateway {gateway} is the management address of a device (devices get "
                             f"{pool.network_address + 1}-{ipaddress.IPv4Address(last)}); pick one above",
                ("fabric", "addressing", "mgmt_gateway")))
    return problems


