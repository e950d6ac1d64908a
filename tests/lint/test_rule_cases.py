"""Every rule, run alone on its case file: passing and failing specs with the expected (code, line, col).

Also the contract of the registry: each rule has a case file with at least one
clean and one failing case, and documentation in the four fixed sections.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lint_support import CASES, base_path, expected, load_cases, numbered, prepare, run_case

from fabgen.errors import SpecError
from fabgen.lint.registry import RULES, SECTIONS
from fabgen.pipeline import load_spec, plan_fabric

CASE_FILES = sorted(CASES.glob("*.yaml"))
REFUSED_AT_LOAD = {"FG202"}
"""Rules whose failing specs the loader refuses now: their failing case is a plan built in code (below)."""


def _params() -> list[Any]:
    params = []
    for path in CASE_FILES:
        data = load_cases(path)
        for case in data["cases"]:
            params.append(pytest.param(data["rule"], data["base"], case, id=f"{path.stem}-{case['name']}"))
    return params


@pytest.mark.parametrize(("code", "base", "case"), _params())
def test_case(code: str, base: str, case: dict[str, Any], tmp_path: Path) -> None:
    if "refused" in case:  # the spec is refused at load: the rule's case is the refusal, at its line
        line, col, message = case["refused"]
        prepared = prepare(case, base, tmp_path)
        with pytest.raises(SpecError) as refusal:
            plan_fabric(load_spec(prepared.spec_file))
        (problem,) = refusal.value.problems
        assert (problem.line, problem.col) == (line, col) and message in problem.message, (problem,
                                                                                             numbered(prepared.text))
        return
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
    assert failing or (rule.code in REFUSED_AT_LOAD and any("refused" in c for c in cases)), \
        f"{rule.code}: no failing case"
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


def test_two_links_on_one_port_in_a_plan_built_in_code_are_fg202() -> None:
    """A library caller's own plan (``lint_fabric(spec, fabric)``) can still put two links on one port, which a
    spec cannot since the loader refuses it: FG202 names the port and both peers."""
    from dataclasses import replace

    from fabgen.lint import lint
    from fabgen.lint.config import LintConfig

    spec = load_spec(base_path("lab"))
    fabric = plan_fabric(spec)
    first = next(link for link in fabric.links if link.role == "host-leaf")
    other = next(link for link in fabric.links if link.role == "host-leaf" and link.a_device != first.a_device)
    doubled = replace(other, b_device=first.b_device, b_port=first.b_port)
    plan = replace(fabric, links=(*fabric.links, doubled))
    findings = lint(spec, plan, config=LintConfig(select=("FG202",)))
    # the leaf port carries first and doubled; other's NIC carries other and doubled
    assert sorted(f.message.split(" carries")[0] for f in findings) == sorted(
        [f"{first.b_device}:{first.b_port}", f"{other.a_device}:{other.a_port}"]), findings
    port = next(f for f in findings if f.message.startswith(f"{first.b_device}:{first.b_port} carries 2 cables"))
    assert first.a_device in port.message and other.a_device in port.message
