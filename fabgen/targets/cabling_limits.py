"""Port names an explicit cable gives a switch, judged by that switch's OS.

Shared by the switch OS limits: each passes the form its OS names ports in,
and a cable naming another form is refused at its ``fabric.cabling`` line (the
renderer would otherwise meet a port it cannot configure).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.source import spec_problem

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan


def cable_port_problems(plan: FabricPlan, os: str, form: re.Pattern[str], example: str) -> list[Problem]:
    """A problem for each explicit cable end on a switch of ``os`` whose port does not match ``form``."""
    oses = {s.name: s.os for s in plan.switches}
    problems = []
    for index, cable in enumerate(plan.spec.fabric.cabling):
        for end in ("a", "b"):
            device, _, port = getattr(cable, end).partition(":")
            if oses.get(device) == os and not form.fullmatch(port):
                problems.append(spec_problem(
                    plan.source, f"{device} runs {os}, which has no port {port!r}: {os} names ports like {example}",
                    ("fabric", "cabling", index, end)))
    return problems
