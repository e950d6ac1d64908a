"""What every switch OS shares: the OS-neutral QoS picture parsed back from each output, and watchdog limits.

Each switch renderer ships a parser from its own output to :class:`CommonQos`.
The cross-OS test renders one policy for EOS, SONiC and NVUE and asserts the
three pictures are equal; the linter's ``--deployed`` check compares a
collected config's picture with the plan's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabgen.errors import Problem
from fabgen.source import spec_problem

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan, QosIntent

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
    tc_to_queue: tuple[tuple[int, int], ...] = ()
    """(traffic class, egress queue) of each traffic class a DSCP maps to, sorted: the classes no DSCP reaches
    carry nothing, and each OS leaves them at its own default (:func:`used_queues`)."""
    trust: str = "dscp"
    """What the ports classify by: ``dscp``, ``pcp``, ``both``, or ``none`` (nothing bound)."""
    no_headroom: frozenset[int] = frozenset()
    """PFC priorities whose priority group has no lossless buffer (SONiC's ``BUFFER_PG`` moved to a lossy profile,
    or gone): the port still has PFC on for them, but no headroom for what arrives after its pause, so RoCE drops
    there. Always empty where the OS gives every no-drop priority its headroom itself (EOS, NVUE)."""
    ports: frozenset[str] | None = None
    """The ports that carry this picture, where the reader looked at every port: SONiC binds QoS port by port
    (:func:`fabgen.targets.sonic.parse.parse_sonic_switch`), EOS by each port's ``service-profile``
    (:func:`fabgen.targets.eos.parse.parse_eos_switch`). None where the picture is of one port or of the
    switch as a whole (NVUE's global profile), and then not compared."""


def from_intent(qos: QosIntent) -> CommonQos:
    """The picture a plan's :class:`~fabgen.plan.model.QosIntent` should produce."""
    return CommonQos(
        dscp_to_tc=tuple(qos.dscp_to_priority),
        lossless=frozenset(qos.lossless_priorities),
        # The planner sets the three ECN fields together (from one spec ``ecn:``); testing all three lets mypy see it.
        ecn=tuple(sorted((c.queue, c.ecn_min, c.ecn_max, c.ecn_probability) for c in qos.classes
                         if c.ecn_min is not None and c.ecn_max is not None and c.ecn_probability is not None)),
        strict=frozenset(c.queue for c in qos.classes if c.strict),
        weights=tuple(sorted((c.queue, c.weight) for c in qos.classes if c.weight is not None)),
        watchdog=(True, qos.watchdog.detect_ms, qos.watchdog.restore_ms, qos.watchdog.action)
        if qos.watchdog.enabled else WATCHDOG_OFF,
        mtu=qos.mtu,
        tc_to_queue=used_queues(qos.dscp_to_priority, lambda tc: qos.priority_to_queue[tc]),
        trust=qos.trust,
    )


def used_queues(dscp_to_tc: Sequence[int], queue_of: Callable[[int], int]) -> tuple[tuple[int, int], ...]:
    """:attr:`CommonQos.tc_to_queue`: (traffic class, its queue) for each class of ``dscp_to_tc``."""
    return tuple((tc, queue_of(tc)) for tc in sorted(set(dscp_to_tc)))


@dataclass(frozen=True)
class WatchdogLimits:
    """What one switch OS accepts for the PFC watchdog (``shared/reference/switch.md`` §1-§3).

    Each OS's ``limits`` module holds its row; the check runs at validation, so
    a timer an OS would refuse to load is an error at the spec's line.
    """

    os_label: str
    detect: tuple[int, int] | None
    restore: tuple[int, int] | None
    poll: tuple[int, int]
    step: int
    """Detect and restore must be multiples of this many ms."""
    actions: tuple[str, ...]
    """Spec actions the OS can carry out."""
    source: str
    """The rule in the OS's words, printed with every refusal."""
    poll_at_most_half: bool = False
    """EOS: polling at most half the shorter of detect and restore."""
    poll_at_most_timers: bool = False
    """SONiC: POLL_INTERVAL not above detect or restore."""
    detect_in_polls: tuple[int, int] | None = None
    """NVUE: detection is polling-interval x robustness, robustness in this range."""

    def problems(self, detect: int, restore: int, poll: int, action: str) -> list[tuple[str, str]]:
        """(spec field, message) for each timer or action this OS refuses."""
        out: list[tuple[str, str]] = []
        for field, value, bounds in (("detect", detect, self.detect), ("restore", restore, self.restore),
                                     ("poll", poll, self.poll)):
            if bounds is not None and not bounds[0] <= value <= bounds[1]:
                out.append((field, f"{field} {value} ms is outside {bounds[0]}..{bounds[1]} ms"))
            elif field != "poll" and bounds is not None and value % self.step:
                out.append((field, f"{field} {value} ms is not a multiple of {self.step} ms"))
        bad = {field for field, _ in out}
        if self.poll_at_most_half and poll * 2 > min(detect, restore) and "poll" not in bad:
            out.append(("poll", f"poll {poll} ms is more than half of min(detect, restore) = "
                                f"{min(detect, restore)} ms"))
        if self.poll_at_most_timers and "poll" not in bad:
            for field, value in (("detect", detect), ("restore", restore)):
                if value < poll and field not in bad:
                    out.append((field, f"{field} {value} ms is shorter than the poll interval {poll} ms"))
        if self.detect_in_polls is not None and "poll" not in bad:
            low, high = self.detect_in_polls
            if detect % poll or not low <= detect // poll <= high:
                out.append(("detect", f"detect {detect} ms is not poll ({poll} ms) x robustness {low}..{high}"))
        if action not in self.actions:
            out.append(("action", f"action {action} cannot be carried out (only {', '.join(self.actions)})"))
        return out


def watchdog_limit_problems(plan: FabricPlan, os: str, limits: WatchdogLimits) -> list[Problem]:
    """One refusal per policy (default or override) and field, for the switches of ``os`` that carry it."""
    problems: list[Problem] = []
    seen: set[tuple[str | int, ...]] = set()
    for switch in plan.switches:
        if switch.os != os or switch.qos_path in seen:
            continue
        seen.add(switch.qos_path)
        wd = switch.qos.watchdog
        if not wd.enabled or not switch.qos.lossless_priorities:
            continue
        for field, message in limits.problems(wd.detect_ms, wd.restore_ms, wd.poll_ms, wd.action):
            problems.append(spec_problem(
                plan.source, f"PFC watchdog {message} on {limits.os_label} ({switch.name} and the switches "
                f"that share its policy): {limits.source}", (*switch.qos_path, "pfc", "watchdog", field)))
    return problems
