"""slurm/topology.conf: read by the real slurmctld (Debian's 22.05) and compared with the plan."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from slurm_support import hostnames, require_slurm, show_topology, slurmctld

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.targets.placement import placement
from fabgen.targets.slurm.topology import check, hostlist, topology_conf
from tests.helpers import example

_FIELD = re.compile(r"(\w+)=(\S+)")


def _plan(name: str) -> FabricPlan:
    return plan_fabric(load_spec(example(name)))


def _expected(plan: FabricPlan) -> dict[str, tuple[int, set[str], set[str]]]:
    """Switch -> (level, every node below it, its child switches), as scontrol reports them."""
    tree = placement(plan)
    out: dict[str, tuple[int, set[str], set[str]]] = {}
    for group, hosts in tree.groups.items():
        out[group] = (0, set(hosts), set())
    top_children = set(tree.groups)
    if tree.tiers == 3:
        top_children = set(tree.pods)
        for pod, groups in tree.pods.items():
            out[pod] = (1, {h for g in groups for h in tree.groups[g]}, set(groups))
    out["fabric"] = (2 if tree.tiers == 3 else 1, set(tree.host_group), top_children)
    return out


def _parsed(text: str, env: dict[str, str]) -> dict[str, tuple[int, set[str], set[str]]]:
    out = {}
    for line in text.splitlines():
        fields = dict(_FIELD.findall(line))
        if "SwitchName" not in fields:
            continue
        nodes = set(hostnames(fields["Nodes"], env)) if "Nodes" in fields else set()
        switches = set(hostnames(fields["Switches"], env)) if "Switches" in fields else set()
        out[fields["SwitchName"]] = (int(fields["Level"]), nodes, switches)
    return out


@pytest.mark.parametrize("name", ["lab", "llama3-24k"])
def test_slurmctld_reads_the_tree_the_plan_has(name: str, tmp_path: Path) -> None:
    require_slurm()
    plan = _plan(name)
    with slurmctld(tmp_path / "slurm", topology_conf(plan), hostlist(h.name for h in plan.hosts)) as env:
        shown = show_topology(env)
        assert _parsed(shown, env) == _expected(plan)
    if name == "llama3-24k":  # every host under exactly one leaf group of 32, 4 groups per pod, 24 pods
        tree = placement(plan)
        assert len(tree.groups) == 96 and {len(h) for h in tree.groups.values()} == {32}
        assert len(tree.pods) == 24 and not tree.unplaced


def test_hostlist_expands_back_in_slurm(tmp_path: Path) -> None:
    require_slurm()
    names = ["gt00001", "gt00002", "gt00003", "gt00005", "gt0007", "gt00008", "x", "n9", "n10", "n11",
             "a.b-1", "a.b-2", "rack1-node01", "rack1-node02", "rack2-node01", "gt00004"]
    with slurmctld(tmp_path / "slurm", "SwitchName=s Nodes=x\n", "x") as env:
        assert hostnames(hostlist(names), env) == names


def test_hostlist_compresses_runs() -> None:
    assert hostlist(["gt00001", "gt00002", "gt00003"]) == "gt[00001-00003]"
    assert hostlist(["n1", "n2", "n4", "n10", "n11"]) == "n[1-2,4],n[10-11]"
    assert hostlist(["b", "a1", "a3"]) == "b,a[1,3]"
    assert hostlist(["a2", "a1"]) == "a2,a1"  # order kept: Slurm would sort a bracket


def test_a_host_without_a_cabled_nic_is_kept_apart() -> None:
    """A spec cannot say it (validation refuses a host with every NIC out of service); a plan built by hand can."""
    import dataclasses

    lab = _plan("lab")
    hosts = tuple(dataclasses.replace(h, nics=tuple(dataclasses.replace(n, in_service=False) for n in h.nics))
                  if h.name == "lab02" else h for h in lab.hosts)
    plan = dataclasses.replace(lab, hosts=hosts)
    text = topology_conf(plan)
    assert "SwitchName=unplaced Nodes=lab02\n" in text
    assert "SwitchName=p00-lg01 Nodes=lab[01,03-04]\n" in text
    assert check("slurm/topology.conf", text) == []


def test_three_tier_pods_sit_between_groups_and_fabric() -> None:
    text = topology_conf(_plan("llama3-24k"))
    assert "SwitchName=p00 Switches=p00-lg[01-04]\n" in text
    assert text.endswith("SwitchName=fabric Switches=p[00-23]\n")


def test_check_refuses_what_slurm_would_misread() -> None:
    assert check("t", "SwitchName=a Nodes=x\nSwitchName=a Nodes=y\n")[0].message == "switch a defined twice"
    assert check("t", "SwitchName=a Nodes=x y\n")
    assert check("t", "Nodes=x\n")
