"""The table of render targets: what each produces, for which devices, checked how.

A target has a scope (cluster, profile, host, switch), a predicate choosing the
devices it applies to (EOS switches, every host, ...), a function that returns
``{path: text}`` for one device, and an optional validator run on every file it
produced. Adding an output format is one module and one row here.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from jinja2 import TemplateError
from jinja2.sandbox import SandboxedEnvironment

from fabgen.errors import OutputError, Problem
from fabgen.plan import FabricPlan
from fabgen.render.environment import environment

Scope = Literal["cluster", "profile", "host", "switch"]


@dataclass(frozen=True)
class RenderContext:
    plan: FabricPlan
    env: SandboxedEnvironment


@dataclass(frozen=True)
class Target:
    name: str
    scope: Scope
    summary: str
    render: Callable[[RenderContext, Any], dict[str, str]]
    applies: Callable[[Any], bool] = lambda device: True
    validate: Callable[[str, str], list[Problem]] | None = None


def _targets() -> tuple[Target, ...]:
    from fabgen.render import cabling
    from fabgen.render import eos
    from fabgen.render import sonic
    from fabgen.render import nccl_env, nccl_topo
    from fabgen.render import nvue

    return (
        cabling.TARGET,
        eos.TARGET,
        sonic.TARGET,
        nccl_topo.TARGET,
        nccl_env.TARGET,
        nvue.TARGET,
    )


def targets() -> tuple[Target, ...]:
    return _targets()


def target_names() -> list[str]:
    return [t.name for t in targets()]


def devices_of(plan: FabricPlan, target: Target) -> list[tuple[str, Any]]:
    """(device name, device) pairs a target renders, in plan order."""
    if target.scope == "cluster":
        return [("", plan)]
    if target.scope == "switch":
        return [(s.name, s) for s in plan.switches if target.applies(s)]
    if target.scope == "host":
        return [(h.name, h) for h in plan.hosts if target.applies(h)]
    return [(name, name) for name in plan.spec.host_profiles if target.applies(name)]


def device_matches(device: str, patterns: Sequence[str] | None) -> bool:
    """Cluster-wide files (device "") belong to a run only when no device filter is given."""
    if not patterns:
        return True
    return bool(device) and any(fnmatch.fnmatchcase(device, p) for p in patterns)


def select_targets(names: Iterable[str] | None) -> list[Target]:
    known = {t.name: t for t in targets()}
    if not names:
        return list(known.values())
    chosen = []
    for name in names:
        if name not in known:
            raise OutputError([Problem(f"unknown target {name!r} (known: {', '.join(known)})", file="fabgen")])
        chosen.append(known[name])
    return chosen


def render_files(
    plan: FabricPlan,
    target_names_: Iterable[str] | None = None,
    devices: Sequence[str] | None = None,
    templates: Path | None = None,
) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Render the chosen targets for the chosen devices: ``({path: text}, {path: (target, device)})``."""
    context = RenderContext(plan=plan, env=environment(templates))
    files: dict[str, str] = {}
    owners: dict[str, tuple[str, str]] = {}
    problems: list[Problem] = []
    for target in select_targets(target_names_):
        for name, device in devices_of(plan, target):
            if not device_matches(name, devices):
                continue
            try:
                produced = target.render(context, device)
            except TemplateError as exc:
                where = getattr(exc, "filename", None) or getattr(exc, "name", None) or target.name
                line = getattr(exc, "lineno", None)
                problems.append(Problem(f"template error: {exc}", file=str(where), line=line or 0))
                continue
            for path, text in produced.items():
                files[path] = text
                owners[path] = (target.name, name)
                if target.validate is not None:
                    problems.extend(target.validate(path, text))
    if problems:
        raise OutputError(problems)
    return dict(sorted(files.items())), owners
