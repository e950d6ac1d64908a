"""The stages as plain functions: load, plan, render, lint, write (and check).

Each is a pure function of its inputs (write aside), safe to call from threads;
inputs are never mutated. :mod:`fabgen` re-exports them as the public API.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabgen.errors import FabgenError, Problem, SpecError
from fabgen.plan import FabricPlan, build_plan
from fabgen.source import load_source
from fabgen.spec import ClusterSpec, validate_spec
from fabgen.writer import Drift, WriteResult, check_tree, write_tree

if TYPE_CHECKING:
    from fabgen.lint.finding import Finding

from fabgen._version import __version__ as __version__


def load_spec(source: str | Path) -> ClusterSpec:
    """Load and validate a spec from a path, or from YAML text (a ``str`` containing a newline)."""
    if isinstance(source, str) and "\n" in source:
        return validate_spec(load_source("<string>", text=source))
    return validate_spec(load_source(source))


def plan_fabric(spec: ClusterSpec) -> FabricPlan:
    """Lay out the fabric and derive every device's intent; refuse what a target cannot express.

    The targets' limits run here, not at render time, so ``fabgen validate``
    (which plans) refuses everything ``fabgen generate`` would, at the spec's lines.
    """
    from fabgen.targets.registry import limit_problems

    fabric = build_plan(spec, spec.source)
    problems = limit_problems(fabric)
    if problems:
        raise SpecError(problems)
    return fabric


def render_fabric(
    fabric: FabricPlan,
    targets: Iterable[str] | None = None,
    devices: Sequence[str] | None = None,
    templates: Path | None = None,
) -> dict[str, str]:
    """Render the chosen targets (all by default) for the chosen devices (globs): ``{path: text}``."""
    from fabgen.targets.render import render_files

    files, _ = render_files(fabric, targets, devices, templates)
    return files


def spec_digest(spec: ClusterSpec) -> str:
    source = spec.source
    text = source.text if source is not None else spec.model_dump_json()
    return hashlib.sha256(text.encode()).hexdigest()


def generate(
    spec: ClusterSpec,
    out_dir: Path,
    *,
    targets: Sequence[str] | None = None,
    devices: Sequence[str] | None = None,
    templates: Path | None = None,
    check: bool = False,
    force: bool = False,
    jobs: int = 1,
) -> WriteResult | Drift:
    """Plan, render and write (or, with ``check``, compare with) ``out_dir``."""
    from fabgen.bounded import jobs_problem
    from fabgen.progress import stage
    from fabgen.targets.registry import device_matches, select_targets
    from fabgen.targets.render import render_files

    problem = jobs_problem(jobs)
    if problem:
        raise FabgenError([Problem(f"jobs {problem}", file="fabgen")])
    stage("planning")
    fabric = plan_fabric(spec)
    stage(f"rendering {len(fabric.switches):,} switches, {len(fabric.hosts):,} hosts")
    files, owners = render_files(fabric, targets, devices, templates, jobs=jobs)
    stage(f"{'comparing' if check else 'writing'} {len(files):,} files")
    chosen = {t.name for t in select_targets(targets)}

    def in_scope(owner: tuple[str, str]) -> bool:
        return owner[0] in chosen and device_matches(owner[1], devices)

    if devices:
        from fabgen.device_match import require_matches

        require_matches(device_names(fabric), devices, Path(out_dir))
    partial = bool(targets) or bool(devices)
    if check:
        return check_tree(files, out_dir, in_scope=in_scope if partial else None)
    meta = {"fabgen_version": __version__, "spec_sha256": spec_digest(spec), "cluster": spec.cluster.name}
    return write_tree(files, out_dir, owners, meta, in_scope=in_scope if partial else None, force=force)


def device_names(fabric: FabricPlan) -> set[str]:
    """Every name a ``--device`` glob may match: hosts, switches and host profiles
    (:func:`fabgen.device_match.require_matches` takes them)."""
    return {h.name for h in fabric.hosts} | {s.name for s in fabric.switches} | set(fabric.spec.host_profiles)


def write_files(files: dict[str, str], out_dir: str | Path, check: bool = False) -> WriteResult | Drift:
    """Write (or compare) an already rendered ``{path: text}`` tree; every file is owned by target ``api``."""
    if check:
        return check_tree(files, Path(out_dir))
    owners = {p: ("api", "") for p in files}
    return write_tree(files, Path(out_dir), owners, {"fabgen_version": __version__})


def lint_fabric(spec: ClusterSpec, fabric: FabricPlan | None = None, wiring: Sequence[Path] | None = None,
                deployed: Path | None = None, config: Any = None) -> list[Finding]:
    """Check that switches, NICs and NCCL agree (and, given files, that the site matches the plan).

    Returns :class:`fabgen.lint.Finding` objects, most severe first.
    """
    from fabgen.lint.engine import lint

    return lint(spec, fabric if fabric is not None else plan_fabric(spec), wiring=wiring, deployed=deployed,
                config=config)
