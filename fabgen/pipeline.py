"""The stages as plain functions: load, plan, render, lint, write (and check).

Each is a pure function of its inputs (write aside), safe to call from threads;
inputs are never mutated. :mod:`fabgen` re-exports them as the public API.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Generator, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabgen._gc import keep_until_exit, paused_gc
from fabgen.encoded import take_encoded
from fabgen.errors import FabgenError, Problem, SpecError
from fabgen.plan import FabricPlan, build_plan
from fabgen.source import load_source
from fabgen.spec import ClusterSpec, validate_spec
from fabgen.writer import Drift, TreeWriter, WriteResult, check_tree, write_tree

if TYPE_CHECKING:
    from fabgen.lint.finding import Finding
    from fabgen.targets.render import Rendered

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
    from fabgen.targets.render import render_files, render_stream

    problem = jobs_problem(jobs)
    if problem:
        raise FabgenError([Problem(f"jobs {problem}", file="fabgen")])
    stage("planning")
    fabric = plan_fabric(spec)
    keep_until_exit(fabric)  # the fabgen command exits without freeing it (fabgen._gc); a library caller frees it
    stage(f"rendering {len(fabric.switches):,} switches, {len(fabric.hosts):,} hosts")
    chosen = {t.name for t in select_targets(targets)}

    def in_scope(owner: tuple[str, str]) -> bool:
        return owner[0] in chosen and device_matches(owner[1], devices)

    partial = bool(targets) or bool(devices)
    if check:
        files, _ = render_files(fabric, targets, devices, templates, jobs=jobs)
        stage(f"comparing {len(files):,} files")
        _require_devices(fabric, devices, out_dir)
        return check_tree(files, out_dir, in_scope=in_scope if partial else None)
    meta = {"fabgen_version": __version__, "spec_sha256": spec_digest(spec), "cluster": spec.cluster.name}
    return _stream_write(render_stream(fabric, targets, devices, templates, jobs=jobs),
                         TreeWriter(Path(out_dir), meta, in_scope=in_scope if partial else None, force=force),
                         lambda: _require_devices(fabric, devices, out_dir))


def _stream_write(stream: Generator[list[Rendered], None, None], writer: TreeWriter, before_swap: Callable[[], None]) -> WriteResult:
    """Hand each rendered batch to the writer as it comes, encoded once, so memory holds a batch, not the tree.

    The stream raises its render and check problems only after its last batch,
    and the writer has written nothing visible by then: any failure (theirs,
    ``before_swap``'s, or the writer's own refusals) drops the temporary tree
    and leaves the old one as it was.
    """
    from fabgen.progress import stage

    try:
        with paused_gc():  # the plan's half a million objects would be rescanned on every batch's allocations
            for batch in stream:
                for path, text, owner in batch:
                    known = take_encoded(text)  # an EOS .cfg, hashed already for its session's name
                    if known is None:
                        writer.add(path, text.encode("utf-8"), owner)
                    else:
                        writer.add(path, known[0], owner, known[1])
        before_swap()
        stage(f"writing {len(writer.entries):,} files")
        return writer.finish()
    except BaseException:
        stream.close()  # a writer failure mid-stream: end the render (and its paused collector) now
        writer.abort()
        raise


def _require_devices(fabric: FabricPlan, devices: Sequence[str] | None, out_dir: Path) -> None:
    if devices:
        from fabgen.device_match import require_matches

        require_matches(device_names(fabric), devices, Path(out_dir))


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
