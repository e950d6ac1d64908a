"""Every rule, run alone on its case file: passing and failing specs with the expected (code, line, col).

Also the contract of the registry: each rule has a case file with at least one
clean and one failing case, and documentation in the four fixed sections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_support import CASES, expected, load_cases, numbered, run_case

from fabgen.lint.registry import RULES, SECTIONS

CASE_FILES = sorted(CASES.glob("*.yaml"))


def _params() -> list[Any]:
    params = []
    for path in CASE_FILES:
        data = load_cases(path)
        for case in data["cases"]:
            params.append(pytest.param(data["rule"], data["base"], case, id=f"{path.stem}-{case['name']}"))
    return params


@pytest.mark.parametrize(("code", "base", "case"), _params())
def test_case(code: str, base: str, case: dict[str, Any], tmp_path: Path) -> None:
    got, prepared, findings = run_case(case, base, code, tmp_path)
    want = expected(case)
    assert got == want, (
        f"{code} / {case['name']}: got {got}, want {want}\n"
        + "".join(f"  {f}\n" for f in findings)
        + numbered(prepared.text)
    )
    for finding in findings:
        assert finding.code == code
        assert finding.message and finding.hint, "every finding says what is wrong and how to fix it"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_has_cases(rule) -> None:  # type: ignore[no-untyped-def]
    path = CASES / f"{rule.code}.yaml"
    assert path.exists(), f"{rule.code} has no case file {path}"
    data = load_cases(path)
    assert data["rule"] == rule.code
    cases = data["cases"]
    assert any(not c.get("expect") for c in cases), f"{rule.code}: no passing case"
    failing = [c for c in cases if c.get("expect")]
    assert failing, f"{rule.code}: no failing case"
    for case in failing:
        assert all(item[0] == rule.code for item in case["expect"]), case["name"]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_has_docs(rule) -> None:  # type: ignore[no-untyped-def]
    docs = rule.docs
    assert docs["summary"].endswith("."), f"{rule.code}: summary must be one sentence"
    for section in SECTIONS:
        assert docs.get(section), f"{rule.code} ({rule.check.__name__}) lacks the section {section!r}"


def test_case_files_name_existing_rules() -> None:
    codes = {r.code for r in RULES}
    assert {p.stem for p in CASE_FILES} <= codes


def test_registry_is_consistent() -> None:
    codes = [r.code for r in RULES]
    slugs = [r.slug for r in RULES]
    assert codes == sorted(codes), "the table is in code order"
    assert len(set(codes)) == len(codes) and len(set(slugs)) == len(slugs)
    for rule in RULES:
        assert rule.severity in ("error", "warning")
        assert rule.slug == rule.slug.lower() and " " not in rule.slug
        assert rule.family, f"{rule.code} belongs to no family"
