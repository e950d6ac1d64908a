"""``fabgen lint``, ``fabgen rules`` and ``fabgen explain``: the linter's command line.

:func:`register` is called by :mod:`fabgen.cli` with its ``command(name,
handler, help)`` factory. Exit codes: 0 clean (warnings allowed unless
``--strict``), 1 findings, 2 bad input (a spec that does not load, evidence that
cannot be read, an unknown rule).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from fabgen.errors import FabgenError, Problem
from fabgen.spec_arg import jobs_arg, spec_path

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2

Command = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def _split(values: list[str] | None) -> list[str]:
    """``--select FG1,FG2 --select FG4`` -> ``[FG1, FG2, FG4]``."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _cmd_lint(args: argparse.Namespace) -> int:
    from fabgen.lint.config import LintConfig, config_for, load_config
    from fabgen.lint.deployed import read_deployed
    from fabgen.lint.engine import run_lint
    from fabgen.lint.finding import Finding
    from fabgen.lint.formats import format_findings
    from fabgen.pipeline import load_spec, plan_fabric

    if (args.wiring or args.deployed) and len(args.spec) > 1:
        raise FabgenError([Problem("--wiring and --deployed compare one spec with one site: give exactly one SPEC",
                                   file="fabgen")])
    explicit = load_config(args.config) if args.config else None
    findings: list[Finding] = []
    notes: list[str] = []
    failures: list[Problem] = []
    strict = bool(args.strict)
    for path in args.spec:
        try:
            if explicit is not None:
                config = explicit
            elif args.no_config:
                config = LintConfig()
            else:
                config = config_for(path)
            config = config.override(_split(args.select), _split(args.ignore), args.strict)
            spec = load_spec(Path(path))
            plan = plan_fabric(spec)
            deployed = read_deployed(args.deployed, plan, args.jobs) if args.deployed else None
            result = run_lint(spec, plan, wiring=args.wiring or None, deployed=deployed, config=config)
        except FabgenError as exc:
            for line in exc.lines():
                print(line, file=sys.stderr)
            failures += exc.problems
            continue
        findings += result.findings
        notes += result.notes
        strict = strict or config.strict
    findings.sort(key=Finding.sort_key)
    text = format_findings(findings, args.format, failures)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    elif not (args.quiet and not findings and not failures and args.format == "text"):
        sys.stdout.write(text)
    for note in notes:
        print(f"fabgen: note: {note}", file=sys.stderr)
    if failures:
        return EXIT_INPUT
    if any(f.severity == "error" for f in findings) or (findings and strict):
        return EXIT_FINDINGS
    return EXIT_OK


def _cmd_rules(args: argparse.Namespace) -> int:
    from fabgen.lint.docs import rules_markdown, rules_table

    if args.format == "markdown":
        sys.stdout.write(rules_markdown())
    elif args.format == "json":
        import json

        from fabgen.lint.registry import RULES

        rows = [{"code": r.code, "slug": r.slug, "severity": r.severity, "family": r.family, "summary": r.summary}
                for r in RULES]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    else:
        sys.stdout.write(rules_table())
    return EXIT_OK


def _cmd_explain(args: argparse.Namespace) -> int:
    from fabgen.lint.docs import explain
    from fabgen.lint.registry import get_rule, suggest

    bad = False
    for name in args.rule:
        rule = get_rule(name)
        if rule is None:
            guess = suggest(name)
            hint = f"; did you mean {guess}?" if guess else " (see `fabgen rules`)"
            print(f"fabgen: unknown rule {name!r}{hint}", file=sys.stderr)
            bad = True
            continue
        sys.stdout.write(explain(rule))
    return EXIT_INPUT if bad else EXIT_OK


def register(command: Command) -> None:
    """Add ``lint``, ``rules`` and ``explain`` to the ``fabgen`` command line."""
    from fabgen.lint.format_names import FORMATS

    p = command("lint", _cmd_lint,
                "check that switches, NICs and NCCL agree; with --wiring/--deployed, that the site matches the plan")
    p.add_argument("spec", nargs="+", metavar="SPEC", type=spec_path)
    p.add_argument("--wiring", action="append", metavar="PATH",
                   help="LLDP captures (lldpctl -f json/json0/keyvalue, one file per device) or cabling CSV; "
                        "files or directories, repeatable")
    p.add_argument("--deployed", metavar="DIR", help="a tree in fabgen's output layout collected from the devices")
    p.add_argument("-j", "--jobs", type=jobs_arg, default=1, metavar="N",
                   help="with --deployed, render and parse the switch files in N worker processes (same findings; "
                        "worth it for thousands of switches)")
    p.add_argument("--format", choices=FORMATS, default="text")
    p.add_argument("--select", action="append", metavar="RULES",
                   help="only these rules: codes, prefixes (FG1) or slugs, comma-separated; replaces the config's")
    p.add_argument("--ignore", action="append", metavar="RULES", help="skip these rules (added to the config's)")
    p.add_argument("--strict", action="store_true", help="warnings fail the run too (exit 1)")
    p.add_argument("--config", metavar="FILE", help="a .fabgen.yaml or pyproject.toml to use instead of searching")
    p.add_argument("--no-config", action="store_true", help="ignore configuration files")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing when there is nothing to report")

    p = command("rules", _cmd_rules, "list the lint rules")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")

    p = command("explain", _cmd_explain, "print what a lint rule checks, why, an example and the fix")
    p.add_argument("rule", nargs="+", metavar="RULE", help="code (FG101) or slug (roce-dscp-not-lossless)")
