"""FG6xx on plans a spec cannot produce: the rules judge the plan itself, not only the spec that made it.

The case files (``tests/data/lint/cases/FG60*.yaml``) cover what a spec can
cause; these cover a plan handed over by other code (the library API) with a
session or an ECMP width missing.
"""

from __future__ import annotations

import dataclasses

from lint_support import EXAMPLES

from fabgen.lint.context import LintContext
from fabgen.lint.rules import routing
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan


def _lab_with(name: str, **changes: object) -> tuple[LintContext, FabricPlan]:
    spec = load_spec(EXAMPLES / "lab" / "spec.yaml")
    fabric = plan_fabric(spec)
    switch = fabric.switch(name)
    assert switch.bgp is not None
    bgp = dataclasses.replace(switch.bgp, **changes)  # type: ignore[arg-type]
    switches = tuple(dataclasses.replace(s, bgp=bgp) if s.name == name else s for s in fabric.switches)
    edited = dataclasses.replace(fabric, switches=switches)
    return LintContext(spec, edited), edited


def test_a_session_missing_on_one_end_is_reported_at_that_port() -> None:
    fabric = plan_fabric(load_spec(EXAMPLES / "lab" / "spec.yaml"))
    neighbors = fabric.switch("leaf-r1-p00-01").bgp.neighbors  # type: ignore[union-attr]
    ctx, _ = _lab_with("leaf-r1-p00-01", neighbors=neighbors[1:])
    hits = list(routing.neighbor_missing(ctx))
    assert len(hits) == 1
    dropped = neighbors[0]
    assert f"leaf-r1-p00-01 {dropped.port}" in hits[0].message and dropped.address in hits[0].message
    assert hits[0].location.line > 0


def test_a_session_to_the_wrong_address_counts_as_missing() -> None:
    fabric = plan_fabric(load_spec(EXAMPLES / "lab" / "spec.yaml"))
    neighbors = fabric.switch("spine-01").bgp.neighbors  # type: ignore[union-attr]
    wrong = (dataclasses.replace(neighbors[0], address="10.99.0.1"), *neighbors[1:])
    ctx, _ = _lab_with("spine-01", neighbors=wrong)
    hits = list(routing.neighbor_missing(ctx))
    assert [h.message.split(" ")[:2] for h in hits] == [["spine-01", neighbors[0].port]]


def test_maximum_paths_below_uplinks_in_a_handed_over_plan() -> None:
    ctx, _ = _lab_with("leaf-r0-p00-01", maximum_paths=1)
    hits = list(routing.maximum_paths_below_uplinks(ctx))
    assert len(hits) == 1 and "maximum-paths 1 on leaf-r0-p00-01 uses 1 of 4 uplinks" in hits[0].message


def test_a_leaf_sharing_its_spines_asn_is_a_collision() -> None:
    spec = load_spec(EXAMPLES / "lab" / "spec.yaml")
    ctx, _ = _lab_with("leaf-r0-p00-01", asn=plan_fabric(spec).switch("spine-01").bgp.asn)  # type: ignore[union-attr]
    hits = list(routing.asn_collision(ctx))
    assert len(hits) == 1 and "leaf-r0-p00-01" in hits[0].message and "spine-01" in hits[0].message
