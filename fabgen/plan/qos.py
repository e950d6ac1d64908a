"""Resolve a QoS policy into per-DSCP and per-priority tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabgen.plan.model import ClassIntent, QosIntent, WatchdogIntent

if TYPE_CHECKING:  # annotations only: importing the pydantic models costs the cached one-device path
    from fabgen.spec import ClusterSpec
    from fabgen.spec.qos import QosPolicy

ECT0 = 0b10
"""ECN-capable transport, codepoint ECT(0): what DCQCN senders put in the IP header."""


ROLES = ("host-leaf", "leaf-spine", "spine-superspine")


def qos_intent(policy: QosPolicy, roles: tuple[str, ...] = ROLES) -> QosIntent:
    """The policy's tables; ``roles`` are the link roles the fabric has (its longest cable is among them)."""
    classes = [
        ClassIntent(
            name=name, role=c.role, dscps=tuple(c.dscp) if isinstance(c.dscp, list) else (),
            priority=c.priority, queue=c.egress_queue, lossless=c.lossless, strict=c.strict, weight=c.weight,
            ecn_min=c.ecn.min if c.ecn else None, ecn_max=c.ecn.max if c.ecn else None,
            ecn_probability=c.ecn.probability if c.ecn else None,
        )
        for name, c in policy.classes.items()
    ]
    classes = _normalise_weights(classes)
    # First class to claim a DSCP keeps it; a DSCP in two classes is a lint error (FG1xx).
    fallback = next((c.priority for c in classes if policy.classes[c.name].dscp == "other"), 0)
    table: list[int | None] = [None] * 64
    for c in classes:
        for dscp in c.dscps:
            if table[dscp] is None:
                table[dscp] = c.priority
    dscp_to_priority = tuple(fallback if p is None else p for p in table)
    queues = list(range(8))
    for c in classes:
        queues[c.priority] = c.queue
    roce = next(c for c in classes if c.role == "roce")
    cnp = next((c for c in classes if c.role == "cnp"), None)
    wd = policy.pfc.watchdog
    lengths = {role: policy.cable_lengths.of(role) for role in ROLES}
    return QosIntent(
        trust=policy.trust,
        classes=tuple(sorted(classes, key=lambda c: (c.priority, c.name))),
        dscp_to_priority=dscp_to_priority,
        priority_to_queue=tuple(queues),
        lossless_priorities=tuple(sorted({c.priority for c in classes if c.lossless})),
        watchdog=WatchdogIntent(wd.enabled, wd.detect, wd.restore, wd.action, wd.poll),
        mtu=policy.mtu,
        cable_length_m=max(lengths[role] for role in roles),
        cable_by_role=tuple(sorted(lengths.items())),
        roce=roce,
        cnp=cnp,
    )


def _normalise_weights(classes: list[ClassIntent]) -> list[ClassIntent]:
    """Scale DWRR weights to percents that sum to exactly 100 (largest remainder)."""
    weighted = [c for c in classes if c.weight is not None]
    total = sum(c.weight or 0 for c in weighted)
    if not weighted or total == 100:
        return classes
    exact = {c.name: (c.weight or 0) * 100 / total for c in weighted}
    floors = {name: int(value) for name, value in exact.items()}
    left = 100 - sum(floors.values())
    for name in sorted(exact, key=lambda n: (-(exact[n] - floors[n]), n))[:left]:
        floors[name] += 1
    return [
        ClassIntent(**{**{s: getattr(c, s) for s in ClassIntent.__slots__}, "weight": max(1, floors[c.name])})
        if c.weight is not None else c
        for c in classes
    ]


def class_tos(spec: ClusterSpec, cls: ClassIntent) -> int:
    """The IP TOS byte that lands in ``cls``: its first DSCP << 2 | ECN bits (ECT(0) where the class marks ECN
    and the NICs run DCQCN)."""
    ecn = ECT0 if cls.ecn_min is not None and spec.nic.dcqcn.enabled else 0
    return cls.dscps[0] << 2 | ecn if cls.dscps else 0


def traffic_class(spec: ClusterSpec, qos: QosIntent) -> int:
    """The IP TOS byte of RoCE traffic: DSCP << 2 | ECN bits (106 for DSCP 26 with ECT(0))."""
    return class_tos(spec, qos.roce)


def control_class(qos: QosIntent) -> ClassIntent | None:
    """The class for NCCL's clear-to-send/credit messages (``role: cts``), if the policy has one."""
    return next((c for c in qos.classes if c.role == "cts"), None)


def fifo_class(qos: QosIntent) -> ClassIntent | None:
    """The ``cts`` class if switches serve it from a strict (high-priority) queue, else None.

    Only then is a separate NCCL_IB_FIFO_TC worth setting: in a weighted queue the small
    CTS messages wait behind the bulk they are meant to pace (Meta runs them on a
    high-priority queue, SIGCOMM 2024).
    """
    cls = control_class(qos)
    return cls if cls is not None and cls.strict and cls.dscps else None
