"""fabgen: one declarative spec for a RoCE GPU fabric.

The public API is a handful of verbs, each a pure function of its inputs
(``write_files`` and ``generate`` aside), safe to call from threads; inputs are
never mutated::

    import fabgen
    spec = fabgen.load_spec("examples/lab/spec.yaml")   # or YAML text
    fabric = fabgen.plan_fabric(spec)
    files = fabgen.render_fabric(fabric, targets=["eos"], devices=["leaf-*"])
    findings = fabgen.lint_fabric(spec, fabric)
    fabgen.write_files(files, "out/lab")

The verbs are named apart from the subpackages (:mod:`fabgen.plan`,
:mod:`fabgen.lint`, :mod:`fabgen.targets`), so importing one never shadows the
other. Every input error is a :class:`FabgenError` whose ``lines()`` read
``file:line:col: message``. Heavy modules are imported on first use, so
``import fabgen`` stays cheap for the CLI and for Ansible.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fabgen._version import __version__
from fabgen.errors import FabgenError, OutputError, Problem, SpecError

if TYPE_CHECKING:
    from fabgen.pipeline import generate, lint_fabric, load_spec, plan_fabric, render_fabric, write_files

_VERBS = frozenset(("generate", "lint_fabric", "load_spec", "plan_fabric", "render_fabric", "write_files"))


def __getattr__(name: str) -> Any:
    """The verbs, imported from :mod:`fabgen.pipeline` on first use (PEP 562).

    Why lazily: ``fabgen.pipeline`` pulls in pydantic, ruamel and the planner
    (about half a second); ``python -m fabgen.cli`` and ``import fabgen.cli``
    import this package first, and the one-device cache hit must not pay for that.
    """
    if name in _VERBS:
        import fabgen.pipeline

        return getattr(fabgen.pipeline, name)
    raise AttributeError(f"module 'fabgen' has no attribute {name!r}")


__all__ = [
    "FabgenError",
    "OutputError",
    "Problem",
    "SpecError",
    "__version__",
    "generate",
    "lint_fabric",
    "load_spec",
    "plan_fabric",
    "render_fabric",
    "write_files",
]
