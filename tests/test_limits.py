"""Every documented limit is enforced, at its boundary, with a clear located message, before the costly work.

What "before" means is asserted by what did not run (no read, no alias expansion,
no host names expanded), not by the clock: speed is ``bench/``'s job.

| limit | value | past it |
|---|---|---|
| spec size | ``source.MAX_BYTES`` (16 MiB) | refused from ``stat`` before reading |
| YAML nodes written | ``source.MAX_SOURCE_NODES`` (250,000) | refused while parsing, at the node |
| YAML nesting | ``source.MAX_DEPTH`` (64) | refused while parsing, at the node |
| nodes after aliases | ``source.MAX_NODES`` (1,000,000) | refused before the document is expanded |
| hosts | ``references.MAX_HOSTS`` (200,000) | refused at the group that crosses it |
| host groups | 10,000 | refused at ``hosts`` |
| unit values | ``units.MAX_AMOUNT`` (2**53) | refused at the field |
| NCCL topology XML | 256 nodes (``nccl_topo_check.MAX_NODES``) | refused at the host profile |
"""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

import fabgen.bounded as bounded
import fabgen.source as source
from fabgen.errors import FabgenError, SpecError
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan.topology import topology_intent
from fabgen.source import MAX_BYTES, MAX_DEPTH, MAX_NODES, load_source
from fabgen.spec import validate_spec
from fabgen.spec.hosts import HostGroup
from fabgen.spec.references import MAX_HOSTS
from fabgen.targets.environment import environment
from fabgen.targets.nccl.topo import TEMPLATE, pci_rows
from fabgen.targets.nccl.topo_check import MAX_NODES as NCCL_MAX_NODES
from fabgen.targets.nccl.topo_check import check_topology_xml
from fabgen.units import MAX_AMOUNT
from tests.helpers import edited, example, never_called, run_cli

LAB = example("lab").read_text()


def refused(text: str, *needles: str) -> SpecError:
    with pytest.raises(SpecError) as caught:
        load_spec(text)
    message = "\n".join(caught.value.lines())
    for needle in needles:
        assert needle in message, message[:2000]
    return caught.value


# --------------------------------------------------------------------------- size

def test_spec_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MAX_BYTES + 1 is refused from stat (sparse file, never read); MAX_BYTES itself passes the size check."""
    over = tmp_path / "over.yaml"
    with over.open("wb") as handle:
        handle.truncate(MAX_BYTES + 1)
    with monkeypatch.context() as patch:
        patch.setattr(bounded.os, "read", never_called("os.read"))
        code, _, stderr = run_cli("generate", str(over), "-o", str(tmp_path / "out"))
    assert code == 2 and f"{MAX_BYTES}-byte limit" in stderr, stderr
    # exactly at the limit: read, then refused for what it says (a tab at 1:1), not for its size
    at = tmp_path / "at.yaml"
    at.write_bytes(b"\tversion: 1\n" + b"#" * (MAX_BYTES - 13) + b"\n")
    assert at.stat().st_size == MAX_BYTES
    code, _, stderr = run_cli("validate", str(at))
    assert code == 2 and "byte limit" not in stderr and f"{at}:1:1:" in stderr, stderr
    with pytest.raises(SpecError, match="larger than"):
        load_source("text", text="#" * (MAX_BYTES + 1))


# --------------------------------------------------------------------------- YAML structure

def test_nesting_limit() -> None:
    def nested(depth: int) -> str:  # the document itself is level 1, the mapping under x level 2, ...
        return "x: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"
    load_source("ok", text=nested(MAX_DEPTH))
    with pytest.raises(SpecError) as caught:
        load_source("deep", text=nested(MAX_DEPTH + 1))
    (problem,) = caught.value.problems
    assert f"nested deeper than {MAX_DEPTH} levels" in problem.message and (problem.line, problem.col) == (1, 3 + MAX_DEPTH)


def test_source_node_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted while parsing, so a huge flat list stops at the node that crosses it (small limit for speed)."""
    monkeypatch.setattr(source, "MAX_SOURCE_NODES", 1000)
    def items(count: int) -> str:  # the root mapping, key x, the list: 3 nodes, then one per item
        return "x:\n" + "- 1\n" * count
    load_source("ok", text=items(1000 - 3))
    with pytest.raises(SpecError) as caught:
        load_source("big", text=items(1000 - 2))
    (problem,) = caught.value.problems
    assert "more than 1000 YAML nodes" in problem.message and problem.line == 1 + (1000 - 2)


@pytest.mark.nightly
def test_source_node_limit_at_full_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real limit bounds time and memory: 2 MB of ``[1,1,...]`` (a million items) stops while composing."""
    text = "x: [" + "1," * (1024 * 1024) + "1]\n"
    monkeypatch.setattr(source, "_expanded_size", never_called("the alias count after composing"))
    with pytest.raises(SpecError, match=f"more than {source.MAX_SOURCE_NODES} YAML nodes"):
        load_source("flat", text=text)


def _alias_doc(items: int, copies: int) -> str:
    """A list of ``items`` scalars, aliased ``copies`` times: tiny text, large expansion."""
    return "x: &a [" + ",".join(["1"] * items) + "]\ny: [" + ",".join(["*a"] * copies) + "]\n"


def _expanded(items: int, copies: int) -> int:
    # root (1) + x (1 + items) + y (1 + copies * (1 + items)); mapping keys are not counted
    return 1 + (1 + items) + 1 + copies * (1 + items)


def test_alias_expansion_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    items = 999
    copies = (MAX_NODES - 3 - items) // (1 + items)
    assert _expanded(items, copies) <= MAX_NODES < _expanded(items, copies + 1)
    load_source("ok", text=_alias_doc(items, copies))  # expands to just under a million nodes
    monkeypatch.setattr(source, "_to_plain", never_called("alias expansion"))  # refused from the count alone
    with pytest.raises(SpecError) as caught:
        load_source("bomb", text=_alias_doc(items, copies + 1))
    (problem,) = caught.value.problems
    assert f"expands to {_expanded(items, copies + 1)} nodes" in problem.message and f"limit {MAX_NODES}" in problem.message


# --------------------------------------------------------------------------- hosts

def _groups(*counts: int) -> str:
    def edit(data: dict) -> None:  # type: ignore[type-arg]
        data["hosts"] = [{"profile": "lab-node", "count": n, "name": f"g{i}-{{index}}"} for i, n in enumerate(counts)]
    return edited(edit)


def test_host_limit() -> None:
    spec = load_spec(_groups(MAX_HOSTS // 2, MAX_HOSTS - MAX_HOSTS // 2))  # exactly MAX_HOSTS: valid
    assert sum(g.count or 0 for g in spec.hosts) == MAX_HOSTS
    error = refused(_groups(MAX_HOSTS // 2, MAX_HOSTS - MAX_HOSTS // 2 + 1), f"more than {MAX_HOSTS} hosts")
    assert [p.path for p in error.problems] == ["hosts[1].count"]
    refused(_groups(MAX_HOSTS + 1), f"less than or equal to {MAX_HOSTS}")


def test_host_limit_expands_no_names_past_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each group's count is capped alone, so full groups add up: 10,000 of them would be two billion
    names. The refusal expands at most MAX_HOSTS of them, in every check (the silent checks used to
    expand every group after the refusal: 4 million names, 9 s and 1.4 GB for 20 groups)."""
    expanded: list[int] = []
    original = HostGroup.host_names

    def counting(group: HostGroup) -> list[str]:
        names = original(group)
        expanded.append(len(names))
        return names

    monkeypatch.setattr(HostGroup, "host_names", counting)
    error = refused(_groups(MAX_HOSTS, MAX_HOSTS, MAX_HOSTS), f"more than {MAX_HOSTS} hosts")
    assert [p.path for p in error.problems] == ["hosts[1].count"]
    assert sum(expanded) <= MAX_HOSTS, expanded


def test_host_group_limit() -> None:
    doc = load_source(example("lab"))
    group = doc.data["hosts"][0]
    for count, ok in ((10_000, True), (10_001, False)):
        data = copy.deepcopy(doc.data)
        data["hosts"] = [dict(group, name=f"g{i}-{{index}}", overrides={}) for i in range(count)]
        data["hosts"][0]["overrides"] = group["overrides"]
        data["hosts"][0]["name"] = group["name"]
        if ok:
            validate_spec(dataclasses.replace(doc, data=data))
        else:
            with pytest.raises(SpecError, match="at most 10000 items") as caught:
                validate_spec(dataclasses.replace(doc, data=data))
            assert [p.path for p in caught.value.problems] == ["hosts"]


# --------------------------------------------------------------------------- values

def test_unit_value_limit() -> None:
    def speed(value: object) -> str:
        def edit(data: dict) -> None:  # type: ignore[type-arg]
            data["host_profiles"]["lab-node"]["nics"][0]["speed"] = value
        return edited(edit)
    load_spec(speed(f"{MAX_AMOUNT}G"))
    for value in (f"{MAX_AMOUNT + 1}G", "9" * 40 + "G", "9" * 400 + "T"):
        error = refused(speed(value), "link speed is too large")
        assert [p.path for p in error.problems] == ["host_profiles.lab-node.nics[0].speed"]


# --------------------------------------------------------------------------- NCCL topology file

def _profile_with_switches(switches: int) -> str:
    """One NUMA node, 64 GPUs and 8 backend NICs in NCCL's full mode, plus ``switches`` empty PCIe switches.

    NCCL counts 1 (<system>) + 1 (<cpu>) + 2 per GPU (<pci><gpu>) + 3 per backend NIC (<pci><nic><net>) + 1 per
    switch: 154 + switches.
    """
    def edit(data: dict) -> None:  # type: ignore[type-arg]
        profile = data["host_profiles"]["lab-node"]
        profile["cpus"] = [{"numa": 0, "arch": "x86_64", "vendor": "AuthenticAMD"}]
        profile["gpus"] = [{"index": i, "pci": f"0000:{i + 1:02x}:00.0", "numa": 0} for i in range(64)]
        profile["nics"] = [{"name": f"mlx5_{i}", "netdev": f"ens{i}np0", "pci": f"0000:{0x81 + i:02x}:00.0",
                            "numa": 0, "rail": i} for i in range(8)]
        profile["pcie_switches"] = [{"name": f"sw{i}", "numa": 0, "busid": f"ffff:{i // 8:02x}:{i % 8:02x}.0"}
                                    for i in range(switches)]
        data["hosts"][0]["overrides"] = {}
        data["fabric"]["rails"] = 8
        data["fabric"]["tiers"]["spine"] = {"os": "eos", "model": "7800R3", "ports": 576, "speed": "400G"}
        data["fabric"]["addressing"]["p2p"] = "10.10.0.0/23"  # a /31 per port of 8 leaves
        data["nccl"]["topology"] = "full"
    return edited(edit)


def test_nccl_topology_node_limit(tmp_path: Path) -> None:
    at_limit = load_spec(_profile_with_switches(NCCL_MAX_NODES - 1 - 154))
    over = load_spec(_profile_with_switches(NCCL_MAX_NODES - 154))
    assert topology_intent(at_limit, "lab-node").node_count == NCCL_MAX_NODES - 1
    assert topology_intent(over, "lab-node").node_count == NCCL_MAX_NODES
    # the spec-level refusal agrees with the model of NCCL's parser, node for node
    env = environment(None)
    for spec, ok in ((at_limit, True), (over, False)):
        text = env.get_template(TEMPLATE).render(topo=topology_intent(spec, "lab-node"), pci_rows=pci_rows)
        problems = check_topology_xml(text)
        assert (not problems) if ok else any(f"limited to {NCCL_MAX_NODES} nodes" in str(p) for p in problems)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(_profile_with_switches(NCCL_MAX_NODES - 1 - 154))
    code, _, stderr = run_cli("generate", str(spec_file), "-o", str(tmp_path / "ok"), "-q", "--only", "nccl-topo")
    assert code == 0, stderr
    spec_file.write_text(_profile_with_switches(NCCL_MAX_NODES - 154))
    code, _, stderr = run_cli("generate", str(spec_file), "-o", str(tmp_path / "over"), "--only", "nccl-topo")
    assert code == 2 and not (tmp_path / "over").exists()
    (line,) = stderr.splitlines()
    assert line.startswith(f"{spec_file}:") and line.endswith("(at host_profiles.lab-node)")
    assert f"{NCCL_MAX_NODES}-node NCCL topology file" in line and "nccl.topology: pci" in line
    with pytest.raises(FabgenError):
        from fabgen.pipeline import render_fabric

        render_fabric(plan_fabric(over), ["nccl-topo"])


def _highest_cpu(top: int) -> str:
    def edit(data: dict) -> None:  # type: ignore[type-arg]
        data["host_profiles"]["lab-node"]["cpus"][1]["cpus"] = f"32-63,96-{top}"
    return edited(edit)


def test_nccl_topology_affinity_width_limit(tmp_path: Path) -> None:
    """A cpumap is one attribute value: 900 CPU ids make it 253 characters, NCCL's most; 901 one more, and NCCL's
    parser aborts (found by the nightly fuzz: validate passed what generate refused). Refused at the cpulist
    that sets the width, and the check of the file agrees, character for character."""
    fits, over = load_spec(_highest_cpu(899)), load_spec(_highest_cpu(900))
    assert {len(c.affinity or "") for c in topology_intent(fits, "lab-node").cpus} == {253}
    env = environment(None)
    for spec, ok in ((fits, True), (over, False)):
        intent = topology_intent(spec, "lab-node")
        problems = check_topology_xml(env.get_template(TEMPLATE).render(topo=intent, pci_rows=pci_rows))
        assert (not problems) if ok else any("longer than 253 characters" in str(p) for p in problems)
    assert plan_fabric(fits) is not None
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(_highest_cpu(900))
    for command in (("validate", str(spec_file)), ("generate", str(spec_file), "-o", str(tmp_path / "out"))):
        code, _, stderr = run_cli(*command)
        (line,) = stderr.splitlines()
        assert code == 2 and line.endswith("(at host_profiles.lab-node.cpus[1].cpus)"), stderr
        assert "CPU 900 makes each NUMA node's cpumap 254 characters" in line and "CPU ids up to 899 fit" in line
    assert not (tmp_path / "out").exists()
