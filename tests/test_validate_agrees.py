"""``fabgen validate`` refuses exactly what ``fabgen generate`` refuses, with the same lines.

The pre-commit hook and CI gate on validate; a spec it passes must generate.
Every example and every case of the bad-spec corpus goes through both (the
fuzz test checks the same on its mutants).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import EXAMPLE_NAMES, ROOT, example, run_cli

BAD = sorted((ROOT / "tests" / "bad_specs").glob("*.yaml"))


def _agree(spec: Path, tmp_path: Path) -> tuple[int, str]:
    vcode, _, vstderr = run_cli("validate", str(spec))
    gcode, _, gstderr = run_cli("generate", str(spec), "-o", str(tmp_path / "out"), "--check")
    assert (vcode == 0) == (gcode in (0, 1)), f"validate {vcode}, generate {gcode}:\n{vstderr}\n{gstderr}"
    if vcode:
        assert vstderr == gstderr
    return vcode, vstderr


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_examples_pass_both(name: str, tmp_path: Path) -> None:
    assert _agree(example(name), tmp_path)[0] == 0


@pytest.mark.parametrize("case", BAD, ids=[c.stem for c in BAD])
def test_bad_specs_refused_by_both(case: Path, tmp_path: Path) -> None:
    code, stderr = _agree(case, tmp_path)
    assert code == 2 and stderr
