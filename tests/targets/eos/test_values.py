"""The values read from the plan (:mod:`fabgen.targets.eos.values`) are the structured config's, and its key
groups only switches whose config shape is one text.

The target fills every switch but the first of a key from these values, and
only the first is compared with a full render; so these tests compare every
switch of several plans: values against :func:`fabgen.targets.eos.fill.slotted`,
the shape texts within a key, and the target's files against the full render.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import random
from collections import defaultdict
from typing import Any

import pytest
from conftest import EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

import fabgen.pipeline as pipeline
from fabgen.natural import natural_key
from fabgen.plan import FabricPlan
from fabgen.plan.model import BgpNeighbor
from fabgen.targets.environment import environment
from fabgen.targets.eos.config import TEMPLATE, eos_config, render_eos
from fabgen.targets.eos.fill import slotted
from fabgen.targets.eos.session import config_body, render_session_parts, resets, session_name, session_path
from fabgen.targets.eos.text import by_address, config_text, config_texts
from fabgen.targets.eos.values import PlanValues

LAB = EXAMPLES / "lab" / "spec.yaml"


def _plan(change: Any = None) -> FabricPlan:
    data = YAML(typ="safe").load(LAB.read_text())
    if change:
        data = copy.deepcopy(data)
        change(data)
    out = io.StringIO()
    YAML(typ="safe").dump(data, out)
    return pipeline.plan_fabric(pipeline.load_spec(out.getvalue()))


def _spine_override(data: dict[str, Any]) -> None:
    qos = copy.deepcopy(data["qos"])
    qos["classes"]["roce"]["ecn"] = {"min": "300KB", "max": "3000KB", "probability": 7}
    qos["mtu"] = 9214
    data["fabric"]["switch_overrides"] = [{"match": "spine-*", "qos": qos}]


def _out_of_service(data: dict[str, Any]) -> None:
    data["hosts"][0]["overrides"] = {data["hosts"][0]["name"].format(index=1): {"nics_out_of_service": ["mlx5_1"]}}


def _blank_texts(plan: FabricPlan) -> FabricPlan:
    """Some leaves with a port and a neighbour whose descriptions clean to nothing: the shapes without them."""
    switches = list(plan.switches)
    for at in range(0, len(switches), 2):
        s = switches[at]
        ports = tuple(dataclasses.replace(p, description="   ") if n == 1 else p for n, p in enumerate(s.ports))
        bgp = s.bgp and dataclasses.replace(s.bgp, neighbors=tuple(
            dataclasses.replace(nb, description="\t") if n == 0 else nb for n, nb in enumerate(s.bgp.neighbors)))
        switches[at] = dataclasses.replace(s, ports=ports, bgp=bgp)
    return dataclasses.replace(plan, switches=tuple(switches))


PLANS = {
    "lab": lambda: _plan(),
    "spine-override": lambda: _plan(_spine_override),
    "out-of-service": lambda: _plan(_out_of_service),
    "sand-spines": lambda: _plan(lambda d: d["fabric"]["tiers"]["spine"].__setitem__("model", "7800R3-36D")),
    "dlb": lambda: _plan(lambda d: d["fabric"]["load_balancing"].__setitem__("mode", "dlb")),
    "blank-texts": lambda: _blank_texts(_plan()),
}


@pytest.fixture(scope="module", params=sorted(PLANS))
def plan(request: pytest.FixtureRequest) -> FabricPlan:
    return PLANS[request.param]()


def _eos(plan: FabricPlan) -> list[Any]:
    return [s for s in plan.switches if s.os == "eos"]


def test_values_are_the_structured_configs(plan: FabricPlan) -> None:
    values = PlanValues(plan)
    for switch in _eos(plan):
        assert values.key_and_values(switch)[1] == slotted(eos_config(plan, switch))[1], switch.name


def test_one_key_is_one_shape(plan: FabricPlan) -> None:
    env = environment(None)
    values = PlanValues(plan)
    shapes: dict[Any, set[str]] = defaultdict(set)
    for switch in _eos(plan):
        shapes[values.key_and_values(switch)[0]].add(env.get_template(TEMPLATE).render(
            eos=slotted(eos_config(plan, switch))[0]))
    assert all(len(texts) == 1 for texts in shapes.values())
    assert len(shapes) > 1


def test_the_targets_files_are_the_full_render(plan: FabricPlan) -> None:
    env = environment(None)
    files = pipeline.render_fabric(plan, targets=["eos"])
    for switch in _eos(plan):
        config = eos_config(plan, switch)
        cfg = render_eos(env, plan, switch)
        prologue = resets([p.name for p in config.qos_profiles], config.mmu.name if config.mmu else None,
                          [i.name for i in config.ethernet_interfaces] + [config.loopback.name],
                          config.router_bgp is not None)
        assert files[f"switches/{switch.name}.cfg"] == cfg
        assert files[session_path(switch.name)] == render_session_parts(
            env, config.title, session_name(cfg), prologue, config_body(cfg))


def test_a_24k_sample_is_the_full_render() -> None:
    """A sample of the 24k fabric's switches (all of them would take a full render each): leaves and spines."""
    plan = pipeline.plan_fabric(pipeline.load_spec(EXAMPLES / "llama3-24k" / "spec.yaml"))
    sample = random.Random(5).sample(_eos(plan), 40)
    env = environment(None)
    values = PlanValues(plan)
    for switch in sample:
        assert values.key_and_values(switch)[1] == slotted(eos_config(plan, switch))[1]
    files = pipeline.render_fabric(plan, targets=["eos"], devices=[s.name for s in sample])
    for switch in sample:
        assert files[f"switches/{switch.name}.cfg"] == render_eos(env, plan, switch)


_OCTETS = st.one_of(st.integers(0, 255).map(str), st.sampled_from(["0", "00", "010", "256", "999", "1"]))
_ADDRESSES = st.one_of(st.tuples(_OCTETS, _OCTETS, _OCTETS, _OCTETS).map(".".join),
                       st.sampled_from(["10.0.0", "fe80::1", "10.0.0.1.2", ""]))


@settings(max_examples=300, deadline=None)
@given(st.lists(_ADDRESSES, max_size=12))
def test_neighbours_sort_as_natural_keys_sort_them(addresses: list[str]) -> None:
    neighbors = tuple(BgpNeighbor(a, 1, f"p{n}", f"d{n}", "x") for n, a in enumerate(addresses))
    assert by_address(neighbors) == sorted(neighbors, key=lambda n: natural_key(n.address))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.text("ab c\n\r\t?:/-_", max_size=8), st.text("x", min_size=238, max_size=243))))
def test_config_texts_is_config_text_of_each(values: list[str]) -> None:
    assert config_texts(values) == [config_text(v) for v in values]
