"""The only list of targets: what each produces, for which devices, checked how.

A row (:class:`~fabgen.targets.base.Target`) has a scope (cluster, profile,
host, switch), a predicate choosing the devices it applies to, a function that
returns ``{path: text}`` for one device, the check its output must pass, the
limits it puts on a plan and, for switch OSes, how ``lint --deployed`` reads a
device's file back. Adding an output format is one folder and one row here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from fabgen.device_match import device_matches as device_matches
from fabgen.errors import OutputError, Problem
from fabgen.plan import FabricPlan
from fabgen.plan.layout import Layout
from fabgen.source import SourceDoc
from fabgen.spec import ClusterSpec
from fabgen.targets import cabling, install
from fabgen.targets.avd import target as avd
from fabgen.targets.base import ReadBack, Target, every_device
from fabgen.targets.eos import config as eos
from fabgen.targets.hostnet import boot as hostboot
from fabgen.targets.hostnet import config as hostnet
from fabgen.targets.hostnet import sysctl as hostsysctl
from fabgen.targets.k8s import labels as k8s_labels
from fabgen.targets.mlx5 import scripts as mlx5
from fabgen.targets.nccl import env as nccl_env
from fabgen.targets.nccl import topo as nccl_topo
from fabgen.targets.netbox import files as netbox
from fabgen.targets.nvue import config as nvue
from fabgen.targets.slurm import topology as slurm
from fabgen.targets.sonic import config_db as sonic

TARGETS: tuple[Target, ...] = (
    cabling.TARGET,
    eos.TARGET,
    sonic.TARGET,
    nccl_topo.TARGET,
    nccl_env.TARGET,
    nccl_env.PROFILE_TARGET,
    nvue.TARGET,
    mlx5.TARGET,
    mlx5.SHARED_TARGET,
    mlx5.FIRMWARE_TARGET,
    slurm.TARGET,
    k8s_labels.TARGET,
    netbox.TARGET,
    hostnet.TARGET,
    hostsysctl.TARGET,
    hostboot.TARGET,
    install.HOST_TARGET,
    install.SWITCH_TARGET,
    avd.TARGET,
)


def targets() -> tuple[Target, ...]:
    return TARGETS


def target_names() -> list[str]:
    return [t.name for t in TARGETS]


@cache
def read_backs() -> dict[str, tuple[Target, ReadBack]]:
    """Switch OS -> the target that writes its configuration and how to read that file back."""
    return {t.read_back.os: (t, t.read_back) for t in TARGETS if t.read_back is not None}


def limit_problems(plan: FabricPlan) -> list[Problem]:
    """Every target's refusals of this plan, located at the spec's lines."""
    problems: list[Problem] = []
    for target in TARGETS:
        if target.limits is not None:
            problems.extend(target.limits(plan))
    return problems


def layout_limit_problems(spec: ClusterSpec, layout: Layout, doc: SourceDoc | None) -> list[Problem]:
    """Every target's refusals of the sized fabric (:attr:`~fabgen.targets.base.Target.layout_limits`), before the
    planner builds a link."""
    return [problem for target in TARGETS if target.layout_limits is not None
            for problem in target.layout_limits(spec, layout, doc)]


def devices_of(plan: FabricPlan, target: Target) -> list[tuple[str, Any]]:
    """(device name, device) pairs a target renders, in plan order."""
    if target.devices is not None:
        return target.devices(plan)
    if target.scope == "cluster":
        return [("", plan)]
    if target.scope == "profile":
        return [(name, name) for name in plan.spec.host_profiles if target.applies(name)]
    named = plan.named("switch" if target.scope == "switch" else "host")
    applies = target.applies
    if applies is every_device:  # no call per device
        return list(named)
    return [pair for pair in named if applies(pair[1])]


_BY_NAME = {t.name: t for t in TARGETS}


def select_targets(names: Iterable[str] | None) -> list[Target]:
    if not names:
        return [t for t in TARGETS if t.default]
    chosen = []
    for name in names:
        if name not in _BY_NAME:
            raise OutputError([Problem(f"unknown target {name!r} (known: {', '.join(_BY_NAME)})", file="fabgen")])
        chosen.append(_BY_NAME[name])
    return chosen
