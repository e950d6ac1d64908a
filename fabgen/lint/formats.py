"""Findings as text for people, parsable lines for editors, JSON, GitHub annotations and SARIF 2.1.0.

Every format reads the same :class:`~fabgen.lint.finding.Finding` list in the
order given (the engine sorts it) and produces the same text for the same
findings: no timestamps, no absolute paths that were not given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from fabgen.errors import Problem, printable
from fabgen.lint.finding import Finding, Location
from fabgen.lint.format_names import FORMATS as FORMATS
from fabgen.lint.registry import RULES, Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"


def _where(location: Location) -> str:
    """``file:line:col``, with 1:1 standing in for 'the whole file' so every line parses the same way."""
    return f"{location.file}:{location.line or 1}:{location.col or 1}"


def summary_line(findings: Sequence[Finding], failures: Sequence[Problem] = ()) -> str:
    """The last line of the text report; never "No problems found." when some input could not be linted."""
    if failures:
        found = f"; {summary_line(findings)[0].lower()}{summary_line(findings)[1:]}" if findings else ""
        return (f"Lint did not run completely: {len(failures)} input error{'s' if len(failures) != 1 else ''} "
                f"(listed above){found}")
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    if not findings:
        return "No problems found."
    parts = [f"{errors} error{'s' if errors != 1 else ''}"] if errors else []
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    return "Found " + " and ".join(parts) + "."


def format_text(findings: Sequence[Finding], failures: Sequence[Problem] = ()) -> str:
    lines = [f"{p} [input error]" for p in failures]  # also on stderr; here so that a report file is complete
    for f in findings:
        lines.append(f"{_where(f.location)}: {f.severity} {f.code} [{f.slug}] {_one_line(f.message)}")
        if f.hint:
            lines.append(f"    hint: {f.hint}")
        for rel in f.related:
            lines.append(f"    see: {rel}" + (f" ({rel.note})" if rel.note else ""))
    lines.append(summary_line(findings, failures))
    return "\n".join(lines) + "\n"


def _problem_where(problem: Problem) -> str:
    return f"{printable(problem.file, 4096)}:{problem.line or 1}:{problem.col or 1}"


def _problem_text(problem: Problem) -> str:
    return printable(problem.message) + (f" (at {printable(problem.path, 200)})" if problem.path else "")


def format_parsable(findings: Sequence[Finding], failures: Sequence[Problem] = ()) -> str:
    """``file:line:col: [severity] message (CODE)``: one line per finding, as editors and pre-commit expect."""
    head = "".join(f"{_problem_where(p)}: [error] {_problem_text(p)} (input)\n" for p in failures)
    return head + "".join(f"{_where(f.location)}: [{f.severity}] {_one_line(f.message)} ({f.code})\n" for f in findings)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _location_dict(location: Location) -> dict[str, object]:
    out: dict[str, object] = {"file": location.file, "line": location.line, "col": location.col}
    if location.path:
        out["path"] = location.path
    if location.note:
        out["note"] = location.note
    return out


def _problem_dict(problem: Problem) -> dict[str, object]:
    out: dict[str, object] = {"file": problem.file, "line": problem.line, "col": problem.col,
                              "message": printable(problem.message)}
    if problem.path:
        out["path"] = printable(problem.path, 200)
    return out


def format_json(findings: Sequence[Finding], failures: Sequence[Problem] = ()) -> str:
    """A list of findings; when some input could not be linted, an object whose ``error`` says so (a consumer that
    expects the list fails loudly instead of reading ``[]`` as clean)."""
    data: list[dict[str, object]] = [
        {
            "code": f.code,
            "slug": f.slug,
            "severity": f.severity,
            "message": f.message,
            **_location_dict(f.location),
            "hint": f.hint,
            "related": [_location_dict(r) for r in f.related],
        }
        for f in findings
    ]
    if failures:
        failed = {"error": {"message": f"lint did not run completely: {len(failures)} input error(s)",
                            "problems": [_problem_dict(p) for p in failures]},
                  "findings": data}
        return json.dumps(failed, indent=2, sort_keys=True) + "\n"
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(findings: Sequence[Finding], failures: Sequence[Problem] = ()) -> str:
    """GitHub Actions workflow commands: ``::error file=...,line=...,col=...,title=...::message``."""
    lines = []
    for p in failures:
        props = [f"file={_escape_property(p.file)}"]
        if p.line:
            props += [f"line={p.line}", f"col={p.col or 1}"]
        props.append(f"title={_escape_property('fabgen input error')}")
        lines.append(f"::error {','.join(props)}::{_escape_data(_problem_text(p))}")
    for f in findings:
        loc = f.location
        props = [f"file={_escape_property(loc.file)}"]
        if loc.line:
            props += [f"line={loc.line}", f"col={loc.col or 1}"]
        props.append(f"title={_escape_property(f'{f.code} {f.slug}')}")
        message = f.message + (f"\nhint: {f.hint}" if f.hint else "")
        lines.append(f"::{f.severity} {','.join(props)}::{_escape_data(message)}")
    return "".join(line + "\n" for line in lines)


def _uri(file: str) -> tuple[str, bool]:
    """(URI, relative?): relative paths stay relative (resolved against %SRCROOT%), absolute ones become file URIs."""
    path = Path(file)
    if path.is_absolute():
        return path.as_uri(), False
    return str(PurePosixPath(*path.parts)) if path.parts else file, True


def _physical(location: Location) -> dict[str, object]:
    uri, relative = _uri(location.file)
    artifact: dict[str, object] = {"uri": uri}
    if relative:
        artifact["uriBaseId"] = "%SRCROOT%"
    physical: dict[str, object] = {"artifactLocation": artifact}
    if location.line:
        physical["region"] = {"startLine": location.line, "startColumn": location.col or 1}
    return physical


def _sarif_rule(rule: Rule) -> dict[str, object]:
    docs = rule.docs
    full = f"{docs.get('What it checks', '')}\n\n{docs.get('Why it matters', '')}".strip()
    markdown = "\n\n".join(f"**{section}**\n\n{docs[section]}" for section in
                           ("What it checks", "Why it matters", "Example", "Fix") if docs.get(section))
    return {
        "id": rule.code,
        "name": rule.slug,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": docs.get("Fix", ""), "markdown": markdown},
        "defaultConfiguration": {"level": rule.severity},
        "properties": {"family": rule.family},
    }


def _notification(problem: Problem) -> dict[str, object]:
    location = Location(problem.file, problem.line, problem.col, problem.path, "")
    return {"level": "error", "message": {"text": _problem_text(problem)},
            "locations": [{"physicalLocation": _physical(location)}]}


def format_sarif(findings: Sequence[Finding], failures: Sequence[Problem] = ()) -> str:
    from fabgen.pipeline import __version__

    index = {rule.code: i for i, rule in enumerate(RULES)}
    results = []
    for f in findings:
        result: dict[str, object] = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": f.severity,
            "message": {"text": f.message + (f" Hint: {f.hint}" if f.hint else "")},
            "locations": [{"physicalLocation": _physical(f.location)}],
        }
        if f.location.path:
            result["locations"][0]["logicalLocations"] = [  # type: ignore[index]
                {"fullyQualifiedName": f.location.path, "kind": "member"}]
        if f.related:
            result["relatedLocations"] = [
                {"id": i, "physicalLocation": _physical(r), "message": {"text": r.note or "related"}}
                for i, r in enumerate(f.related, start=1)
            ]
        results.append(result)
    log = {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": {
                "name": "fabgen",
                "version": __version__,
                "rules": [_sarif_rule(rule) for rule in RULES],
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    if failures:  # SARIF 2.1.0 3.20: the run did not complete; say why, where
        log["runs"][0]["invocations"] = [{  # type: ignore[index]
            "executionSuccessful": False,
            "toolExecutionNotifications": [_notification(p) for p in failures],
        }]
    return json.dumps(log, indent=2, sort_keys=True) + "\n"


FORMATTERS: dict[str, Callable[[Sequence[Finding], Sequence[Problem]], str]] = {
    "text": format_text,
    "parsable": format_parsable,
    "json": format_json,
    "github": format_github,
    "sarif": format_sarif,
}


def format_findings(findings: Sequence[Finding], fmt: str = "text", failures: Sequence[Problem] = ()) -> str:
    """Render ``findings`` in one of :data:`FORMATS`; ``failures`` are input problems that kept lint from running on
    some spec or evidence, which every format carries so a machine reader cannot mistake the run for clean."""
    return FORMATTERS[fmt](findings, failures)
