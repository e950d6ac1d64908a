"""The output check of the ``eos`` target (:mod:`fabgen.targets.eos.config`), apart from its renderer.

Why apart: the one-device cache (:mod:`fabgen.plan_cache`) re-runs it on every
hit; importing it must cost the EOS grammar only, not Jinja2 and the planner.
"""

from __future__ import annotations

from fabgen.errors import Problem
from fabgen.targets.eos.session import check_session
from fabgen.targets.eos.syntax import checked_text


def check_eos_config(path: str, text: str) -> list[Problem]:
    """Every line against the EOS grammar of :mod:`fabgen.targets.eos.syntax`, as ``path:line:col`` problems."""
    if path.endswith(".session"):
        return check_session(path, text)
    return [Problem(issue.message, file=path, line=issue.line, col=issue.col) for issue in checked_text(text)]
