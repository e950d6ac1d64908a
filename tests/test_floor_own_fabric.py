"""The sonic and nvue floors write their target's bytes, on fabrics of their own that keep the 24k GPUs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from ruamel.yaml import YAML

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.targets.registry import select_targets
from fabgen.targets.render import render_files
from tests.helpers import ROOT, example

sys.path.insert(0, str(ROOT))
from bench import generate
from bench.floor_nvue import floor_files as nvue_floor
from bench.floor_sonic import floor_files as sonic_floor
from bench.rows import Row
from bench.run import _spec_text

CASES = (("sonic", "sonic-pod", sonic_floor), ("nvue", "cumulus-pod", nvue_floor))


@cache
def _plan(name: str) -> FabricPlan:
    return plan_fabric(load_spec(example(name)))


@pytest.mark.parametrize(("target", "pod", "floor"), CASES)
def test_the_floor_writes_the_targets_bytes(target: str, pod: str, floor: Callable[[FabricPlan], dict[str, str]]) \
        -> None:
    plan = _plan(pod)
    files = floor(plan)
    assert files and files == render_files(plan, [target])[0]


@pytest.mark.parametrize(("target", "pod", "floor"), CASES)
def test_a_sample_of_switches_renders_as_in_the_whole_plan(target: str, pod: str,
                                                           floor: Callable[[FabricPlan], dict[str, str]]) -> None:
    plan = _plan(pod)
    whole = render_files(plan, [target])[0]
    part = generate.sampled(plan, select_targets([target])[0], 3)
    assert len(part.switches) == 3 and len({s.tier for s in part.switches}) == 2
    files = render_files(part, [target])[0]
    assert files == floor(part) == {path: whole[path] for path in files}
    assert {path.split("/")[1] for path in files} == {s.name for s in part.switches}


@pytest.mark.parametrize(("scenario", "os", "example_name"),
                         (("sonic-24k", "sonic", "sonic-pod"), ("cumulus-24k", "cumulus", "cumulus-pod")))
def test_the_own_fabric_specs_keep_the_24k_gpus_on_the_pods_switches(scenario: str, os: str, example_name: str) \
        -> None:
    doc: Any = YAML(typ="safe").load(_spec_text(scenario)[1])
    base: Any = YAML(typ="safe").load((ROOT / "examples" / "llama3-24k" / "spec.yaml").read_text())
    pod: Any = YAML(typ="safe").load((example(example_name)).read_text())
    assert doc["hosts"] == base["hosts"] and doc["host_profiles"] == base["host_profiles"]
    assert set(doc["fabric"]["tiers"]) == {"leaf", "spine", "super_spine"}
    for tier in doc["fabric"]["tiers"].values():
        assert tier["os"] == os and tier["speed"] == "400G"
        assert {k: v for k, v in pod["fabric"]["tiers"]["leaf"].items() if k != "count"}.items() <= tier.items()


def test_own_fabric_rows_take_the_registrys_place(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    calls: list[tuple[str, ...]] = []

    def measured(spec: Any, *only: str) -> dict[str, tuple[float, float] | str]:
        calls.append(only)
        if only:
            return {only[0]: (3.0, 2.0)}
        return {"eos": (1.0, 2.0), "sonic": generate.OWN_FABRIC_NOTE, "cabling": "no floor written yet",
                "nvue": generate.OWN_FABRIC_NOTE}

    monkeypatch.setattr(generate, "_floors_in_process", measured)
    rows = generate.floor_rows(tmp_path / "24k.yaml", processes=2, tmp=tmp_path)
    assert [r.name.split(" within")[0] for r in rows] == [
        "24k eos", "24k sonic (SONiC switches; 32 of them rendered)", "24k cabling",
        "24k nvue (Cumulus switches; 4 of them rendered)"]
    assert rows[1].value == 1.5 and rows[1].ok and rows[1].measured.startswith("1.5x (3.00 s with every check")
    assert rows[2] == Row("24k cabling within 2x of its bytes-only floor", "no floor written yet", "<= 2x", None)
    assert calls == [(), (), ("sonic", "32"), ("sonic", "32"), ("nvue", "4"), ("nvue", "4")]
    assert (tmp_path / "sonic-24k.yaml").is_file() and (tmp_path / "cumulus-24k.yaml").is_file()
