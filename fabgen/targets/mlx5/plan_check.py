"""The output check of ``hosts/NAME/roce-nic.conf``, apart from its renderer.

Why apart: the one-device cache (:mod:`fabgen.plan_cache`) re-runs it on every
hit; importing it must cost a regular expression, not Jinja2 and the planner.
"""

from __future__ import annotations

import re

from fabgen.errors import Problem

_PLAN_LINE = re.compile(r"(?:#[^\x00-\x1f\x7f]*|[A-Z][A-Z_]*=[A-Za-z0-9 ._:/-]*)?")
"""A comment, a blank line, or KEY=VALUE with a value of plain words: what the script's parser takes."""


def plan_problems(path: str, text: str) -> list[Problem]:
    """Every line of a plan file is one the script's strict reader can take as data."""
    return [Problem(f"unexpected line {line!r}", file=path, line=number)
            for number, line in enumerate(text.split("\n"), 1) if not _PLAN_LINE.fullmatch(line)]
