"""One port, one cable: ``validate`` refuses two explicit cables with a common end, at the later cable's line.

Why: every switch OS takes one cable per port. Before, ``validate`` passed such a spec; EOS then failed only in
``generate``'s check of its rendered config ("'interface Ethernet1/1' repeats line 56"), and SONiC and Cumulus
wrote both cables to the port without a word. The cables are inserted as text into each example's own spec (not
re-dumped), so the located line is the one a user sees in their file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan.cabling import ExplicitCabling
from fabgen.plan.slots import PlannedLink
from tests.helpers import edited, example, run_cli

# Per example: two hosts, their first backend NIC, the leaf both land on, the port the layout gives the first
# host's NIC, and a port of that leaf no planned link uses.
SITES = {
    "lab": ("lab01", "lab02", "ens1np0", "leaf-r0-p00-01", "Ethernet1/1", "Ethernet9/1"),  # EOS
    "sonic-pod": ("gpu01", "gpu02", "ens1np0", "leaf-r0-p00-01", "Ethernet0", "Ethernet200"),
    "cumulus-pod": ("node01", "node02", "ens1np0", "leaf-r0-p00-01", "swp1", "swp9"),
}


def _cables(name: str, case: str) -> tuple[list[tuple[str, str]], str]:
    """The two cables of ``case`` on ``name`` (``a``, ``b``), and the end the second one must be refused for."""
    host1, host2, nic, leaf, port, free = SITES[name]
    first = (f"{host1}:{nic}", f"{leaf}:{port}")
    second = {
        "two-hosts-one-port": (f"{host2}:{nic}", f"{leaf}:{port}"),
        "same-cable-twice": first,
        "same-cable-swapped": (first[1], first[0]),
        "one-nic-two-ports": (f"{host1}:{nic}", f"{leaf}:{free}"),
    }[case]
    clash = f"{host1}:{nic}" if case == "one-nic-two-ports" else f"{leaf}:{port}"
    return [first, second], clash


def _write(tmp_path: Path, name: str, cables: list[tuple[str, str]]) -> tuple[Path, int]:
    """The example's spec with ``cables`` as ``fabric.cabling`` before ``addressing:``; and the last cable's line."""
    lines = example(name).read_text().splitlines(keepends=True)
    fabric = lines.index("fabric:\n")
    at = next(i for i in range(fabric, len(lines)) if lines[i] == "  addressing:\n")
    block = ["  cabling:\n"] + [f'    - {{a: "{a}", b: "{b}"}}\n' for a, b in cables]
    spec = tmp_path / "spec.yaml"
    spec.write_text("".join(lines[:at] + block + lines[at:]))
    return spec, at + len(block)  # 1-based line of the block's last line


CASES = ["two-hosts-one-port", "same-cable-twice", "same-cable-swapped", "one-nic-two-ports"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", sorted(SITES))
def test_second_cable_on_an_end_is_refused_at_its_line(name: str, case: str, tmp_path: Path) -> None:
    cables, clash = _cables(name, case)
    spec, line = _write(tmp_path, name, cables)
    code, _, stderr = run_cli("validate", str(spec))
    assert code == 2, stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines() == [
        f"{spec}:{line}:7: {clash} is already cabled by fabric.cabling[0]; a port takes one cable "
        "(at fabric.cabling[1])"]
    gcode, _, gstderr = run_cli("generate", str(spec), "-o", str(tmp_path / "out"), "--check")
    assert (gcode, gstderr) == (code, stderr)  # generate refuses it with the same line, before rendering


def test_every_later_clash_is_reported_once() -> None:
    """A third cable on the port names the first cable too: the earliest owner of the end, one line per cable."""
    host1, host2, nic, leaf, port, _ = SITES["lab"]
    cables = [{"a": f"{h}:{nic}", "b": f"{leaf}:{port}"} for h in (host1, host2, "lab03")]
    with pytest.raises(SpecError) as info:
        plan_fabric(load_spec(edited(lambda d: d["fabric"].update(cabling=cables))))
    message = str(info.value)
    assert message.count("is already cabled by fabric.cabling[0]") == 2
    assert "(at fabric.cabling[1])" in message and "(at fabric.cabling[2])" in message


@pytest.mark.parametrize("name", sorted(SITES))
def test_the_examples_own_cabling_restated_still_validates(name: str, tmp_path: Path) -> None:
    """Every planned link written out as an explicit cable is one cable per port: nothing to refuse."""
    plan = plan_fabric(load_spec(example(name)))
    cables = [(f"{link.a_device}:{link.a_port}", f"{link.b_device}:{link.b_port}") for link in plan.links]
    spec, _ = _write(tmp_path, name, cables)
    code, _, stderr = run_cli("validate", str(spec))
    assert code == 0, stderr


@pytest.mark.parametrize("name", sorted(SITES))
def test_two_nics_swapping_ports_still_validates(name: str, tmp_path: Path) -> None:
    """Each cable lands on the port the layout gave the other: each port still ends with one cable."""
    host1, _, _, leaf, port, _ = SITES[name]
    plan = plan_fabric(load_spec(example(name)))
    mine = next(link for link in plan.links if (link.a_device, link.b_device, link.b_port) == (host1, leaf, port))
    other = next(link for link in plan.links if link.a_device == host1 and link.a_port != mine.a_port)
    cables = [(f"{host1}:{mine.a_port}", f"{other.b_device}:{other.b_port}"),
              (f"{host1}:{other.a_port}", f"{leaf}:{port}")]
    spec, _ = _write(tmp_path, name, cables)
    code, _, stderr = run_cli("validate", str(spec))
    assert code == 0, stderr


@pytest.mark.parametrize("name", sorted(SITES))
def test_a_port_the_layout_gave_another_nic_is_taken_over_not_refused(name: str, tmp_path: Path) -> None:
    """The module's rule: a cable replaces the planned link on its port, so the port still has one cable.

    The NIC it leaves uncabled is the linter's FG204 (host-missing-rail), not a refusal: taking that NIC out of
    service is a valid fix. validate and generate must agree on it.
    """
    host1, host2, nic, leaf, port, _ = SITES[name]
    spec, _ = _write(tmp_path, name, [(f"{host2}:{nic}", f"{leaf}:{port}")])
    code, _, stderr = run_cli("validate", str(spec))
    gcode, _, gstderr = run_cli("generate", str(spec), "-o", str(tmp_path / "out"), "--check")
    assert code == 0 and gcode in (0, 1), (stderr, gstderr)
    plan = plan_fabric(load_spec(spec))
    on_port = [link for link in plan.links if (link.b_device, link.b_port) == (leaf, port)]
    assert [(link.a_device, link.a_port) for link in on_port] == [(host2, nic)]
    assert not any((link.a_device, link.a_port) == (host1, nic) for link in plan.links)


def test_many_cables_are_checked_in_one_pass() -> None:
    """Tens of thousands of cables (a 24k-GPU fabric's count) with the clash last: found, at the last cable."""
    spec = load_spec(example("lab"))
    checker = ExplicitCabling(spec, None, {}, {})
    count = 40_000
    links = [PlannedLink(f"h{i}", "ens1np0", f"leaf{i // 64}", f"Ethernet{i % 64 + 1}/1", "host-leaf", 0, 400, True)
             for i in range(count)]
    links.append(PlannedLink("late", "ens1np0", "leaf3", "Ethernet5/1", "host-leaf", 0, 400, True))
    with pytest.raises(SpecError) as info:
        checker._one_cable_per_port(links)
    assert [p.path for p in info.value.problems] == [f"fabric.cabling[{count}]"]
    assert str(info.value).count(f"leaf3:Ethernet5/1 is already cabled by fabric.cabling[{3 * 64 + 4}]") == 1
