"""ECN thresholds a switch OS cannot take are refused by ``validate``, at the spec's ``ecn`` line.

Before, ``validate`` passed them and ``generate`` failed on its own output check
(EOS: ``threshold ... is out of range 1-256000000``; NVUE: ``... is outside
1..4294967295``), breaking the rule that a spec validate passes must generate.
Each OS is tried at its bound (accepted by both commands) and one byte past it,
in the top-level ``qos`` and in a ``fabric.switch_overrides[].qos``. SONiC's
WRED thresholds are uint64 in ``sonic-wred-profile.yang``, above anything the
spec can hold (``units.MAX_AMOUNT``), so it takes every value.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from fabgen.targets.eos.syntax import ECN_THRESHOLD_MAX
from fabgen.targets.nvue.parse import QOS, Leaf
from fabgen.units import MAX_AMOUNT
from tests.helpers import edited, run_cli

Edit = Callable[[dict[str, Any]], None]



def _nvue_ecn_leaf(name: str) -> Leaf:
    """NVUE's ``congestion-control`` leaf the output check holds ``startup.yaml`` to: its bound, not a copy."""
    congestion: Any = QOS.fields["congestion-control"]
    leaf = congestion.item.fields["traffic-class"].item.fields[name]
    assert isinstance(leaf, Leaf)
    return leaf


NVUE_MAX = _nvue_ecn_leaf("max-threshold").hi
OSES = {"eos": ("lab", ECN_THRESHOLD_MAX), "nvue": ("cumulus-pod", NVUE_MAX)}
"""OS -> (example spec, the largest threshold in bytes its output check accepts)."""
WHERE = ("qos", "override")


def _ecn_class(qos: dict[str, Any]) -> str:
    """The name of the policy's class that marks ECN (``roce`` in every example)."""
    return next(name for name, c in qos["classes"].items() if c.get("ecn"))


def _set_ecn(where: str, **ecn: int | str) -> Edit:
    """An edit that changes the ECN of the top-level policy, or of a spine override copied from it."""
    def edit(data: dict[str, Any]) -> None:
        qos = data["qos"]
        if where == "override":
            qos = copy.deepcopy(qos)
            data["fabric"]["switch_overrides"] = [{"match": "spine-*", "qos": qos}]
        qos["classes"][_ecn_class(qos)]["ecn"].update(ecn)
    return edit


def _write(tmp_path: Path, name: str, edit: Edit) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(edited(edit, name))
    return spec


def _ecn_at(spec: Path, where: str, field: str) -> str:
    """``file:line:col:`` of the ``ecn`` field's value, read by ruamel (not by fabgen's own locator)."""
    data = YAML(typ="rt").load(io.StringIO(spec.read_text()))
    qos = data["qos"] if where == "qos" else data["fabric"]["switch_overrides"][0]["qos"]
    line, col = qos["classes"][_ecn_class(qos)]["ecn"].lc.value(field)
    return f"{spec}:{line + 1}:{col + 1}:"


def _refused(spec: Path, tmp_path: Path) -> str:
    """validate's stderr, after checking it refuses with one line per problem and generate says the same."""
    vcode, _, vstderr = run_cli("validate", str(spec))
    gcode, _, gstderr = run_cli("generate", str(spec), "-o", str(tmp_path / "out"))
    assert vcode == 2 and gcode == 2, (vcode, gcode, vstderr, gstderr)
    assert vstderr == gstderr
    assert "Traceback" not in vstderr
    assert all(line.startswith(f"{spec}:") for line in vstderr.splitlines()), vstderr
    return vstderr


def _accepted(spec: Path, tmp_path: Path) -> None:
    vcode, _, vstderr = run_cli("validate", str(spec))
    assert vcode == 0, vstderr
    gcode, _, gstderr = run_cli("generate", str(spec), "-o", str(tmp_path / "out"))
    assert gcode == 0, gstderr


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("os", sorted(OSES))
def test_max_over_the_bound_is_refused_at_its_line(os: str, where: str, tmp_path: Path) -> None:
    name, bound = OSES[os]
    spec = _write(tmp_path, name, _set_ecn(where, max=bound + 1))
    stderr = _refused(spec, tmp_path)
    assert len(stderr.splitlines()) == 1, stderr
    assert stderr.startswith(_ecn_at(spec, where, "max")), stderr
    assert f"ECN max {bound + 1}" in stderr and str(bound) in stderr, stderr
    assert "ecn.max" in stderr and ("switch_overrides[0]" in stderr) == (where == "override"), stderr


@pytest.mark.parametrize("where", WHERE)
def test_nvue_min_over_the_bound_is_refused_at_its_line(where: str, tmp_path: Path) -> None:
    """Both thresholds past 32 bits: each is refused at its own field."""
    spec = _write(tmp_path, "cumulus-pod", _set_ecn(where, min=NVUE_MAX + 1, max=NVUE_MAX + 2))
    lines = _refused(spec, tmp_path).splitlines()
    assert len(lines) == 2, lines
    assert sorted(line.split(" ", 1)[0] for line in lines) == sorted(
        (_ecn_at(spec, where, "min"), _ecn_at(spec, where, "max")))


def test_eos_min_and_max_over_the_bound_are_both_refused(tmp_path: Path) -> None:
    spec = _write(tmp_path, "lab", _set_ecn("qos", min=ECN_THRESHOLD_MAX + 1, max=ECN_THRESHOLD_MAX + 2))
    assert len(_refused(spec, tmp_path).splitlines()) == 2


@pytest.mark.parametrize("os", sorted(OSES))
def test_thresholds_at_the_bound_pass_validate_and_generate(os: str, tmp_path: Path) -> None:
    name, bound = OSES[os]

    def edit(data: dict[str, Any]) -> None:
        _set_ecn("override", min=bound - 1, max=bound)(data)
        _set_ecn("qos", max=bound)(data)

    _accepted(_write(tmp_path, name, edit), tmp_path)


def test_nvue_probability_range_covers_the_spec() -> None:
    """The spec's 1-100 % always fits NVUE's probability leaf: nothing to refuse there."""
    leaf = _nvue_ecn_leaf("probability")
    assert leaf.lo <= 1 and leaf.hi >= 100


def test_sonic_takes_any_threshold_the_spec_can_hold(tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        _set_ecn("override", min=MAX_AMOUNT - 1, max=MAX_AMOUNT)(data)
        _set_ecn("qos", min=MAX_AMOUNT - 1, max=MAX_AMOUNT)(data)

    _accepted(_write(tmp_path, "sonic-pod", edit), tmp_path)
