"""Each target's devices come from the plan's one list of named devices: the same pairs, in plan order, as before."""

from __future__ import annotations

import dataclasses

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.base import every_device
from fabgen.targets.registry import devices_of, targets
from tests.helpers import example


@pytest.mark.parametrize("name", ["lab", "cumulus-pod", "sonic-pod"])
def test_every_target_renders_the_devices_its_predicate_chooses_in_plan_order(name: str) -> None:
    plan = plan_fabric(load_spec(example(name)))
    for target in targets():
        if target.devices is not None or target.scope not in ("switch", "host"):
            continue
        devices = plan.switches if target.scope == "switch" else plan.hosts
        expected = [(d.name, d) for d in devices if target.applies is every_device or target.applies(d)]
        assert devices_of(plan, target) == expected, target.name
        assert all(found[1] is device[1] for found, device in zip(devices_of(plan, target), expected, strict=True))


def test_a_caller_changing_its_list_changes_no_other_caller() -> None:
    plan = plan_fabric(load_spec(example("lab")))
    every_switch = next(t for t in targets() if t.scope == "switch" and t.applies is every_device)
    first = devices_of(plan, every_switch)
    first.clear()
    assert [name for name, _ in devices_of(plan, every_switch)] == [s.name for s in plan.switches] != []


def test_a_plan_made_from_another_names_its_own_devices() -> None:
    """``dataclasses.replace`` (the bench's sampled plans, the twin's) starts without the other plan's list."""
    plan = plan_fabric(load_spec(example("lab")))
    assert [n for n, _ in plan.named("switch")] == [s.name for s in plan.switches]
    fewer = dataclasses.replace(plan, switches=plan.switches[:1], hosts=plan.hosts[1:])
    assert fewer.named("switch") == ((plan.switches[0].name, plan.switches[0]),)
    assert [n for n, _ in fewer.named("host")] == [h.name for h in plan.hosts[1:]]
    assert len(plan.named("switch")) == len(plan.switches) > 1
