"""``fabgen check-topo`` and ``fabgen check-sonic``: validators for files fabgen did not necessarily write."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import require_reference

from tests.helpers import ROOT, example, run_cli

TOPO_DATA = ROOT / "tests" / "data" / "nccl_topo"


def test_check_topo_accepts_real_and_generated_files(tmp_path: Path) -> None:
    real = sorted(require_reference("nccl-topo").glob("*.xml"))
    assert len(real) == 4
    out = tmp_path / "out"
    assert run_cli("generate", str(example("lab")), "-o", str(out), "--only", "nccl-topo")[0] == 0
    generated = sorted(out.rglob("nccl-topo.xml"))
    code, stdout, stderr = run_cli("check-topo", *map(str, real + generated))
    assert code == 0, stderr
    assert stdout.count(": ok\n") == len(real) + len(generated)


def test_check_topo_reports_file_line_col(tmp_path: Path) -> None:
    bad = tmp_path / "topo.xml"
    bad.write_text('<?xml version="1.0"?>\n<system version="1">\n</system>\n')
    tabbed = tmp_path / "tabbed.xml"
    tabbed.write_text('<system version="1">\n\t<cpu numaid="0"/>\n</system>\n')
    code, _, stderr = run_cli("check-topo", str(bad), str(tabbed))
    assert code == 1
    lines = stderr.strip().splitlines()
    assert any(re.match(rf"{re.escape(str(bad))}:1:\d+: ", line) for line in lines), stderr
    assert any(re.match(rf"{re.escape(str(tabbed))}:2:1: ", line) for line in lines), stderr


def test_check_sonic_on_generated_and_planted(tmp_path: Path) -> None:
    yang = require_reference("sonic-yang")
    if os.environ.get("FABGEN_REQUIRE_REFERENCE") != "1":
        pytest.importorskip("libyang")
    out = tmp_path / "out"
    assert run_cli("generate", str(example("sonic-pod")), "-o", str(out), "--only", "sonic")[0] == 0
    files = sorted(out.rglob("config_db.json"))
    assert files
    code, _stdout, stderr = run_cli("check-sonic", *map(str, files), "--yang-dir", str(yang))
    assert code == 0, stderr
    data = json.loads(files[0].read_text())
    data["DSCP_TO_TC_MAP"]["ROCE"]["64"] = "3"
    planted = tmp_path / "config_db.json"
    planted.write_text(json.dumps(data, indent=4))
    code, _, stderr = run_cli("check-sonic", str(planted), "--yang-dir", str(yang))
    assert code == 1 and str(planted) in stderr and "64" in stderr
