"""The floor of ``cabling``: one comma-joined row per planned link, no csv module (the 24k needs no quoting)."""

from __future__ import annotations

from fabgen.plan import FabricPlan
from fabgen.wiring import CABLING_COLUMNS


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{cabling.csv: text}`` like the ``cabling`` target."""
    rows = [f"{k.a_device},{k.a_port},{k.b_device},{k.b_port},{k.role},{'' if k.rail is None else k.rail},{k.speed}G"
            for k in plan.links]
    return {"cabling.csv": "\n".join([",".join(CABLING_COLUMNS), *rows]) + "\n"}
