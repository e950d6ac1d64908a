"""slurm and k8s-labels read one placement tree per render run, and write what each would write alone."""

from __future__ import annotations

import pytest

import fabgen.targets.placement
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.k8s.labels import SCRIPT_PATH, YAML_PATH, label_script, node_labels, node_labels_yaml
from fabgen.targets.placement import placement
from fabgen.targets.slurm.topology import PATH, topology_conf
from tests.helpers import example


@pytest.mark.parametrize("name", ["lab", "cumulus-pod"])
def test_one_tree_for_both_targets_same_files(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_fabric(load_spec(example(name)))
    alone = {PATH: topology_conf(plan), YAML_PATH: node_labels_yaml(plan), SCRIPT_PATH: label_script(plan)}
    made = []

    def counted(p: object) -> object:
        made.append(p)
        return placement(p)  # type: ignore[arg-type]

    monkeypatch.setattr(fabgen.targets.placement, "placement", counted)
    files = render_fabric(plan, targets=["slurm", "k8s-labels"])
    assert files == alone
    assert made == [plan]


def test_hosts_of_a_group_share_labels_equal_to_their_own() -> None:
    plan = plan_fabric(load_spec(example("cumulus-pod")))
    tree = placement(plan)
    nodes, _ = node_labels(plan, tree)
    by_group: dict[str, dict[str, str]] = {}
    for host in plan.hosts:
        labels = nodes[host.name.lower()]
        group = tree.host_group[host.name]
        assert labels["fabric.topograph.run/tier-0"] == group == labels["network.topology.nvidia.com/leaf"]
        assert by_group.setdefault(group, labels) is labels
    assert len(by_group) == len(tree.groups)
