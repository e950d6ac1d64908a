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

Names are imported on first use: the command line imports this package to
register its subcommands, and ``fabgen validate`` should not pay for the rules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # `X as X`: an explicit re-export, for type checkers (at run time __getattr__ imports)
    from fabgen.lint.config import LintConfig as LintConfig
    from fabgen.lint.config import config_for as config_for
    from fabgen.lint.config import find_config as find_config
    from fabgen.lint.config import load_config as load_config
    from fabgen.lint.docs import explain as explain
    from fabgen.lint.docs import rules_markdown as rules_markdown
    from fabgen.lint.engine import LintResult as LintResult
    from fabgen.lint.engine import lint as lint
    from fabgen.lint.engine import run_lint as run_lint
    from fabgen.lint.finding import Finding as Finding
    from fabgen.lint.finding import Location as Location
    from fabgen.lint.finding import Severity as Severity
    from fabgen.lint.formats import FORMATS as FORMATS
    from fabgen.lint.formats import format_findings as format_findings
    from fabgen.lint.registry import RULES as RULES
    from fabgen.lint.registry import Rule as Rule
    from fabgen.lint.registry import get_rule as get_rule

_EXPORTS: dict[str, str] = {
    "FORMATS": "formats",
    "RULES": "registry",
    "Finding": "finding",
    "LintConfig": "config",
    "LintResult": "engine",
    "Location": "finding",
    "Rule": "registry",
    "Severity": "finding",
    "config_for": "config",
    "explain": "docs",
    "find_config": "config",
    "format_findings": "formats",
    "get_rule": "registry",
    "lint": "engine",
    "load_config": "config",
    "rules_markdown": "docs",
    "run_lint": "engine",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
