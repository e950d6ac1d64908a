"""Output formats: one list of findings as text, parsable lines, JSON, GitHub annotations and SARIF 2.1.0."""

from __future__ import annotations

import json
import re

import pytest

from fabgen.lint import Finding, Location, format_findings
from fabgen.lint.formats import FORMATS
from fabgen.lint.registry import RULES

FINDINGS = [
    Finding("FG101", "roce-dscp-not-lossless", "error", "RoCE DSCP 26 maps to priority 0, lossy",
            Location("specs/lab.yaml", 57, 59, "qos.classes.roce.lossless"), "make it lossless",
            (Location("specs/lab.yaml", 80, 3, "fabric.switch_overrides[0]", "override, with: a comma"),)),
    Finding("FG251", "wiring-swapped-cables", "error", "cables swapped: a:1 is on b:2, 100% sure\nsecond line",
            Location("/abs/lldp/lab01.json", 5, 9), None),
    Finding("FG503", "deployed-incomplete", "warning", "planned device lab02 has no files",
            Location("collected", 0, 0), "collect them"),
]


def test_text() -> None:
    out = format_findings(FINDINGS, "text")
    lines = out.splitlines()
    assert lines[0] == ("specs/lab.yaml:57:59: error FG101 [roce-dscp-not-lossless] RoCE DSCP 26 maps to priority 0,"
                        " lossy")
    assert lines[1] == "    hint: make it lossless"
    assert lines[2] == "    see: specs/lab.yaml:80:3 (override, with: a comma)"
    assert lines[-1] == "Found 2 errors and 1 warning."
    assert format_findings([], "text") == "No problems found.\n"


def test_parsable_is_one_line_per_finding() -> None:
    out = format_findings(FINDINGS, "parsable")
    pattern = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): \[(error|warning)\] .+ \(FG\d{3}\)$")
    lines = out.split("\n")[:-1]
    assert len(lines) == 3, "a newline inside a message does not break the one-line format"
    assert lines[0] == "specs/lab.yaml:57:59: [error] RoCE DSCP 26 maps to priority 0, lossy (FG101)"
    assert all(pattern.match(line) for line in lines)
    assert lines[1].endswith("100% sure second line (FG251)")
    assert lines[2] == "collected:1:1: [warning] planned device lab02 has no files (FG503)"


def test_json_round_trips() -> None:
    data = json.loads(format_findings(FINDINGS, "json"))
    assert [d["code"] for d in data] == ["FG101", "FG251", "FG503"]
    first = data[0]
    assert first == {
        "code": "FG101", "slug": "roce-dscp-not-lossless", "severity": "error",
        "message": "RoCE DSCP 26 maps to priority 0, lossy", "file": "specs/lab.yaml", "line": 57, "col": 59,
        "path": "qos.classes.roce.lossless", "hint": "make it lossless",
        "related": [{"file": "specs/lab.yaml", "line": 80, "col": 3, "path": "fabric.switch_overrides[0]",
                     "note": "override, with: a comma"}],
    }


def test_github_annotations_escape() -> None:
    lines = format_findings(FINDINGS, "github").splitlines()
    assert lines[0] == ("::error file=specs/lab.yaml,line=57,col=59,title=FG101 roce-dscp-not-lossless::"
                        "RoCE DSCP 26 maps to priority 0, lossy%0Ahint: make it lossless")
    assert lines[1].startswith("::error file=/abs/lldp/lab01.json,line=5,col=9,title=FG251 wiring-swapped-cables::")
    assert "100%25 sure%0Asecond line" in lines[1]
    assert lines[2] == ("::warning file=collected,title=FG503 deployed-incomplete::"
                        "planned device lab02 has no files%0Ahint: collect them")


def test_sarif_2_1_0() -> None:
    log = json.loads(format_findings(FINDINGS, "sarif"))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "fabgen"
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [r.code for r in RULES]
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning")
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["FG101", "FG251", "FG503"]
    first = results[0]
    assert first["level"] == "error"
    assert first["message"]["text"].startswith("RoCE DSCP 26 maps to priority 0")
    assert rules[first["ruleIndex"]]["id"] == "FG101"
    physical = first["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "specs/lab.yaml", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 57, "startColumn": 59}
    assert first["relatedLocations"][0]["physicalLocation"]["region"]["startLine"] == 80
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "file:///abs/lldp/lab01.json"}
    assert "region" not in results[2]["locations"][0]["physicalLocation"], "no made-up region for a whole directory"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_is_deterministic(fmt: str) -> None:
    assert format_findings(FINDINGS, fmt) == format_findings(list(FINDINGS), fmt)
