"""Read the NIC plan files (``hosts/NAME/roce-nic.conf``) of a deployed tree, and fabgen's render of them, for FG507.

A host's ``roce-nic.conf`` is what ``roce-nic.sh`` applies to its mlx5 NICs at
every boot: trust, the DSCP map, PFC, ETS, ECN, DCQCN, the RoCE ToS and each
NIC's MTU. A copy collected from ``/etc/fabgen/`` that is not fabgen's render is
parsed both sides (:mod:`fabgen.targets.mlx5.parse`, the script's own rules);
:func:`fabgen.lint.rules.nic_drift.nic_plan_drift` compares the two. The render
is one ``render_files`` call for every collected host; a file with fabgen's
text is not parsed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError
from fabgen.lint.deployed import DeployedPair, _is_dir, read_collected, redact, render_collected

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan
    from fabgen.targets.mlx5.parse import NicPlan

NIC_TARGET = "nic-qos"


def read_nic_plans(base: Path, plan: FabricPlan) -> tuple[tuple[str, ...], tuple[DeployedPair[NicPlan], ...]]:
    """The planned hosts the tree has a ``roce-nic.conf`` for (collected, for FG503), and each of those plans that
    is not fabgen's text, in name order."""
    from fabgen.targets.mlx5.parse import parse_nic_plan
    from fabgen.targets.mlx5.scripts import plan_path

    if not _is_dir(base / "hosts", base):
        return (), ()
    planned = {h.name for h in plan.hosts if h.nic_intent is not None}
    present = tuple(sorted(name for name in planned if os.path.lexists(base / plan_path(name))))
    if not present:
        return (), ()
    try:
        rendered = render_collected(plan, NIC_TARGET, present, len(planned))
    except FabgenError as exc:
        why = "not compared: fabgen cannot render its NIC plan: " + "; ".join(p.message for p in exc.problems[:2])
        return present, tuple(DeployedPair(name, str(base / plan_path(name)), problem=why) for name in present)
    out: list[DeployedPair[NicPlan]] = []
    for name in present:
        rel = plan_path(name)
        path = str(base / rel)
        text, why = read_collected(base / rel, base)
        if text is None:
            out.append(DeployedPair(name, path, problem=why))
            continue
        own = rendered.get(rel)
        if own is None or text == own:
            continue
        try:
            expected = parse_nic_plan(own)
        except ValueError as exc:  # a template overlay that writes what the script refuses
            out.append(DeployedPair(name, path, problem=f"not compared: fabgen cannot read its own {rel} back: "
                                                           f"{exc}"))
            continue
        try:
            found = parse_nic_plan(text)
        except ValueError as exc:
            known = {name, *expected.settings, *expected.nics}
            out.append(DeployedPair(name, path, problem="roce-nic.sh refuses it: " + redact(str(exc), known)))
            continue
        out.append(DeployedPair(name, path, found, expected))
    return present, tuple(out)
