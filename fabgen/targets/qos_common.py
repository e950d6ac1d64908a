"""A small OS-neutral picture of a switch's QoS, parsed back from each OS's output.

Each switch renderer ships a parser from its own output to :class:`CommonQos`.
The cross-OS test renders one policy for EOS, SONiC and NVUE and asserts the
three pictures are equal; the linter's ``--deployed`` check compares a
collected config's picture with the plan's.
"""

from __future__ import annotations

from dataclasses import dataclass


WATCHDOG_OFF = (False, 0, 0, "")


@dataclass(frozen=True)
class CommonQos:
    dscp_to_tc: tuple[int, ...]
    """64 entries: traffic class of each DSCP."""
    lossless: frozenset[int]
    """Priorities with PFC no-drop."""
    ecn: tuple[tuple[int, int, int, int], ...]
    """(queue, min bytes, max bytes, max probability %), sorted by queue."""
    strict: frozenset[int]
    """Strict-priority queues."""
    weights: tuple[tuple[int, int], ...]
    """(queue, DWRR percent), sorted by queue."""
    watchdog: tuple[bool, int, int, str]
    """(enabled, detect ms, restore ms, action); :data:`WATCHDOG_OFF` when disabled (timers mean nothing then)."""
    mtu: int


def from_intent(qos) -> CommonQos:  # type: ignore[no-untyped-def]
    """The picture a plan's :class:`~fabgen.plan.model.QosIntent` should produce."""
    return CommonQos(
        dscp_to_tc=tuple(qos.dscp_to_priority),
        lossless=frozenset(qos.lossless_priorities),
        ecn=tuple(sorted((c.queue, c.ecn_min, c.ecn_max, c.ecn_probability) for c in qos.classes if c.ecn_min is not None)),
        strict=frozenset(c.queue for c in qos.classes if c.strict),
        weights=tuple(sorted((c.queue, c.weight) for c in qos.classes if c.weight is not None)),
        watchdog=(True, qos.watchdog.detect_ms, qos.watchdog.restore_ms, qos.watchdog.action)
        if qos.watchdog.enabled else WATCHDOG_OFF,
        mtu=qos.mtu,
    )
