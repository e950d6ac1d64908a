"""``cabling.csv``: the planned cabling, one row per link, for the DC team and for lint --wiring."""

from __future__ import annotations

import csv
import io

from fabgen.plan import FabricPlan
from fabgen.targets.base import RenderContext, Target
from fabgen.wiring import CABLING_COLUMNS


def cabling_csv(plan: FabricPlan) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CABLING_COLUMNS)
    for link in plan.links:
        writer.writerow([link.a_device, link.a_port, link.b_device, link.b_port, link.role,
                         "" if link.rail is None else link.rail, f"{link.speed}G"])
    return out.getvalue()


def _render(context: RenderContext, plan: FabricPlan) -> dict[str, str]:
    return {"cabling.csv": cabling_csv(plan)}


TARGET = Target(name="cabling", scope="cluster", summary="planned cabling, one row per link", render=_render)
