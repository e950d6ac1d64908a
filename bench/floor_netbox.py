"""The floor of ``netbox``: the target's own f-string rows (:func:`fabgen.targets.netbox.files.plain_lines`), joined.

The target writes the same joins when no cell needs quoting (every file of the
24k fabric), so this is the cost of the bytes alone, and the difference in time
is what the target adds to them: the counts that prove no cell needed the csv
writer's quoting, and its output check.
"""

from __future__ import annotations

from fabgen.plan import FabricPlan
from fabgen.targets.netbox.files import FILES, plain_lines


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{netbox/N-KIND.csv: text}`` like the ``netbox`` target (without its proof and output check)."""
    return {path: "\n".join([",".join(columns), *lines]) + "\n"
            for (path, _, columns), lines in zip(FILES, plain_lines(plan), strict=True)}
