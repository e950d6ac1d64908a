"""fabgen: one declarative spec for a RoCE GPU fabric.

The public API is five verbs, each a pure function of its inputs (``write``
aside), safe to call from threads; inputs are never mutated::

    import fabgen
    spec = fabgen.load_spec("examples/lab/spec.yaml")   # or YAML text
    fabric = fabgen.plan(spec)
    files = fabgen.render(fabric, targets=["eos"], devices=["leaf-*"])
    findings = fabgen.lint(spec, fabric)
    fabgen.write(files, "out/lab")

Every input error is a :class:`FabgenError` whose ``lines()`` read
``file:line:col: message``. Heavy modules are imported on first use, so
``import fabgen`` stays cheap for the CLI and for Ansible.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

# The API's verbs share their names with subpackages (fabgen.plan, fabgen.render,
# fabgen.lint). Importing a package binds it as an attribute of its parent the
# first time, so load the (light) packages here, before the functions are bound:
# a later ``import fabgen.render.registry`` then cannot replace ``fabgen.render``.
import fabgen.lint
import fabgen.plan
import fabgen.render
from fabgen.errors import FabgenError, OutputError, Problem, SpecError
from fabgen.pipeline import __version__, generate, load_spec, plan, render

if TYPE_CHECKING:
    from fabgen.plan import FabricPlan
    from fabgen.spec import ClusterSpec
    from fabgen.writer import Drift, WriteResult

__all__ = [
    "FabgenError",
    "OutputError",
    "Problem",
    "SpecError",
    "__version__",
    "generate",
    "lint",
    "load_spec",
    "plan",
    "render",
    "write",
]


def lint(spec: ClusterSpec, fabric: FabricPlan | None = None, wiring: list[Path] | None = None,
         deployed: Path | None = None, config: Any = None) -> list[Any]:
    """Check that switches, NICs and NCCL agree (and, given files, that the site matches the plan).

    Returns :class:`fabgen.lint.Finding` objects, most severe first.
    """
    import importlib

    _lint = importlib.import_module("fabgen.lint")  # the package, not this function (same name)

    return _lint.lint(spec, fabric if fabric is not None else plan(spec), wiring=wiring, deployed=deployed,
                      config=config)


def write(files: dict[str, str], out_dir: str | Path, check: bool = False) -> WriteResult | Drift:
    """Write a rendered ``{path: text}`` tree atomically (or, with ``check``, diff it against ``out_dir``)."""
    from fabgen.pipeline import write as _write

    return _write(files, Path(out_dir), check=check)
