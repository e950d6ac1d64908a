"""A GPU or NIC whose NUMA node differs from its PCIe switch's is refused with its file:line:col.

Issue 13: such a spec used to pass validate and lint, and the topology XML put the
device under the switch's NUMA node while everything reading the device's own
``numa`` used the other one. ``validate``, ``lint`` and ``generate`` must all stop at
the device's ``numa`` value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import fabgen.pipeline as pipeline
from fabgen.errors import SpecError
from tests.helpers import example, run_cli

LAB = example("lab")


def lab(old: str, new: str) -> str:
    text = LAB.read_text()
    assert text.count(old) == 1, old
    return text.replace(old, new)


NIC_LINE = '{name: mlx5_2, netdev: ens3np0, pci: "0000:9a:00.0", numa: 1,'
GPU_LINE = '{index: 2, pci: "0000:9b:00.0", numa: 1'


def where(text: str, needle: str) -> tuple[int, int]:
    index = text.index(needle) + len(needle) - 2  # the "0" of "numa: 0,"
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


def test_nic_on_another_numa_node_than_its_switch() -> None:
    bad = NIC_LINE.replace("numa: 1,", "numa: 0,")
    text = lab(NIC_LINE, bad)
    with pytest.raises(SpecError) as caught:
        pipeline.load_spec(text)
    [problem] = caught.value.problems
    assert problem.message.startswith("NIC mlx5_2 is on NUMA node 0, but its PCIe switch sw2 is on NUMA node 1")
    assert (problem.line, problem.col) == where(text, bad)


def test_gpu_on_another_numa_node_than_its_switch() -> None:
    text = lab(GPU_LINE, GPU_LINE.replace("numa: 1", "numa: 0"))
    with pytest.raises(SpecError) as caught:
        pipeline.load_spec(text)
    assert [p.message.split(":")[0] for p in caught.value.problems] == \
        ["GPU 2 is on NUMA node 0, but its PCIe switch sw2 is on NUMA node 1"]


def test_devices_without_a_switch_may_sit_on_any_node() -> None:
    """Only the switch fixes a device's node; a NIC off every switch keeps its own."""
    text = lab("gpus: [2], nics: [mlx5_2]", "gpus: [2], nics: []")
    text = text.replace(NIC_LINE, NIC_LINE.replace("numa: 1,", "numa: 0,"))
    pipeline.load_spec(text)


@pytest.mark.parametrize("command", ["validate", "lint"])
def test_cli_reports_it_located(command: str, tmp_path: Path) -> None:
    bad = NIC_LINE.replace("numa: 1,", "numa: 0,")
    text = lab(NIC_LINE, bad)
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    line, col = where(text, bad)
    code, out, err = run_cli(command, str(spec))
    assert code == 2
    assert f"{spec}:{line}:{col}: NIC mlx5_2 is on NUMA node 0" in out + err
    assert "Traceback" not in out + err
