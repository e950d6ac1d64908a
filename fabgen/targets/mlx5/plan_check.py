"""The output check of ``hosts/NAME/roce-nic.conf``, apart from its renderer.

Why apart: the one-device cache (:mod:`fabgen.plan_cache`) re-runs it on every
hit; importing it must cost a regular expression, not Jinja2 and the planner.
"""

from __future__ import annotations

import re
from functools import lru_cache

from fabgen.errors import Problem
from fabgen.targets.proved_clean import ProvedClean

_PLAN_LINE = re.compile(r"(?:#[^\x00-\x1f\x7f]*|[A-Z][A-Z_]*=[A-Za-z0-9 ._:/-]*)?")
"""A comment, a blank line, or KEY=VALUE with a value of plain words: what the script's parser takes."""


def plan_problems(path: str, text: str) -> list[Problem]:
    """Every line of a plan file is one the script's strict reader can take as data.

    The rule is about one line alone and hosts share all lines but two, so each
    distinct line is matched once per process; a text :func:`vouch_named` proved
    from its shape costs one identity test.
    """
    if PROVED_CLEAN.take(path, text):
        return []
    lines = text.split("\n")
    if all(map(_plan_line, lines)):
        return []
    return [Problem(f"unexpected line {line!r}", file=path, line=number)
            for number, line in enumerate(lines, 1) if not _plan_line(line)]


@lru_cache(maxsize=4096)
def _plan_line(line: str) -> bool:
    return _PLAN_LINE.fullmatch(line) is not None


_VALUE_WORD = re.compile(r"[A-Za-z0-9 ._:/-]+")
"""Characters a plan line's VALUE takes: all of them printable, so a comment takes them too."""

PROVED_CLEAN = ProvedClean()
"""Plan files :func:`vouch_named` proved clean (:mod:`fabgen.targets.proved_clean`)."""


def shape_clean(path: str, parts: list[str], sentinel: str) -> bool:
    """The shape (``parts`` joined by ``sentinel``, where each host's name goes) passes :func:`plan_problems`,
    and ``sentinel`` is value characters starting with a lower-case letter.

    Why that sentinel: it can then stand in a line only inside a comment or a ``KEY=VALUE`` line's value (a
    lower-case letter is no ``#``, no ``=`` and no character of a key), so a name of value characters put in
    its place leaves each line of the shape what it was (a comment or a value of those characters), and no
    line break comes in. :func:`vouch_named` relies on exactly this."""
    return (_VALUE_WORD.fullmatch(sentinel) is not None and sentinel[0].islower()
            and not plan_problems(path, sentinel.join(parts)))


def vouch_named(path: str, text: str, name: str, clean: bool) -> None:
    """Vouch for ``text``, a shape :func:`shape_clean` passed (``clean``) with ``name`` in the sentinel's
    places, when ``name`` is value characters only: then every line is as clean as the shape's."""
    if clean and _VALUE_WORD.fullmatch(name):
        PROVED_CLEAN.vouch(path, text)
