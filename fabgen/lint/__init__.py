"""The fabgen linter: do switches, NICs and NCCL agree, and does the site match the plan?

::

    from fabgen.lint import lint
    findings = lint(spec, plan)                                  # the spec alone
    findings = lint(spec, plan, wiring=["lldp/"])                # plus observed cabling
    findings = lint(spec, plan, deployed="collected/")           # plus deployed files
    findings = lint(spec, plan, config={"ignore": ["FG208"]})

Rules live in :mod:`fabgen.lint.rules` (one module per family) and are listed
in :data:`fabgen.lint.registry.RULES`; ``fabgen rules`` and ``fabgen explain``
print their documentation.
"""

from __future__ import annotations

import sys
import types

from fabgen.lint.config import LintConfig, config_for, find_config, load_config
from fabgen.lint.docs import explain, rules_markdown
from fabgen.lint.engine import LintResult, lint, run_lint
from fabgen.lint.finding import Finding, Location, Severity
from fabgen.lint.formats import FORMATS, format_findings
from fabgen.lint.registry import RULES, Rule, get_rule

__all__ = [
    "FORMATS",
    "RULES",
    "Finding",
    "LintConfig",
    "LintResult",
    "Location",
    "Rule",
    "Severity",
    "config_for",
    "explain",
    "find_config",
    "format_findings",
    "get_rule",
    "lint",
    "load_config",
    "rules_markdown",
    "run_lint",
]


class _CallableModule(types.ModuleType):
    """``fabgen.lint`` is both this package and the public API's verb.

    Importing the package replaces the ``fabgen.lint`` function in :mod:`fabgen`'s
    namespace by this module (Python binds submodules as attributes of their
    parent); calling the module keeps ``fabgen.lint(spec, plan)`` working after that.
    """

    def __call__(self, *args: object, **kwargs: object) -> list[Finding]:
        return lint(*args, **kwargs)  # type: ignore[arg-type]


sys.modules[__name__].__class__ = _CallableModule
