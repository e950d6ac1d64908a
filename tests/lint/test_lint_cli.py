"""``fabgen lint``, ``fabgen rules`` and ``fabgen explain`` through :func:`fabgen.cli.main`: output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lint_support import EXAMPLES, WIRING, base_path, patch_text

from fabgen.cli import main
from fabgen.lint import rules_markdown
from fabgen.lint.registry import RULES

LAB = str(EXAMPLES / "lab" / "spec.yaml")
ERROR_CASE = {"set": {"qos.mtu": 1500}}                        # FG116, an error
WARNING_CASE = {"set": {"qos.pfc.watchdog.enabled": False}}    # FG114, a warning


def spec(tmp_path: Path, case: dict, name: str = "spec.yaml") -> str:
    path = tmp_path / name
    path.write_text(patch_text(base_path("lab").read_text(), case))
    return str(path)


def test_clean_spec_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", LAB]) == 0
    assert capsys.readouterr().out == "No problems found.\n"


def test_quiet_prints_nothing_when_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "-q", LAB]) == 0
    assert capsys.readouterr().out == ""


def test_error_exits_1_with_file_line_col(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec(tmp_path, ERROR_CASE)
    assert main(["lint", "--format", "parsable", path]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{path}:62:8: [error] switch MTU 1500")
    assert out.rstrip().endswith("(FG116)")


def test_warnings_exit_0_unless_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec(tmp_path, WARNING_CASE)
    assert main(["lint", path]) == 0
    assert "warning FG114 [pfc-watchdog-disabled]" in capsys.readouterr().out
    assert main(["lint", "--strict", path]) == 1


def test_strict_from_the_config_file(tmp_path: Path) -> None:
    path = spec(tmp_path, WARNING_CASE)
    (tmp_path / ".fabgen.yaml").write_text("lint: {strict: true}\n")
    assert main(["lint", path]) == 1
    assert main(["lint", "--no-config", path]) == 0


def test_select_and_ignore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = spec(tmp_path, {"set": {"qos.mtu": 1500, "qos.pfc.watchdog.enabled": False}})
    assert main(["lint", "--ignore", "FG116", "--format", "json", path]) == 0
    assert [f["code"] for f in json.loads(capsys.readouterr().out)] == ["FG114"]
    assert main(["lint", "--select", "FG2,mtu-too-small", "--format", "json", path]) == 1
    assert [f["code"] for f in json.loads(capsys.readouterr().out)] == ["FG116"]


def test_unknown_rule_in_select_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--select", "FG9", LAB]) == 2
    assert "unknown rule or selector 'FG9'" in capsys.readouterr().err


def test_bad_spec_exits_2_and_others_still_lint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\ncluster: {name: x}\n")
    good = spec(tmp_path, ERROR_CASE, "good.yaml")
    assert main(["lint", "--format", "parsable", str(broken), good]) == 2
    captured = capsys.readouterr()
    assert f"{broken}:" in captured.err
    assert "(FG116)" in captured.out


def test_several_specs_in_one_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = spec(tmp_path, ERROR_CASE, "a.yaml")
    second = spec(tmp_path, WARNING_CASE, "b.yaml")
    assert main(["lint", "--format", "sarif", first, second]) == 1
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("FG116", Path(first).as_uri()),
        ("FG114", Path(second).as_uri()),
    ]


def test_wiring_needs_a_single_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", LAB, LAB, "--wiring", str(WIRING / "miswired-lab")]) == 2
    assert "exactly one SPEC" in capsys.readouterr().err


def test_wiring_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", LAB, "--wiring", str(WIRING / "miswired-lab"), "--format", "json"]) == 1
    codes = sorted(f["code"] for f in json.loads(capsys.readouterr().out))
    assert codes == ["FG251", "FG252", "FG254"]


def test_unreadable_wiring_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "lab01.json"
    bad.write_text('{"lldp": ')
    assert main(["lint", LAB, "--wiring", str(bad)]) == 2
    assert f"{bad}:1:" in capsys.readouterr().err


def test_output_file(tmp_path: Path) -> None:
    out = tmp_path / "report.sarif"
    assert main(["lint", "--format", "sarif", "-o", str(out), spec(tmp_path, ERROR_CASE)]) == 1
    assert json.loads(out.read_text())["version"] == "2.1.0"


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [r.code for r in RULES]
    assert main(["rules", "--format", "markdown"]) == 0
    assert capsys.readouterr().out == rules_markdown()
    assert main(["rules", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["slug"] == "roce-dscp-not-lossless"


def test_explain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "FG101"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("FG101 roce-dscp-not-lossless (error, traffic classes)")
    for section in ("What it checks", "Why it matters", "Example", "Fix"):
        assert f"\n{section}\n    " in out
    assert main(["explain", "wiring-swapped-cables"]) == 0
    assert capsys.readouterr().out.startswith("FG251 ")


def test_explain_unknown_rule_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "FG1O1"]) == 2
    assert "did you mean FG101?" in capsys.readouterr().err
