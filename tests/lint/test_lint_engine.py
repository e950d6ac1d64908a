"""The lint engine: examples are clean, configuration, inline suppression, ordering, API, speed."""

from __future__ import annotations

from pathlib import Path

import pytest
from lint_support import EXAMPLES, base_path, patch_text

import fabgen
from fabgen.errors import FabgenError
from fabgen.lint import Finding, LintConfig, config_for, find_config, lint, load_config
from fabgen.lint.config import config_from_mapping
from fabgen.lint.registry import RULES, get_rule
from fabgen.lint.suppress import parse_suppressions
from fabgen.pipeline import load_spec, plan_fabric

EXAMPLE_SPECS = sorted(EXAMPLES.glob("*/spec.yaml"))

# Three rules fire at once: FG116 (MTU, line 63), FG104 (NIC trust, line 71) and FG114 (watchdog off, a warning).
BAD = {"set": {"nic.trust": "pcp", "qos.pfc.watchdog.enabled": False, "qos.mtu": 1500}}


def write_spec(tmp_path: Path, case: dict, base: str = "lab") -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(patch_text(base_path(base).read_text(), case))
    return path


def run(path: Path, **kwargs: object) -> list[Finding]:
    spec = load_spec(path)
    return lint(spec, plan_fabric(spec), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", EXAMPLE_SPECS, ids=lambda p: p.parent.name)
def test_bundled_examples_are_clean(path: Path) -> None:
    findings = run(path)
    assert findings == [], "\n".join(map(str, findings))


def test_examples_exist() -> None:
    assert {"lab", "llama3-24k"} <= {p.parent.name for p in EXAMPLE_SPECS}


def test_findings_most_severe_first_then_by_place(tmp_path: Path) -> None:
    findings = run(write_spec(tmp_path, BAD))
    assert [f.code for f in findings] == ["FG116", "FG104", "FG114"]
    assert [f.severity for f in findings] == ["error", "error", "warning"]
    assert findings == sorted(findings, key=Finding.sort_key)
    first = findings[0]
    assert (first.file, first.line, first.col, first.path) == (str(tmp_path / "spec.yaml"), 62, 8, "qos.mtu")


def test_deterministic(tmp_path: Path) -> None:
    path = write_spec(tmp_path, BAD)
    assert run(path) == run(path)


# --------------------------------------------------------------------------- configuration


def test_select_ignore_and_severity(tmp_path: Path) -> None:
    path = write_spec(tmp_path, BAD)
    assert {f.code for f in run(path, config=LintConfig(select=("FG11",)))} == {"FG114", "FG116"}
    assert {f.code for f in run(path, config=LintConfig(ignore=("mtu-too-small", "FG114")))} == {"FG104"}
    found = run(path, config={"severity": {"FG114": "error", "nic-trust-mismatch": "warning", "FG116": "off"}})
    assert {(f.code, f.severity) for f in found} == {("FG114", "error"), ("FG104", "warning")}


def test_unknown_selector_is_bad_input() -> None:
    with pytest.raises(FabgenError, match="did you mean roce-dscp-not-lossless"):
        LintConfig(select=("roce-dscp-not-losless",))
    with pytest.raises(FabgenError, match="unknown rule"):
        LintConfig(severity={"nope": "error"})
    with pytest.raises(FabgenError, match="error, warning, off"):
        LintConfig(severity={"FG101": "fatal"})
    with pytest.raises(FabgenError, match="unknown lint setting 'slect'"):
        config_from_mapping({"slect": ["FG1"]}, "x")


def test_override_from_command_line() -> None:
    base = LintConfig(select=("FG1",), ignore=("FG101",))
    merged = base.override(select=["FG2"], ignore=["FG201"], strict=True)
    assert merged.select == ("FG2",) and merged.ignore == ("FG101", "FG201") and merged.strict
    assert base.override().select == ("FG1",)


def test_pyproject_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "site"\n\n[tool.fabgen.lint]\nselect = ["FG1"]\nignore = ["FG114"]\nstrict = true\n'
        '[tool.fabgen.lint.severity]\nFG116 = "warning"\n')
    (tmp_path / "specs").mkdir()
    spec = write_spec(tmp_path / "specs", BAD)
    found = find_config(spec)
    assert found == tmp_path / "pyproject.toml"
    config = config_for(spec)
    assert config.strict and config.source == str(found)
    assert {(f.code, f.severity) for f in run(spec, config=config)} == {("FG104", "error"), ("FG116", "warning")}


def test_fabgen_yaml_wins_and_search_stops_at_the_repository(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.fabgen.lint]\nselect = ["FG2"]\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    spec = write_spec(repo, BAD)
    assert find_config(spec) is None, "a pyproject.toml above the repository does not apply"
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(spec) is None, "a pyproject.toml without [tool.fabgen.lint] does not count"
    (repo / ".fabgen.yaml").write_text("lint:\n  ignore: [FG104]\n  severity: {FG114: 'off'}\n")
    assert find_config(spec) == repo / ".fabgen.yaml"
    assert {f.code for f in run(spec, config=config_for(spec))} == {"FG116"}


def test_bad_config_file_is_located(tmp_path: Path) -> None:
    path = tmp_path / ".fabgen.yaml"
    path.write_text("lint:\n  select: FG1\n  severity: [FG101]\n")
    with pytest.raises(FabgenError) as info:
        load_config(path)
    assert info.value.problems[0].file == str(path)
    bad_toml = tmp_path / "pyproject.toml"
    bad_toml.write_text("[tool.fabgen.lint\n")
    with pytest.raises(FabgenError, match="invalid TOML"):
        load_config(bad_toml)


# --------------------------------------------------------------------------- inline suppression


def test_disable_on_the_line(tmp_path: Path) -> None:
    case = {**BAD, "replace": [["  mtu: 1500", "  mtu: 1500  # fabgen: disable=FG116 lab switches, small frames only"]]}
    assert {f.code for f in run(write_spec(tmp_path, case))} == {"FG104", "FG114"}


def test_disable_by_slug_on_the_line_above(tmp_path: Path) -> None:
    case = {**BAD, "replace": [["  mtu: 1500", "  # fabgen: disable=mtu-too-small\n  mtu: 1500"]]}
    assert {f.code for f in run(write_spec(tmp_path, case))} == {"FG104", "FG114"}


def test_disable_several_and_all(tmp_path: Path) -> None:
    case = {**BAD, "replace": [["  mtu: 1500", "  mtu: 1500 # fabgen: disable=FG114, FG116"]]}
    assert {f.code for f in run(write_spec(tmp_path, case))} == {"FG104", "FG114"}, "FG114 is not on this line"
    case = {**BAD, "replace": [["  mtu: 1500", "  mtu: 1500 # fabgen: disable=all"]]}
    assert {f.code for f in run(write_spec(tmp_path, case))} == {"FG104", "FG114"}


def test_disable_file(tmp_path: Path) -> None:
    case = {**BAD, "replace": [["version: 1", "# fabgen: disable-file=FG104,pfc-watchdog-disabled\nversion: 1"]]}
    assert {f.code for f in run(write_spec(tmp_path, case))} == {"FG116"}


def test_suppression_parser() -> None:
    text = "a: 1  # fabgen: disable=FG101\n# fabgen: disable=FG102\n\n# another comment\nb: 2\nc: 3 # fabgen: disable-file=ALL\n"
    found = parse_suppressions(text, "f")
    assert found.by_line == {1: frozenset({"fg101"}), 5: frozenset({"fg102"})}
    assert found.whole_file == frozenset({"all"})


# --------------------------------------------------------------------------- API


def test_public_api_verb(tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, BAD))
    via_package = fabgen.lint_fabric(spec)
    assert [f.code for f in via_package] == ["FG116", "FG104", "FG114"]
    import sys

    module = sys.modules["fabgen.lint"]  # ``import fabgen.lint as m`` yields the API function of the same name
    assert module.lint(spec) == via_package
    assert fabgen.lint_fabric(spec, None, config={"select": ["FG116"]})[0].code == "FG116"


def test_spec_without_source_lints() -> None:
    from fabgen.source import load_source
    from fabgen.spec import ClusterSpec

    data = load_source(base_path("lab")).data
    data["qos"]["mtu"] = 1500
    bare = ClusterSpec.model_validate(data)
    assert bare.source is None
    found = lint(bare, plan_fabric(bare))
    assert [f.code for f in found] == ["FG116"]
    assert found[0].file == "<spec>" and found[0].path == "qos.mtu"


def test_get_rule_by_code_or_slug() -> None:
    assert get_rule("fg101") is get_rule("roce-dscp-not-lossless") is RULES[0]
    assert get_rule("FG999") is None
