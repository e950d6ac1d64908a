"""``cabling.csv``: the planned cabling, one row per link, for the DC team and for lint --wiring."""

from __future__ import annotations

from fabgen.plan import FabricPlan
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.csv_text import csv_text, plain_shape
from fabgen.wiring import CABLING_COLUMNS


def cabling_csv(plan: FabricPlan) -> str:
    """One row per link; the csv module's bytes (quoting included), by f-strings when nothing needs quoting.

    Each f-string row has the seven cells by construction, so one newline per
    row and an unquoted skeleton (:func:`~fabgen.targets.csv_text.plain_shape`)
    prove no cell held a character the csv writer would have quoted.
    """
    links = plan.links
    text = "\n".join([",".join(CABLING_COLUMNS), *(
        f"{k.a_device},{k.a_port},{k.b_device},{k.b_port},{k.role},{'' if k.rail is None else k.rail},{k.speed}G"
        for k in links)]) + "\n"
    if text.count("\n") == len(links) + 1 and plain_shape(text, len(CABLING_COLUMNS)):
        return text
    return csv_text(CABLING_COLUMNS, [(k.a_device, k.a_port, k.b_device, k.b_port, k.role,
                                       "" if k.rail is None else str(k.rail), f"{k.speed}G") for k in links])


def _render(context: RenderContext, plan: FabricPlan) -> dict[str, str]:
    return {"cabling.csv": cabling_csv(plan)}


TARGET = Target(name="cabling", scope="cluster", summary="planned cabling, one row per link", render=_render)
