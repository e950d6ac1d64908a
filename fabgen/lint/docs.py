"""Rule documentation for people: ``fabgen rules``, ``fabgen explain``, and the README table."""

from __future__ import annotations

import textwrap

from fabgen.lint.registry import RULES, SECTIONS, Rule


def explain(rule: Rule) -> str:
    """The full documentation of one rule, as ``fabgen explain FG101`` prints it."""
    docs = rule.docs
    lines = [f"{rule.code} {rule.slug} ({rule.severity}, {rule.family})", "", docs["summary"]]
    for section in SECTIONS:
        lines += ["", section, textwrap.indent(docs.get(section, ""), "    ")]
    return "\n".join(lines) + "\n"


def rules_table() -> str:
    """One line per rule: code, default severity, slug, summary."""
    width = max(len(r.slug) for r in RULES)
    return "".join(f"{r.code}  {r.severity:<7}  {r.slug:<{width}}  {r.summary}\n" for r in RULES)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rules_markdown() -> str:
    """The README's "Lint rules" table (between ``<!-- rules:start -->`` and ``<!-- rules:end -->``)."""
    lines = ["| Code | Name | Severity | What it catches |", "| --- | --- | --- | --- |"]
    for rule in RULES:
        lines.append(f"| {rule.code} | `{rule.slug}` | {rule.severity} | {_cell(rule.summary)} |")
    return "\n".join(lines) + "\n"
