"""EOS's speed limit judges each port shape once: the same refusals as a judgement of every port.

``plan_limits`` skips a switch whose (tier, speed token)s an earlier switch already had. These tests plant
bad speeds and lane counts on ports past the first switch of their tier, on switches with mixed shapes, and
compare every refusal with the plain port-by-port pass (``_every_port`` below, the check as first written).
"""

from __future__ import annotations

import dataclasses

import pytest

from fabgen.errors import Problem
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan.model import FabricPlan, Switch, SwitchPort
from fabgen.source import spec_problem
from fabgen.targets.eos import limits
from fabgen.targets.eos.syntax import speed_problem
from tests.helpers import example


def _every_port(plan: FabricPlan) -> list[Problem]:
    """The speed refusals of every port of every EOS switch, first port of each (tier, token) named."""
    seen: set[tuple[str, str]] = set()
    out = []
    for switch in plan.switches:
        if switch.os != "eos":
            continue
        for port in switch.ports:
            token = limits.interface_speed(switch, port)
            if (switch.tier, token) in seen:
                continue
            seen.add((switch.tier, token))
            why = speed_problem(token)
            if why is not None:
                out.append(spec_problem(plan.source, f"{switch.name} {port.name} (to {port.peer_device}): {why}",
                                        ("fabric", "tiers", switch.tier, "speed")))
    return out


def _speed_problems(plan: FabricPlan) -> list[Problem]:
    return [p for p in limits.plan_limits(plan) if "speed" in p.message and " (to " in p.message]


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return plan_fabric(load_spec(example("lab")))


def _planted(plan: FabricPlan, changes: dict[tuple[int, int], dict[str, object]]) -> FabricPlan:
    """``plan`` with port ``j`` of switch ``i`` changed as ``changes[(i, j)]`` says."""
    switches: list[Switch] = list(plan.switches)
    for (i, j), change in changes.items():
        ports: list[SwitchPort] = list(switches[i].ports)
        ports[j] = dataclasses.replace(ports[j], **change)  # type: ignore[arg-type]
        switches[i] = dataclasses.replace(switches[i], ports=tuple(ports))
    return dataclasses.replace(plan, switches=tuple(switches))


def test_the_shipped_plan_has_no_speed_refusal(plan: FabricPlan) -> None:
    assert _speed_problems(plan) == _every_port(plan) == []


def _later_of_each_tier(plan: FabricPlan) -> list[int]:
    """Per tier the index of its last EOS switch: never the first, where a new token is met anyway."""
    last: dict[str, int] = {}
    for i, s in enumerate(plan.switches):
        if s.os == "eos" and s.ports:
            last[s.tier] = i
    return sorted(last.values())


@pytest.mark.parametrize("change", [
    {"speed": 300},                     # 300g-N: no SerDes rate
    {"speed": 123},                     # 123g: not an EOS speed
    {"lanes": (0, 1, 2)},               # a lane count the switch's ports never have
    {"speed": 300, "lanes": (0,)},
])
def test_a_bad_shape_on_a_later_switch_is_refused(plan: FabricPlan, change: dict[str, object]) -> None:
    later = _later_of_each_tier(plan)
    assert len(later) >= 2
    for i in later:
        planted = _planted(plan, {(i, len(plan.switches[i].ports) - 1): change})
        expected = _every_port(planted)
        assert _speed_problems(planted) == expected
        if change.get("speed") in (300, 123):
            assert expected and plan.switches[i].name in expected[0].message


def test_mixed_shapes_on_one_switch(plan: FabricPlan) -> None:
    """Two speeds and two widths on one switch, paired port by port: only one pair is bad."""
    i = _later_of_each_tier(plan)[-1]
    ports = plan.switches[i].ports
    assert len(ports) >= 3
    width = len(ports[0].lanes)
    # speed 300 over the usual width is bad (300g-N), but 300 over no lanes... also bad; pair a good odd speed
    # with an odd width and a bad speed with the usual width, so that only the zip of the two says which.
    planted = _planted(plan, {(i, 1): {"speed": 100, "lanes": tuple(range(width // 2 or 1))},
                              (i, 2): {"speed": 300}})
    expected = _every_port(planted)
    assert expected
    assert _speed_problems(planted) == expected


def test_every_switch_of_a_tier_bad_names_the_first(plan: FabricPlan) -> None:
    changes = {(i, j): {"speed": 300} for i, s in enumerate(plan.switches) if s.os == "eos"
               for j in range(len(s.ports))}
    planted = _planted(plan, changes)
    expected = _every_port(planted)
    assert len(expected) >= 2
    assert _speed_problems(planted) == expected
