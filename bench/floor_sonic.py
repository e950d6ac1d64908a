"""The floor of ``sonic``: each SONiC switch's CONFIG_DB tables (:func:`~fabgen.targets.sonic.config_db.config_db`)
and the one ``json.dumps`` the target writes them with, no check.

The file is JSON of those dicts, so building them and dumping once is the plainest honest way to its bytes; the
target adds only its output check (the text read back, then fabgen's CONFIG_DB rules).
"""

from __future__ import annotations

import json

from fabgen.plan import FabricPlan
from fabgen.targets.sonic.config_db import config_db


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``switches/NAME/config_db.json`` of every SONiC switch, like the ``sonic`` target (without its check)."""
    return {f"switches/{s.name}/config_db.json": json.dumps(config_db(plan, s), indent=4, sort_keys=True) + "\n"
            for s in plan.switches if s.os == "sonic"}
