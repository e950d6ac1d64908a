"""The output check of the ``eos`` target (:mod:`fabgen.targets.eos.config`), apart from its renderer.

Why apart: the one-device cache (:mod:`fabgen.plan_cache`) re-runs it on every
hit; importing it must cost the EOS grammar only, not Jinja2 and the planner.

Why through shapes: the full check walks every line in Python; a fleet's
configs are a handful of shapes (:mod:`fabgen.targets.eos.shape`), so the walk
runs once per shape and each config costs a few regex passes. A shape that
fails sends the real text through the full check, for its exact problems.

Why some texts cost one identity test: the renderer fills most configs from a
shape's pieces, and :mod:`fabgen.targets.eos.slots` proves from the values
alone (without the regex passes) that such a text's shape is one whose verdict
is known clean, and vouches for that very string object (:data:`PROVED_CLEAN`). Any other
text, or any doubt, goes the way above.
"""

from __future__ import annotations

from fabgen.errors import Problem
from fabgen.targets.eos.session import check_session
from fabgen.targets.eos.shape import ShapeVerdicts
from fabgen.targets.eos.syntax import checked_text
from fabgen.targets.proved_clean import ProvedClean


def full_check(path: str, text: str) -> list[Problem]:
    """Every line against the EOS grammar of :mod:`fabgen.targets.eos.syntax`, as ``path:line:col`` problems."""
    if path.endswith(".session"):
        return check_session(path, text)
    return [Problem(issue.message, file=path, line=issue.line, col=issue.col) for issue in checked_text(text)]


_VERDICTS = ShapeVerdicts(lambda kind, text: not full_check(kind, text))


PROVED_CLEAN = ProvedClean()
"""The texts :mod:`fabgen.targets.eos.slots` proved clean (a shape's verdict, by its slots)."""


def check_eos_config(path: str, text: str) -> list[Problem]:
    """:func:`full_check`'s problems; a text whose shape passed it has none, so only a failing one is walked."""
    if PROVED_CLEAN.take(path, text):
        return []
    if _VERDICTS.clean(".session" if path.endswith(".session") else ".cfg", text):
        return []
    return full_check(path, text)
