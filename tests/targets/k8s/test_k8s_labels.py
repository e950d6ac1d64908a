"""k8s/node-labels.yaml and label-nodes.sh: Topograph's keys, Kubernetes' syntax, the plan's tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ruamel.yaml import YAML

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.k8s.labels import LABEL_VALUE, NODE_NAME, check
from fabgen.targets.placement import placement
from tests.helpers import edited, example, require_tool


def _files(spec: object) -> dict[str, str]:
    return render_fabric(plan_fabric(spec), targets=["k8s-labels"])  # type: ignore[arg-type]


def test_every_host_gets_its_group_pod_and_fabric_24k() -> None:
    plan = plan_fabric(load_spec(example("llama3-24k")))
    text = render_fabric(plan, targets=["k8s-labels"])["k8s/node-labels.yaml"]
    doc = YAML(typ="safe", pure=True).load(text)
    assert doc["kind"] == "List" and len(doc["items"]) == len(plan.hosts) == 3072
    tree = placement(plan)
    for item, host in zip(doc["items"], plan.hosts, strict=True):
        assert item["kind"] == "Node" and item["metadata"]["name"] == host.name
        labels = item["metadata"]["labels"]
        group = tree.host_group[host.name]
        assert labels == {
            "fabric.topograph.run/tier-0": group, "fabric.topograph.run/tier-1": group.split("-")[0],
            "fabric.topograph.run/tier-2": "fabric",
            "network.topology.nvidia.com/leaf": group, "network.topology.nvidia.com/spine": group.split("-")[0],
            "network.topology.nvidia.com/core": "fabric",
        }
        assert all(LABEL_VALUE.match(v) and len(v) <= 63 for v in labels.values())
    # hosts sharing a tier-0 label share all eight leaves
    leaves = {h.name: frozenset(n.leaf for n in h.nics if n.leaf) for h in plan.hosts}
    by_group: dict[str, set[frozenset[str | None]]] = {}
    for host in plan.hosts:
        by_group.setdefault(tree.host_group[host.name], set()).add(leaves[host.name])
    assert all(len(sets) == 1 for sets in by_group.values())


def test_two_tier_has_no_core_and_names_are_lower_case() -> None:
    def rename(data: dict) -> None:  # type: ignore[type-arg]
        data["hosts"][0]["name"] = "Lab{index:02d}"
        data["hosts"][0]["overrides"] = {}

    files = _files(load_spec(edited(rename)))
    doc = YAML(typ="safe", pure=True).load(files["k8s/node-labels.yaml"])
    assert [i["metadata"]["name"] for i in doc["items"]] == ["lab01", "lab02", "lab03", "lab04"]
    assert set(doc["items"][0]["metadata"]["labels"]) == {
        "fabric.topograph.run/tier-0", "fabric.topograph.run/tier-1",
        "network.topology.nvidia.com/leaf", "network.topology.nvidia.com/spine"}


def test_a_host_that_cannot_be_a_node_name_is_left_out_with_a_comment() -> None:
    def underscore(data: dict) -> None:  # type: ignore[type-arg]
        data["hosts"][0]["name"] = "lab_{index:02d}"
        data["hosts"][0]["overrides"] = {}

    files = _files(load_spec(edited(underscore)))
    assert "# not a Kubernetes node name, left out: lab_01\n" in files["k8s/node-labels.yaml"]
    assert "items: []\n" in files["k8s/node-labels.yaml"]
    assert "label node" not in files["k8s/label-nodes.sh"]


def test_script_labels_each_node_once_with_a_fake_kubectl(tmp_path: Path) -> None:
    files = _files(load_spec(example("lab")))
    script = tmp_path / "label-nodes.sh"
    script.write_text(files["k8s/label-nodes.sh"])
    log = tmp_path / "calls"
    fake = tmp_path / "kubectl"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\n')
    fake.chmod(0o755)
    subprocess.run(["sh", str(script)], check=True, env={**os.environ, "KUBECTL": str(fake)})
    calls = log.read_text().splitlines()
    assert [c.split()[3] for c in calls] == ["lab01", "lab02", "lab03", "lab04"]
    assert calls[0] == ("label node --overwrite lab01 fabric.topograph.run/tier-0=p00-lg01 "
                        "fabric.topograph.run/tier-1=fabric network.topology.nvidia.com/leaf=p00-lg01 "
                        "network.topology.nvidia.com/spine=fabric")


def test_script_passes_shellcheck(tmp_path: Path) -> None:
    shellcheck = require_tool("shellcheck")
    script = tmp_path / "label-nodes.sh"
    script.write_text(_files(load_spec(example("lab")))["k8s/label-nodes.sh"])
    result = subprocess.run([shellcheck, "-s", "sh", str(script)], check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_check_refuses_bad_names_and_values() -> None:
    assert NODE_NAME.match("gt00001") and not NODE_NAME.match("gt_1") and not NODE_NAME.match("-a")
    bad = 'items:\n- metadata:\n    name: "Gt_1"\n    labels:\n      fabric.topograph.run/tier-0: "-x"\n'
    assert [p.line for p in check("k", bad)] == [3, 5]


def test_check_judges_each_distinct_line_once_but_locates_every_copy() -> None:
    good = '    labels:\n      fabric.topograph.run/tier-0: "p00-lg01"\n'
    bad = '      fabric.topograph.run/tier-1: "p00_"\n'
    text = good * 3 + bad + good + bad
    assert [p.line for p in check("k", text)] == [7, 10]
    assert check("k", good * 3) == []
