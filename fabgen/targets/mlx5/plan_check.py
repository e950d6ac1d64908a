"""The output check of ``hosts/NAME/roce-nic.conf``, apart from its renderer.

Why apart: the one-device cache (:mod:`fabgen.plan_cache`) re-runs it on every
hit; importing it must cost a regular expression, not Jinja2 and the planner.
"""

from __future__ import annotations

import re
from functools import lru_cache

from fabgen.errors import Problem

_PLAN_LINE = re.compile(r"(?:#[^\x00-\x1f\x7f]*|[A-Z][A-Z_]*=[A-Za-z0-9 ._:/-]*)?")
"""A comment, a blank line, or KEY=VALUE with a value of plain words: what the script's parser takes."""


def plan_problems(path: str, text: str) -> list[Problem]:
    """Every line of a plan file is one the script's strict reader can take as data.

    The rule is about one line alone and hosts share all lines but two, so each
    distinct line is matched once per process.
    """
    lines = text.split("\n")
    if all(map(_plan_line, lines)):
        return []
    return [Problem(f"unexpected line {line!r}", file=path, line=number)
            for number, line in enumerate(lines, 1) if not _plan_line(line)]


@lru_cache(maxsize=4096)
def _plan_line(line: str) -> bool:
    return _PLAN_LINE.fullmatch(line) is not None
