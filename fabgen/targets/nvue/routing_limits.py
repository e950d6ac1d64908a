"""What Cumulus NVUE cannot do of the routing and load-balancing plan, refused at the spec's line.

The limits are NVIDIA's (Cumulus Linux user guide, "Equal Cost Multipath Load
Sharing", section Adaptive Routing; NVUE command reference for the ranges).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.source import spec_problem
from fabgen.targets.ecmp_limits import EcmpLimit

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan, Switch

ECMP = EcmpLimit("cumulus", "NVUE", 128, "multipaths ebgp")
"""``multipaths ebgp 1-128``."""
AR_SPEEDS = (200, 400)
"""Adaptive routing runs on Spectrum-4 links at 400G and 200G (not 800G)."""


def spectrum4(switch: Switch) -> bool:
    """Spectrum-4: the spec's ``asic``, else the model (SN5000 series: SN5400, SN5600)."""
    if switch.asic:
        return switch.asic.lower().replace("-", "") == "spectrum4"
    return switch.model.upper().startswith(("SN5", "MSN5"))


def routing_limit_problems(plan: FabricPlan) -> list[Problem]:
    cumulus = [s for s in plan.switches if s.os == "cumulus"]
    if not cumulus:
        return []
    problems: list[Problem] = []
    mode = plan.spec.fabric.load_balancing.mode
    where = ("fabric", "load_balancing", "mode")
    if mode == "dlb":
        problems.append(spec_problem(
            plan.source, "load-balancing mode dlb cannot be configured on Cumulus NVUE: its adaptive routing is "
                         "per packet (use spray, with NCCL_IB_ADAPTIVE_ROUTING=1 on the hosts) and it has no "
                         "load-aware per-flow mode; or use ecmp", where))
    if mode == "spray":
        older = sorted({f"{s.model}{f' ({s.asic})' if s.asic else ''}" for s in cumulus if not spectrum4(s)})
        if older:
            problems.append(spec_problem(
                plan.source, f"load-balancing mode spray is NVUE adaptive routing, which Cumulus Linux supports on "
                             f"Spectrum-4 switches only, not on {', '.join(older)}", where))
        speeds = sorted({p.speed for s in cumulus for p in s.ports
                         if p.peer_kind == "switch" and p.speed not in AR_SPEEDS})
        if speeds:
            problems.append(spec_problem(
                plan.source, f"load-balancing mode spray: adaptive routing runs on 200G and 400G links only, and "
                             f"this fabric has switch links at {', '.join(f'{v}G' for v in speeds)}", where))
    problems += ECMP.plan_problems(plan.spec, plan.source, cumulus)
    return problems


