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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan
    from fabgen.targets.mlx5.parse import NicPlan

NIC_TARGET = "nic-qos"


@dataclass(frozen=True)
class DeployedNicPlan:
    """One host's collected plan file: both parses when it differs from fabgen's text, or why it was not read."""

    host: str
    file: str
    found: NicPlan | None = None
    expected: NicPlan | None = None
    problem: str = ""
    """Why the file was not compared (a link, a plan the script refuses); the message is redacted."""


def read_nic_plans(base: Path, plan: FabricPlan) -> tuple[tuple[str, ...], tuple[DeployedNicPlan, ...]]:
    """The planned hosts the tree has a ``roce-nic.conf`` for (collected, for FG503), and each of those plans that
    is not fabgen's text, in name order."""
    from fabgen.lint.deployed import _is_dir, _read, redact, render_collected
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
        return present, tuple(DeployedNicPlan(name, str(base / plan_path(name)), problem=why) for name in present)
    out = []
    for name in present:
        rel = plan_path(name)
        path = str(base / rel)
        try:
            text = _read(base / rel, base)
        except FabgenError as exc:
            out.append(DeployedNicPlan(name, path, problem="not read: " + "; ".join(
                redact(p.message, set()) for p in exc.problems[:2])))
            continue
        own = rendered.get(rel)
        if own is None or text == own:
            continue
        try:
            expected = parse_nic_plan(own)
        except ValueError as exc:  # a template overlay that writes what the script refuses
            out.append(DeployedNicPlan(name, path, problem=f"not compared: fabgen cannot read its own {rel} back: "
                                                           f"{exc}"))
            continue
        try:
            found = parse_nic_plan(text)
        except ValueError as exc:
            known = {name, *expected.settings, *expected.nics}
            out.append(DeployedNicPlan(name, path, problem="roce-nic.sh refuses it: " + redact(str(exc), known)))
            continue
        out.append(DeployedNicPlan(name, path, found, expected))
    return present, tuple(out)
