"""Run the rules: gather evidence, call each enabled rule once, apply severities and suppressions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabgen._gc import paused_gc
from fabgen.lint.config import LintConfig, config_from_mapping
from fabgen.lint.context import LintContext
from fabgen.lint.deployed import Deployed, read_deployed
from fabgen.lint.finding import Finding
from fabgen.lint.observed import Evidence, Observed, evidence_from_links, normalise, read_evidence
from fabgen.lint.registry import RULES
from fabgen.lint.suppress import parse_suppressions
from fabgen.wiring import ObservedLink

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan
    from fabgen.spec import ClusterSpec

WiringInput = Observed | Evidence | Sequence[ObservedLink] | Sequence[Path | str] | Path | str | None
DeployedInput = Deployed | Path | str | None


@dataclass(frozen=True)
class LintResult:
    findings: list[Finding]
    notes: tuple[str, ...]
    """What could not be checked (a switch OS without a parser), for the operator's eyes."""


def _observed(wiring: WiringInput, plan: FabricPlan) -> Observed | None:
    if wiring is None:
        return None
    if isinstance(wiring, Observed):
        return wiring
    if isinstance(wiring, Evidence):
        return normalise(wiring, plan)
    if isinstance(wiring, (str, Path)):
        return normalise(read_evidence([wiring]), plan)
    items = list(wiring)
    if all(isinstance(item, ObservedLink) for item in items):
        return normalise(evidence_from_links(items), plan)  # type: ignore[arg-type]
    return normalise(read_evidence(items), plan)  # type: ignore[arg-type]


def _config(config: LintConfig | dict[str, Any] | None) -> LintConfig:
    if config is None:
        return LintConfig()
    if isinstance(config, LintConfig):
        return config
    return config_from_mapping(config, "config")


def run_lint(spec: ClusterSpec, plan: FabricPlan | None = None, wiring: WiringInput = None,
             deployed: DeployedInput = None, config: LintConfig | dict[str, Any] | None = None) -> LintResult:
    """:func:`fabgen.lint.lint`, plus the notes a command line shows on stderr."""
    if plan is None:
        from fabgen.plan import build_plan

        plan = build_plan(spec, spec.source)
    settings = _config(config)
    found = deployed if isinstance(deployed, Deployed) or deployed is None else read_deployed(deployed, plan)
    with paused_gc():
        observed = _observed(wiring, plan)
    ctx = LintContext(spec, plan, observed, found)
    doc = ctx.doc
    suppressions = parse_suppressions(doc.text, doc.file) if doc is not None else None
    findings: dict[tuple[object, ...], Finding] = {}
    with paused_gc():  # the indexes rules build are large and all stay alive: nothing for the collector to find
        for rule in RULES:
            severity = settings.severity_of(rule)
            if severity is None:
                continue
            for hit in rule.check(ctx):
                finding = Finding(rule.code, rule.slug, severity, hit.message, hit.location, hit.hint, hit.related)
                if suppressions is not None and suppressions.covers(finding):
                    continue
                findings.setdefault((finding.code, finding.location, finding.message), finding)
    ordered = sorted(findings.values(), key=Finding.sort_key)
    return LintResult(ordered, found.notes if found is not None else ())


def lint(spec: ClusterSpec, plan: FabricPlan | None = None, wiring: WiringInput = None,
         deployed: DeployedInput = None, config: LintConfig | dict[str, Any] | None = None) -> list[Finding]:
    """Check that switches, NICs and NCCL agree, and (given evidence) that the site matches the plan.

    ``wiring``: LLDP captures / cabling CSVs (paths, or :class:`~fabgen.wiring.ObservedLink`
    objects); ``deployed``: a directory in fabgen's output layout; ``config``: a
    :class:`LintConfig` or the mapping of a ``lint`` section. Returns findings,
    most severe first, then by file, line and rule. Raises
    :class:`~fabgen.errors.FabgenError` for evidence it cannot read.
    """
    return run_lint(spec, plan, wiring, deployed, config).findings
