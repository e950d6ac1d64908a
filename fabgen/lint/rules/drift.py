"""FG5xx deployed drift: what devices run against what the plan says (``--deployed DIR``).

Differences are semantic: a switch is compared through its QoS picture
(:class:`~fabgen.targets.qos_common.CommonQos`), a host through the NCCL
variables its files set. Reordered lines, comments and formatting are not drift;
an edited DSCP map or a changed ``NCCL_IB_TC`` is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from fabgen.errors import printable
from fabgen.lint.context import LintContext, preview
from fabgen.lint.finding import Hit, Location
from fabgen.natural import natural_key

if TYPE_CHECKING:
    from fabgen.targets.qos_common import CommonQos

_FIELD_WORDS: dict[str, tuple[str, ...]] = {
    "dscp_to_tc": ("qos map dscp", "DSCP_TO_TC_MAP", "dscp"),
    "lossless": ("priority-flow-control priority", "pfc_enable", "pfc"),
    "no_headroom": ("BUFFER_PG",),
    "ecn": ("random-detect ecn", "WRED_PROFILE", "congestion-control"),
    "strict": ("priority strict", "SCHEDULER", "egress-scheduler"),
    "weights": ("bandwidth percent", "SCHEDULER", "egress-scheduler"),
    "watchdog": ("watchdog", "PFC_WD", "pfc-watchdog"),
    "mtu": ("mtu",),
    "tc_to_queue": ("qos map traffic-class", "TC_TO_QUEUE_MAP", "egress-queue-mapping"),
    "trust": ("qos trust", "dscp_to_tc_map", "trust"),
    "ports": ("PORT_QOS_MAP", "service-profile"),
}
"""Words that start the part of a configuration holding each field, in EOS, SONiC and NVUE."""


def _line_of(text: str, field: str) -> int:
    """First line that mentions ``field``'s part of the configuration, else 1."""
    lines = text.splitlines()
    for word in _FIELD_WORDS.get(field, ()):
        for number, line in enumerate(lines, start=1):
            if word in line:
                return number
    return 1


def _fmt_set(values: frozenset[int]) -> str:
    return "{" + ", ".join(map(str, sorted(values))) + "}"


def qos_differences(deployed: CommonQos, expected: CommonQos) -> list[tuple[str, str]]:
    """(field, description) for each difference between two CommonQos pictures."""
    out: list[tuple[str, str]] = []
    d, e = deployed, expected
    if d.dscp_to_tc != e.dscp_to_tc:
        moved = [f"DSCP {i} -> TC {a} (plan {b})" for i, (a, b) in enumerate(zip(d.dscp_to_tc, e.dscp_to_tc, strict=False))
                 if a != b]
        out.append(("dscp_to_tc", "DSCP map: " + ", ".join(moved[:4]) + (f" and {len(moved) - 4} more" if len(moved) > 4 else "")))
    if d.lossless != e.lossless:
        out.append(("lossless", f"PFC no-drop priorities {_fmt_set(d.lossless)} (plan {_fmt_set(e.lossless)})"))
    if d.no_headroom != e.no_headroom:
        out.append(("no_headroom", f"PFC priorities without a lossless buffer (BUFFER_PG) {_fmt_set(d.no_headroom)} "
                                   f"(plan {_fmt_set(e.no_headroom)})"))
    if d.ecn != e.ecn:
        out.append(("ecn", f"ECN (queue, min, max, %) {list(d.ecn)} (plan {list(e.ecn)})"))
    if d.strict != e.strict:
        out.append(("strict", f"strict queues {_fmt_set(d.strict)} (plan {_fmt_set(e.strict)})"))
    if d.weights != e.weights:
        out.append(("weights", f"DWRR weights {dict(d.weights)} (plan {dict(e.weights)})"))
    if d.watchdog != e.watchdog:
        out.append(("watchdog", f"PFC watchdog (on, detect ms, restore ms, action) {d.watchdog} (plan {e.watchdog})"))
    if d.mtu != e.mtu:
        out.append(("mtu", f"MTU {d.mtu} (plan {e.mtu})"))
    if d.tc_to_queue != e.tc_to_queue:
        planned = dict(e.tc_to_queue)
        # a traffic class the plan has no DSCP for is the DSCP map's difference, reported above
        moved = [f"TC {tc} -> queue {q} (plan {planned[tc]})" for tc, q in d.tc_to_queue
                 if tc in planned and planned[tc] != q]
        if moved:
            out.append(("tc_to_queue", "egress queues: " + ", ".join(moved)))
    if d.trust != e.trust:
        out.append(("trust", f"trust {d.trust} (plan {e.trust})"))
    ports = _port_difference(d.ports, e.ports)
    if ports:
        out.append(("ports", ports))
    return out


def _port_difference(deployed: frozenset[str] | None, expected: frozenset[str] | None) -> str:
    """Where the switch's picture is on other ports than the plan's (SONiC, EOS): the planned ports without it by
    name (the plan's names), the others only counted (a deployed file's keys are not echoed)."""
    if deployed is None or expected is None or deployed == expected:
        return ""
    missing = sorted(expected - deployed, key=natural_key)
    extra = len(deployed - expected)
    parts = []
    if missing:
        parts.append("ports without that QoS (missing, or other than on the rest): " + ", ".join(missing[:4])
                     + (f" and {len(missing) - 4} more" if len(missing) > 4 else ""))
    if extra:
        parts.append(f"{extra} port{'s' if extra > 1 else ''} the plan gives no QoS carry it")
    return "; ".join(parts)


def switch_qos_drift(ctx: LintContext) -> Iterator[Hit]:
    """A deployed switch configuration's QoS differs from the plan.

    What it checks:
        With ``--deployed DIR``, each switch configuration found there
        (``switches/NAME.cfg``, ``switches/NAME/config_db.json``,
        ``switches/NAME/startup.yaml``) is read back into its QoS picture (trust,
        DSCP map, egress queue of each class, PFC priorities, ECN, scheduling,
        watchdog, MTU) and compared with the picture of what fabgen renders for
        that switch. Where QoS is bound port by port, every port is read, and a
        planned port without the switch's QoS is named: on EOS one without the
        ``service-profile`` or with a QoS line of its own that overrides it
        (``qos trust cos``, ``no priority-flow-control``), on SONiC one whose
        ``PORT_QOS_MAP`` entry is gone, a queue without its WRED profile, a
        priority group moved off its lossless buffer (``BUFFER_PG``), another MTU.

    Why it matters:
        Hand edits on a switch survive until the next push and silently undo the
        agreement the other rules check in the spec: one leaf with an edited DSCP
        map makes RoCE lossy for every flow through it.

    Example:
        # DIR/switches/leaf-r0-p00-01.cfg, edited on the box
        qos map dscp 26 to traffic-class 0

    Fix:
        Push the generated configuration again (``fabgen generate``), or, if the
        edit was intended, put it in the spec (a ``switch_overrides`` entry).
    """
    if ctx.deployed is None:
        return
    for switch in ctx.deployed.switches:
        differences = qos_differences(switch.qos, switch.expected)
        if not differences:
            continue
        field = differences[0][0]
        line = _line_of(switch.text, field)
        yield Hit(
            f"{switch.name} runs other QoS than planned: " + "; ".join(text for _, text in differences),
            Location(switch.file, line, 1),
            "re-deploy fabgen's configuration, or put the change in the spec",
        )


def nccl_env_drift(ctx: LintContext) -> Iterator[Hit]:
    """A host's deployed NCCL variables differ from the plan.

    What it checks:
        With ``--deployed DIR``, every ``hosts/NAME/nccl.conf`` and ``nccl.env`` is
        read as NCCL (resp. systemd) reads it and compared variable by variable with
        the host's planned NCCL environment: changed values, missing and extra
        variables. A host without its own (a generated tree, where it installs its
        profile's pair) is read from ``hosts/_profiles/PROFILE/``, once per profile.

    Why it matters:
        The NCCL environment is where switches and hosts meet: a host whose
        ``NCCL_IB_TC`` was changed by hand sends RoCE in another class than the
        fabric pauses, and one host is enough to slow every job it joins.

    Example:
        # DIR/hosts/lab01/nccl.conf, edited on the host
        NCCL_IB_TC=96

    Fix:
        Re-install the generated files, or move the change into the spec
        (``nccl.env`` or the host's override).
    """
    if ctx.deployed is None:
        return
    compared: set[str] = set()
    for host_name, files in sorted(ctx.deployed.hosts.items()):
        host = ctx.hosts.get(host_name)
        if host is None:
            continue
        planned = ctx.env(host)
        for env in files:
            who = host_name
            if env.profile:  # a profile's shared copy: its hosts plan the same variables, so compare it once
                if env.file in compared:
                    continue
                compared.add(env.file)
                who = f"profile {env.profile}"
            kind = env.file.rsplit("/", 1)[-1]
            for name, (value, line) in env.values.items():
                if name not in planned:
                    # the value is not shown: it is not the plan's, and may be anyone's secret
                    yield Hit(f"{who}: {kind} sets {printable(name, 80)}, which the plan does not have",
                              Location(env.file, line, 1), "remove it, or add it to the spec")
                elif planned[name] != value:
                    # a deployed value is shown only when the plan has it too (a swapped value); else it could be
                    # anything, a secret included, and this text goes to CI logs
                    has = f"has {name}={value}" if value in planned.values() else f"has another {name}"
                    yield Hit(f"{who}: {kind} {has}, the plan {name}={planned[name]}",
                              Location(env.file, line, 1), f"set {name}={planned[name]} (re-deploy)")
            for name, value in planned.items():
                if name not in env.values:
                    yield Hit(f"{who}: {kind} lacks {name} (the plan sets {value})",
                              Location(env.file, 1, 1), "re-deploy the generated file")


def deployed_incomplete(ctx: LintContext) -> Iterator[Hit]:
    """The deployed tree misses planned devices or holds devices the plan does not have.

    What it checks:
        With ``--deployed DIR``: every planned host has ``hosts/NAME/nccl.conf`` or
        ``nccl.env`` and every planned switch its configuration file, when the tree
        has ``hosts/`` resp. ``switches/``; and the tree names no device outside the
        plan.

    Why it matters:
        A device without collected files was not checked, and a device the plan
        does not know (renamed, decommissioned, a typo) runs a configuration nobody
        maintains.

    Example:
        DIR/hosts/lab09/nccl.conf      # the spec has lab01..lab04

    Fix:
        Collect the missing files, and remove or rename the stray ones.
    """
    if ctx.deployed is None:
        return
    root = ctx.deployed.root
    if ctx.deployed.missing:
        names = list(ctx.deployed.missing)
        what = f"planned device {names[0]} has" if len(names) == 1 else \
            f"{len(names)} planned devices ({preview(names, 5)}) have"
        yield Hit(f"{what} no files in the deployed tree",
                  Location(root, 0, 0), "collect their files, or ignore FG503 for partial collections")
    for rel in ctx.deployed.unknown:
        yield Hit(f"{rel} is not a device of the plan", Location(f"{root}/{rel}", 0, 0),
                  "remove it, or correct the device name")


def deployed_unreadable(ctx: LintContext) -> Iterator[Hit]:
    """A deployed switch configuration cannot be read back.

    What it checks:
        With ``--deployed DIR``, each switch file must parse with its OS's reader.

    Why it matters:
        A configuration fabgen cannot read cannot be compared with the plan: its
        QoS is unverified, and the edit that broke the parse may be what breaks
        the switch.

    Example:
        DIR/switches/leaf-r0-p00-01/config_db.json    # truncated JSON

    Fix:
        Collect the file again, or re-deploy fabgen's configuration.
    """
    if ctx.deployed is None:
        return
    for file, reason in ctx.deployed.unreadable:
        yield Hit(f"cannot read this configuration back: {_one_line(reason)}", Location(file, 1, 1),
                  "collect it again or re-deploy it")


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
