"""Inline suppression in the spec: ``# fabgen: disable=FG203`` and ``# fabgen: disable-file=FG206``.

* ``disable=`` at the end of a line silences those rules for findings located on
  that line; on a line of its own, for the next line that is not a comment.
* ``disable-file=`` anywhere silences them for every finding in the file.

Rules are named by code or slug, comma-separated; ``all`` names every rule.
Text after the list is a free reason: ``# fabgen: disable=FG206 GPU 3 is
behind the other socket on this SKU``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabgen.lint.finding import Finding

_DIRECTIVE = re.compile(
    r"#\s*fabgen:\s*(?P<kind>disable-file|disable)\s*=\s*(?P<names>[A-Za-z0-9_-]+(?:\s*,\s*[A-Za-z0-9_-]+)*)"
)


@dataclass(frozen=True)
class Suppressions:
    file: str
    whole_file: frozenset[str]
    by_line: dict[int, frozenset[str]]

    def covers(self, finding: Finding) -> bool:
        if finding.location.file != self.file:
            return False
        names = self.whole_file | self.by_line.get(finding.location.line, frozenset())
        return bool(names) and ("all" in names or finding.code.lower() in names or finding.slug in names)


def parse_suppressions(text: str, file: str) -> Suppressions:
    """Collect the directives of a YAML text (cheap: only lines containing ``fabgen:`` are parsed)."""
    whole: set[str] = set()
    by_line: dict[int, set[str]] = {}
    pending: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        directive = _DIRECTIVE.search(line) if "fabgen:" in line else None
        names = {n.strip().lower() for n in directive.group("names").split(",")} if directive else set()
        if directive and directive.group("kind") == "disable-file":
            whole |= names
            continue
        if stripped.startswith("#") or not stripped:
            if directive:
                pending |= names
            continue
        if pending:
            by_line.setdefault(number, set()).update(pending)
            pending = set()
        if directive:
            by_line.setdefault(number, set()).update(names)
    return Suppressions(file, frozenset(whole), {k: frozenset(v) for k, v in by_line.items()})
