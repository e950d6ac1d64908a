"""FG409-FG411 NCCL against the switches: the control (CTS) class and QP hashing.

Two NCCL settings only pay off when the switches do their half:

* ``NCCL_IB_FIFO_TC`` moves the receiver's clear-to-send/credit messages to their
  own traffic class. That helps only if the switches serve that class from a strict
  (high-priority) queue; anywhere else the messages wait behind the bulk they pace.
* ``NCCL_IB_QPS_PER_CONNECTION`` > 1 gives a switch that hashes on the RoCE
  destination QP (``fabric.load_balancing.roce_qp_hash``) several flows per
  connection to spread; with one QP the hash has nothing to work with.

The rules compare each host's effective NCCL environment (derived and hand-set)
with every group of switches that shares a QoS policy, and point at the line
that breaks the pairing: a hand-set variable, or the class on the switches.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabgen.lint.context import LintContext, QosGroup, plural, preview
from fabgen.lint.finding import Hit
from fabgen.lint.rules.traffic import _clean_int  # values FG402/FG403 report are skipped here
from fabgen.plan.host_intents import NCCL_FIFO_TC_SINCE, QPS_PER_CONNECTION_WITH_QP_HASH
from fabgen.plan.model import ClassIntent
from fabgen.plan.qos import class_tos, control_class
from fabgen.source import DataPath

FIFO_TC_UNSET_BEFORE = (2, 24, 0)
"""2.22.3 and 2.23 read ``NCCL_IB_FIFO_TC=0`` as "use NCCL_IB_TC" (default 0); from 2.24 that is -1."""


def _effective(ctx: LintContext, name: str) -> dict[tuple[DataPath | None, int], list[str]]:
    """Hosts by (where ``name`` was set, its value): None for a derived value. Unreadable values are skipped."""
    groups: dict[tuple[DataPath | None, int], list[str]] = {}
    for host in ctx.plan.hosts:
        raw = ctx.env(host).get(name)
        value = _clean_int(raw) if raw is not None else None
        if value is not None:
            groups.setdefault((ctx.env_path(host, name), value), []).append(host.name)
    return groups


def _fifo_tcs(ctx: LintContext) -> dict[tuple[DataPath | None, int], list[str]]:
    """Hosts whose NCCL_IB_FIFO_TC really sets a separate TC (not the "same as NCCL_IB_TC" sentinel)."""
    unset = 0 if ctx.nccl_version < FIFO_TC_UNSET_BEFORE else -1
    return {key: hosts for key, hosts in _effective(ctx, "NCCL_IB_FIFO_TC").items() if key[1] != unset}


def _owner(group: QosGroup, dscp: int) -> ClassIntent | None:
    """The class of a group's policy that takes ``dscp`` (its list, else the ``dscp: other`` class)."""
    for cls in group.qos.classes:
        if dscp in cls.dscps:
            return cls
    other = next((name for name, c in group.policy.classes.items() if c.dscp == "other"), None)
    return next((c for c in group.qos.classes if c.name == other), None)


def _where(ctx: LintContext, path: DataPath | None, group: QosGroup) -> DataPath:
    """A hand-set variable's key, else the group's classes (where the switches' side is written)."""
    return path if path is not None else (*group.path, "classes")


def fifo_tc_without_control_queue(ctx: LintContext) -> Iterator[Hit]:
    """NCCL_IB_FIFO_TC points at no strict control class on some switches.

    What it checks:
        Every host's ``NCCL_IB_FIFO_TC`` (derived by fabgen or set by hand): its
        DSCP (the value >> 2) must fall, on every group of switches that shares a
        QoS policy, in a ``role: cts`` class that the switches serve from a strict
        queue.

    Why it matters:
        NCCL_IB_FIFO_TC is the traffic class of the receiver's clear-to-send and
        credit messages. Its only purpose is to let those small messages overtake
        the bulk data they pace, which takes a high-priority (strict) queue, as
        Meta runs them. Equal to NCCL_IB_TC it changes nothing (NCCL uses that TC
        anyway); on a weighted or lossy class the messages wait or are dropped
        behind the very congestion they should relieve.

    Example:
        nccl:
          env: {NCCL_IB_FIFO_TC: 106}    # DSCP 26: the RoCE class itself

    Fix:
        Give the QoS policy a class ``{role: cts, dscp: [40], priority: 5,
        strict: true}`` on every switch and let fabgen derive NCCL_IB_FIFO_TC, or
        remove the variable.
    """
    for (path, value), hosts in sorted(_fifo_tcs(ctx).items(), key=lambda item: str(item[0])):
        dscp = (value >> 2) & 0x3F
        for group in ctx.qos_groups:
            cls = _owner(group, dscp)
            if cls is not None and cls.role == "cts" and cls.strict:
                continue
            if cls is None:
                why = "which no class takes"
            elif cls.role == "roce":
                why = f"the RoCE class {cls.name}, where NCCL puts them anyway: the variable changes nothing"
            elif cls.role == "cts":
                why = f"the cts class {cls.name}, which is not strict: they queue behind weighted traffic"
            else:
                why = f"class {cls.name} (role {cls.role}), not a strict cts class"
            yield Hit(
                f"NCCL_IB_FIFO_TC={value} on {plural(len(hosts), 'host')} ({preview(hosts)}) sends NCCL's "
                f"clear-to-send messages with DSCP {dscp}; {group.label()} that is {why}",
                ctx.at(_where(ctx, path, group), key=path is not None),
                "give every switch a strict class with role: cts for that DSCP, or remove NCCL_IB_FIFO_TC",
            )


def _control_classes(ctx: LintContext) -> Iterator[tuple[QosGroup, ClassIntent]]:
    for group in ctx.qos_groups:
        cls = control_class(group.qos)
        if cls is not None:
            yield group, cls


def control_class_unused(ctx: LintContext) -> Iterator[Hit]:
    """The switches have a control (cts) class that NCCL is not told to use.

    What it checks:
        For every group of switches whose QoS policy has a ``role: cts`` class:
        the class is strict, ``nccl.version`` reads NCCL_IB_FIFO_TC (2.22.3 and
        later), and every host's NCCL_IB_FIFO_TC carries one of the class's DSCPs.

    Why it matters:
        A queue reserved for NCCL's clear-to-send messages does nothing unless
        NCCL marks them for it: without NCCL_IB_FIFO_TC they travel with the bulk
        data in the RoCE class, the switch buffers they were to be spared fill up,
        and the reserved bandwidth sits idle. fabgen derives the variable only for
        a strict class, and only for an NCCL that reads it.

    Example:
        qos:
          classes:
            cts: {role: cts, dscp: [40], priority: 5, weight: 10}   # not strict

    Fix:
        Make the class ``strict: true``; run NCCL 2.22.3 or later
        (``nccl.version``); remove any hand-set NCCL_IB_FIFO_TC that points
        elsewhere.
    """
    fifo = _fifo_tcs(ctx)
    for group, cls in _control_classes(ctx):
        where = group.class_path(cls.name)
        if not cls.strict:
            yield Hit(
                f"the cts class {cls.name} {group.label()} is not strict, so fabgen does not set NCCL_IB_FIFO_TC "
                "and NCCL's clear-to-send messages ride the RoCE class",
                ctx.at(ctx.first_written(group.class_path(cls.name, "weight"), where)),
                "make the class strict: true (CTS messages are small and must not wait)",
            )
            continue
        if ctx.nccl_version < NCCL_FIFO_TC_SINCE:
            yield Hit(
                f"NCCL {ctx.spec.nccl.version} has no NCCL_IB_FIFO_TC (it is read from 2.22.3 on): the cts class "
                f"{cls.name} {group.label()} carries none of NCCL's traffic",
                ctx.at(ctx.first_written(("nccl", "version"), ("nccl",))),
                "run NCCL 2.22.3 or later and set nccl.version, or remove the cts class",
                (ctx.at(where, key=True, note="the cts class"),),
            )
            continue
        marked = {h for (_, value), hosts in fifo.items() if (value >> 2) & 0x3F in cls.dscps for h in hosts}
        missing = [h.name for h in ctx.plan.hosts if h.name not in marked]
        if not missing:
            continue
        hand_set = next(((path, value) for (path, value), hosts in fifo.items()
                         if path is not None and set(hosts) & set(missing)), None)
        tos = class_tos(ctx.spec, cls)
        yield Hit(
            f"{plural(len(missing), 'host')} ({preview(missing)}) do not send NCCL's clear-to-send messages in the "
            f"cts class {cls.name} {group.label()} (NCCL_IB_FIFO_TC={tos} would)"
            + (f"; NCCL_IB_FIFO_TC={hand_set[1]} is set by hand" if hand_set else ""),
            ctx.at(hand_set[0], key=True) if hand_set and hand_set[0] else ctx.at(where, key=True),
            f"remove the hand-set NCCL_IB_FIFO_TC so fabgen derives {tos}" if hand_set
            else f"give every switch the same cts class, so the hosts' NCCL_IB_FIFO_TC={tos} matches",
        )


def qp_hash_single_qp(ctx: LintContext) -> Iterator[Hit]:
    """Switches hash on the RoCE QP but NCCL opens one QP per connection.

    What it checks:
        With ``fabric.load_balancing.roce_qp_hash: true``, every host's
        ``NCCL_IB_QPS_PER_CONNECTION`` must be above 1. fabgen derives a count
        itself, so this fires on a hand-set value that overrides it.

    Why it matters:
        Hashing on the destination QP (Meta's E-ECMP) spreads traffic only if a
        connection offers several QPs to hash; NCCL's default is one, so every
        connection stays on one path and collisions on uplinks remain. Meta
        reports up to 40% more AllReduce bandwidth from the pairing (SIGCOMM
        2024).

    Example:
        fabric:
          load_balancing: {mode: ecmp, roce_qp_hash: true}
        nccl:
          env: {NCCL_IB_QPS_PER_CONNECTION: 1}

    Fix:
        Remove the hand-set value (fabgen sets 4), or set a count above 1; or
        turn ``roce_qp_hash`` off if the switches cannot hash on the QP.
    """
    if not ctx.spec.fabric.load_balancing.roce_qp_hash:
        return
    for (path, value), hosts in sorted(_effective(ctx, "NCCL_IB_QPS_PER_CONNECTION").items(),
                                       key=lambda item: str(item[0])):
        if value > 1:
            continue
        yield Hit(
            f"NCCL_IB_QPS_PER_CONNECTION={value} on {plural(len(hosts), 'host')} ({preview(hosts)}), but the "
            "switches hash on the RoCE QP: one QP per connection gives the hash one flow to place",
            ctx.at(path, key=True) if path is not None else ctx.at(("nccl",)),
            f"remove it (fabgen sets {QPS_PER_CONNECTION_WITH_QP_HASH}) or set a count above 1",
            (ctx.at(ctx.first_written(("fabric", "load_balancing", "roce_qp_hash"), ("fabric",)),
                    note="QP hashing"),),
        )
