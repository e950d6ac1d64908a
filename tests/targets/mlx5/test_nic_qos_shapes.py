"""``roce-nic.conf`` is rendered once per shape and filled in per host; its check judges each distinct line once.

Filling in must give the bytes of a full render for every host, an overlay that
computes on the host name must still be rendered per host, and a bad line in one
host's plan among many good ones is still reported.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EXAMPLES

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.plan import FabricPlan
from fabgen.targets.mlx5.plan_check import plan_problems
from fabgen.targets.mlx5.scripts import plan_path, render_nic_plan


@pytest.fixture(scope="module")
def plan() -> FabricPlan:
    return plan_fabric(load_spec(EXAMPLES / "lab" / "spec.yaml"))


def _full(plan: FabricPlan) -> dict[str, str]:
    """Every host's plan file rendered in full, one template render each: what filling in must equal."""
    files = {}
    for host in plan.hosts:
        if host.nic_intent is not None:
            mtus = {i.netdev: i.mtu for i in host.network.interfaces} if host.network is not None else {}
            files[plan_path(host.name)] = render_nic_plan(host.nic_intent, mtus)
    return files


def test_filled_in_plans_are_the_full_renders(plan: FabricPlan) -> None:
    files = render_fabric(plan, targets=["nic-qos"])
    assert len(files) > 2
    assert files == _full(plan)
    assert len(set(files.values())) == len(files)  # each names its own host


def test_an_overlay_that_computes_on_the_name_renders_per_host(plan: FabricPlan, tmp_path: Path) -> None:
    (tmp_path / "mlx5").mkdir()
    (tmp_path / "mlx5" / "roce-nic.conf.j2").write_text(
        "# {{ intent.host | upper }}\nFORMAT={{ plan_format }}\nHOST={{ intent.host }}\n")
    files = render_fabric(plan, targets=["nic-qos"], templates=tmp_path)
    for host in plan.hosts:
        if host.nic_intent is not None:
            assert files[plan_path(host.name)] == f"# {host.name.upper()}\nFORMAT=1\nHOST={host.name}\n"


@pytest.mark.parametrize("bad", ["HOST=lab01; reboot", "trust=dscp", "NIC=mlx5_0 $(id)"])
def test_a_bad_line_in_one_hosts_plan_is_found(plan: FabricPlan, bad: str) -> None:
    files = render_fabric(plan, targets=["nic-qos"])
    for path, text in files.items():  # every host warms the line cache first
        assert plan_problems(path, text) == []
    path, text = sorted(files.items())[len(files) // 2]
    lines = text.split("\n")
    lines.insert(5, bad)
    problems = plan_problems(path, "\n".join(lines))
    assert [(p.file, p.line, p.message) for p in problems] == [(path, 6, f"unexpected line {bad!r}")]
