"""Read an EOS configuration back into facts: the QoS picture and the interfaces.

Why: the tests compare what the EOS renderer wrote with the plan through the
OS-neutral :class:`~fabgen.targets.qos_common.CommonQos`, and the linter can
hold a switch's collected running-config against the plan the same way. The
reader is lenient (lines it does not know are skipped, as a running-config has
many) but exact about the lines it reads: a value it cannot interpret raises
``ValueError`` rather than being guessed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import TypedDict

from fabgen.targets.qos_common import WATCHDOG_OFF, CommonQos, used_queues

INDENT = 3

EOS_DEFAULT_DSCP_TO_TC: tuple[int, ...] = tuple({0: 1, 1: 0}.get(d // 8, d // 8) for d in range(64))
"""EOS's built-in DSCP -> traffic-class map: DSCP 0-7 -> TC1, 8-15 -> TC0, then DSCP//8.

Source: the Arista RoCE notes cited in ``shared/reference/switch.md`` §1 ([2nd]).
Only used for DSCPs a configuration does not map (fabgen maps all 64).
"""

UNIT_BYTES = {"bytes": 1, "kbytes": 1024, "mbytes": 1024 * 1024}
"""Threshold units in bytes. ``kbytes`` is read as KiB, as fabgen's spec reads ``150KB``."""

EOS_DEFAULT_WATCHDOG_ACTION = "errdisable"
"""What a stuck queue gets when no action is configured (AVD schema: 'the default error-disable action')."""


@dataclass(slots=True)
class _Node:
    text: str
    line: int
    children: list[_Node] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EosInterface:
    """What fabgen sets on an interface, as read back."""

    name: str
    description: str | None
    mtu: int | None
    speed: str | None
    routed: bool
    """``no switchport``."""
    shutdown: bool | None
    """``True``/``False`` when ``shutdown``/``no shutdown`` is written; ``None`` when neither is."""
    address: str | None
    service_profile: str | None


def _tree(text: str) -> list[_Node]:
    """Commands nested by indentation; comments and ``!`` separators dropped."""
    root: list[_Node] = []
    stack: list[list[_Node]] = [root]
    for number, raw in enumerate(text.splitlines(), start=1):
        body = raw.strip(" ")
        if not body or body.startswith("!"):
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // INDENT
        depth = min(depth, len(stack) - 1)
        del stack[depth + 1:]
        node = _Node(body, number)
        stack[depth].append(node)
        stack.append(node.children)
    return root


def _words(node: _Node) -> list[str]:
    return node.text.split()


def parse_eos_interfaces(text: str) -> dict[str, EosInterface]:
    """Every ``interface`` block, in file order, with the values fabgen writes."""
    return {words[1]: _interface(node) for node in _tree(text) if len(words := _words(node)) == 2
            and words[0] == "interface"}


def _interface(node: _Node) -> EosInterface:
    """The values fabgen writes in one ``interface NAME`` block."""
    description = mtu = speed = address = profile = None
    routed = False
    shutdown: bool | None = None
    for child in node.children:
        w = _words(child)
        if w[0] == "description":
            description = child.text[len("description "):]
        elif w[0] == "mtu" and len(w) == 2:
            mtu = int(w[1])
        elif w[0] == "speed" and len(w) >= 2:
            speed = " ".join(w[1:])
        elif w == ["no", "switchport"]:
            routed = True
        elif w == ["shutdown"]:
            shutdown = True
        elif w == ["no", "shutdown"]:
            shutdown = False
        elif w[:2] == ["ip", "address"] and len(w) == 3:
            address = w[2]
        elif w[0] == "service-profile" and len(w) == 2:
            profile = w[1]
    return EosInterface(_words(node)[1], description, mtu, speed, routed, shutdown, address, profile)


def _ms(seconds: str) -> int:
    try:
        value = Decimal(seconds) * 1000
    except InvalidOperation:  # an ArithmeticError, which a caller reading a deployed file must not meet
        raise ValueError(f"watchdog time {seconds!r} is not a number of seconds") from None
    if not value.is_finite() or value != value.to_integral_value():
        raise ValueError(f"watchdog time {seconds!r} s is not a whole number of milliseconds")
    return int(value)


def _bytes(value: str, units: str) -> int:
    if units not in UNIT_BYTES:
        raise ValueError(f"ECN threshold in {units!r} cannot be converted to bytes")
    return int(value) * UNIT_BYTES[units]


def parse_eos_qos(text: str) -> CommonQos:
    """The QoS picture of a configuration: global maps and the profile its fabric ports carry.

    The profile is the one named by the Ethernet interfaces' ``service-profile``
    (they must agree); with no such reference, the only ``qos profile`` present.
    """
    return replace(parse_eos_switch(text), ports=None)


def parse_eos_switch(text: str) -> CommonQos:
    """:func:`parse_eos_qos` with :attr:`~fabgen.targets.qos_common.CommonQos.ports` the Ethernet interfaces that
    carry the switch's picture, for ``lint --deployed``.

    Why per port: a port whose ``service-profile`` line was removed has no trust, PFC or ECN of the plan's, and a
    QoS line on the interface itself (``qos trust cos``, ``no priority-flow-control``, a ``tx-queue`` block) takes
    that port's QoS away from its profile's; the picture of the profile alone would show neither. As with SONiC,
    the switch's picture is the one most of its profile's ports have (the profile's own on a tie).
    """
    nodes = _tree(text)
    dscp_to_tc = list(EOS_DEFAULT_DSCP_TO_TC)
    defaults: dict[str, str] = {}
    global_action = EOS_DEFAULT_WATCHDOG_ACTION
    profiles: dict[str, _Node] = {}
    interfaces: list[_Node] = []
    tx_queue = list(range(8))  # EOS maps a traffic class no line maps to the tx-queue of its number
    for node in nodes:
        w = _words(node)
        if w[:3] == ["qos", "map", "dscp"] and "to" in w:
            to = w.index("to")
            if w[to + 1:to + 2] != ["traffic-class"]:
                continue
            tc = int(w[to + 2])
            for dscp in w[3:to]:
                dscp_to_tc[int(dscp)] = tc
        elif w[:3] == ["qos", "map", "traffic-class"] and "to" in w and w[w.index("to") + 1:][:1] == ["tx-queue"]:
            to = w.index("to")
            for word in w[3:to]:
                tx_queue[int(word)] = int(w[to + 2])
        elif w[:5] == ["priority-flow-control", "pause", "watchdog", "default", "timeout"]:
            defaults["timeout"] = w[5]
        elif w[:5] == ["priority-flow-control", "pause", "watchdog", "default", "recovery-time"]:
            defaults["recovery-time"] = w[5]
        elif w[:4] == ["priority-flow-control", "pause", "watchdog", "action"]:
            global_action = w[4]
        elif w[:2] == ["qos", "profile"] and len(w) == 3:
            profiles[w[2]] = node
        elif len(w) == 2 and w[0] == "interface" and w[1].startswith("Ethernet"):
            interfaces.append(node)

    ports = [_interface(node) for node in interfaces]
    used = sorted({i.service_profile for i in ports if i.service_profile})
    if len(used) > 1:
        raise ValueError(f"Ethernet interfaces carry different service profiles: {', '.join(map(repr, used))}")
    if used:
        name = used[0]
    elif len(profiles) == 1:
        name = next(iter(profiles))
    else:
        raise ValueError("cannot tell which qos profile applies (profiles: "
                         f"{', '.join(map(repr, sorted(profiles))) or 'none'})")
    if name not in profiles:
        raise ValueError(f"service-profile {name!r} has no qos profile of that name")
    profile = _QosLines(global_action)
    profile.read(profiles[name].children)

    carrying = [(i, node) for i, node in zip(ports, interfaces, strict=True) if i.service_profile == name]
    mtus = sorted({i.mtu for i in [i for i, _ in carrying] or ports if i.mtu is not None})
    if len(mtus) > 1:
        raise ValueError(f"fabric ports disagree on the MTU: {mtus}")
    mtu, tc_to_queue = mtus[0] if mtus else 0, used_queues(dscp_to_tc, tx_queue.__getitem__)
    own = CommonQos(dscp_to_tc=tuple(dscp_to_tc), mtu=mtu, tc_to_queue=tc_to_queue, **profile.picture(defaults))
    pictures = {}
    for interface, node in carrying:
        lines = _QosLines.copy_of(profile)
        if lines.read(node.children):  # a QoS line of the port's own: its picture is the profile's with it
            pictures[interface.name] = replace(own, **lines.picture(defaults))
        else:
            pictures[interface.name] = own
    counts = Counter(pictures.values())
    switch = max(counts, key=lambda p: (counts[p], p == own)) if counts else own
    return replace(switch, ports=frozenset(port for port, picture in pictures.items() if picture == switch))


class _Profile(TypedDict):
    """The :class:`CommonQos` fields one ``qos profile`` block sets (typed, so ``CommonQos(**profile)`` is checked)."""

    lossless: frozenset[int]
    ecn: tuple[tuple[int, int, int, int], ...]
    strict: frozenset[int]
    weights: tuple[tuple[int, int], ...]
    watchdog: tuple[bool, int, int, str]
    trust: str


_TRUST = {"dscp": "dscp", "cos": "pcp"}
"""``qos trust`` word -> :attr:`~fabgen.targets.qos_common.CommonQos.trust`; ``no qos trust`` is ``none``, no line
at all EOS's own default (``default``: fabgen always says which)."""


@dataclass(slots=True)
class _QosLines:
    """The QoS lines read so far from a ``qos profile`` block, then from an interface that carries it.

    A port's own line replaces its profile's for the same thing (a ``tx-queue N`` line, the queue's same kind of
    line), so one state read twice, profile then interface, is the port's QoS.
    """

    action: str
    pfc_on: bool = False
    no_drop: set[int] = field(default_factory=set)
    watchdog: bool = False
    timer: dict[str, str] = field(default_factory=dict)
    trust: str = "default"
    ecn: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    strict: set[int] = field(default_factory=set)
    weights: dict[int, int] = field(default_factory=dict)

    @classmethod
    def copy_of(cls, other: _QosLines) -> _QosLines:
        return cls(other.action, other.pfc_on, set(other.no_drop), other.watchdog, dict(other.timer), other.trust,
                   dict(other.ecn), set(other.strict), dict(other.weights))

    def read(self, lines: list[_Node]) -> bool:
        """Apply ``lines``; True when one of them was a QoS line."""
        seen = False
        for child in lines:
            w = _words(child)
            known = True
            if w[:2] == ["qos", "trust"] and len(w) == 3:
                self.trust = _TRUST.get(w[2], w[2])
            elif w == ["no", "qos", "trust"]:
                self.trust = "none"
            elif w == ["priority-flow-control", "on"]:
                self.pfc_on = True
            elif w in (["no", "priority-flow-control"], ["priority-flow-control", "off"],
                       ["no", "priority-flow-control", "on"]):
                self.pfc_on = False
            elif w[:2] == ["priority-flow-control", "priority"] and len(w) == 4 and w[3] in ("no-drop", "drop"):
                (self.no_drop.add if w[3] == "no-drop" else self.no_drop.discard)(int(w[2]))
            elif w == ["priority-flow-control", "pause", "watchdog"]:
                self.watchdog = True
            elif w == ["no", "priority-flow-control", "pause", "watchdog"]:
                self.watchdog = False
            elif w[:5] == ["priority-flow-control", "pause", "watchdog", "port", "timer"]:
                self.timer = dict(zip(w[5::2], w[6::2], strict=False))
            elif w[:5] == ["priority-flow-control", "pause", "watchdog", "port", "action"]:
                self.action = w[5]
            elif w[0] == "tx-queue" and len(w) == 2:
                self._tx_queue(int(w[1]), child)
            else:
                known = False
            seen = seen or known
        return seen

    def _tx_queue(self, queue: int, node: _Node) -> None:
        for line in node.children:
            w = _words(line)
            if w == ["priority", "strict"]:
                self.strict.add(queue)
            elif w == ["no", "priority"]:
                self.strict.discard(queue)
            elif w[:2] == ["bandwidth", "percent"] and len(w) == 3:
                self.weights[queue] = int(w[2])
            elif w[:3] == ["random-detect", "ecn", "minimum-threshold"]:
                low, high = w.index("minimum-threshold"), w.index("maximum-threshold")
                # Without max-mark-probability the line marks every packet above the maximum: read as 100 %.
                probability = int(w[w.index("max-mark-probability") + 1]) if "max-mark-probability" in w else 100
                self.ecn[queue] = (_bytes(w[low + 1], w[low + 2]), _bytes(w[high + 1], w[high + 2]), probability)
            elif w[:3] == ["no", "random-detect", "ecn"]:
                self.ecn.pop(queue, None)

    def picture(self, defaults: dict[str, str]) -> _Profile:
        timeout = self.timer.get("timeout", defaults.get("timeout"))
        recovery = self.timer.get("recovery-time", defaults.get("recovery-time"))
        if not self.watchdog:
            watchdog = WATCHDOG_OFF
        elif not (timeout and recovery):
            raise ValueError("the PFC watchdog is on but its timeout or recovery-time is not configured")
        else:
            watchdog = (True, _ms(timeout), _ms(recovery), self.action)
        return {
            "lossless": frozenset(self.no_drop if self.pfc_on else ()),
            "ecn": tuple(sorted((queue, *values) for queue, values in self.ecn.items())),
            "strict": frozenset(self.strict),
            "weights": tuple(sorted(self.weights.items())),
            "watchdog": watchdog,
            "trust": self.trust,
        }
