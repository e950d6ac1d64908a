"""Read an EOS configuration back into facts: the QoS picture and the interfaces.

Why: the tests compare what the EOS renderer wrote with the plan through the
OS-neutral :class:`~fabgen.targets.qos_common.CommonQos`, and the linter can
hold a switch's collected running-config against the plan the same way. The
reader is lenient (lines it does not know are skipped, as a running-config has
many) but exact about the lines it reads: a value it cannot interpret raises
``ValueError`` rather than being guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
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
    result: dict[str, EosInterface] = {}
    for node in _tree(text):
        words = _words(node)
        if len(words) != 2 or words[0] != "interface":
            continue
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
        result[words[1]] = EosInterface(words[1], description, mtu, speed, routed, shutdown, address, profile)
    return result


def _ms(seconds: str) -> int:
    value = Decimal(seconds) * 1000
    if value != value.to_integral_value():
        raise ValueError(f"{seconds} s is not a whole number of milliseconds")
    return int(value)


def _bytes(value: str, units: str) -> int:
    if units not in UNIT_BYTES:
        raise ValueError(f"ECN threshold in {units} cannot be converted to bytes")
    return int(value) * UNIT_BYTES[units]


def parse_eos_qos(text: str) -> CommonQos:
    """The QoS picture of a configuration: global maps and the profile its fabric ports carry.

    The profile is the one named by the Ethernet interfaces' ``service-profile``
    (they must agree); with no such reference, the only ``qos profile`` present.
    """
    return replace(parse_eos_switch(text), ports=None)


def parse_eos_switch(text: str) -> CommonQos:
    """:func:`parse_eos_qos` with :attr:`~fabgen.targets.qos_common.CommonQos.ports` the Ethernet interfaces that
    carry the profile, for ``lint --deployed``: a port whose ``service-profile`` line was removed has no trust,
    PFC or ECN of the plan's, and the picture of the others would not show it."""
    nodes = _tree(text)
    dscp_to_tc = list(EOS_DEFAULT_DSCP_TO_TC)
    defaults: dict[str, str] = {}
    global_action = EOS_DEFAULT_WATCHDOG_ACTION
    profiles: dict[str, _Node] = {}
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

    interfaces = parse_eos_interfaces(text)
    ports = [i for i in interfaces.values() if i.name.startswith("Ethernet")]
    used = sorted({i.service_profile for i in ports if i.service_profile})
    if len(used) > 1:
        raise ValueError(f"Ethernet interfaces carry different service profiles: {', '.join(used)}")
    if used:
        name = used[0]
    elif len(profiles) == 1:
        name = next(iter(profiles))
    else:
        raise ValueError(f"cannot tell which qos profile applies (profiles: {', '.join(sorted(profiles)) or 'none'})")
    if name not in profiles:
        raise ValueError(f"service-profile {name} has no 'qos profile {name}'")
    profile = _read_profile(profiles[name], defaults, global_action)

    carrying = [i for i in ports if i.service_profile == name]
    mtus = sorted({i.mtu for i in carrying or ports if i.mtu is not None})
    if len(mtus) > 1:
        raise ValueError(f"fabric ports disagree on the MTU: {mtus}")
    return CommonQos(dscp_to_tc=tuple(dscp_to_tc), mtu=mtus[0] if mtus else 0,
                     tc_to_queue=used_queues(dscp_to_tc, tx_queue.__getitem__),
                     ports=frozenset(i.name for i in carrying), **profile)


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


def _read_profile(profile: _Node, defaults: dict[str, str], global_action: str) -> _Profile:
    pfc_on = False
    no_drop: set[int] = set()
    watchdog = False
    timer: dict[str, str] = {}
    action = global_action
    ecn: list[tuple[int, int, int, int]] = []
    strict: set[int] = set()
    weights: list[tuple[int, int]] = []
    trust = "default"
    for child in profile.children:
        w = _words(child)
        if w[:2] == ["qos", "trust"] and len(w) == 3:
            trust = _TRUST.get(w[2], w[2])
        elif w == ["no", "qos", "trust"]:
            trust = "none"
        elif w == ["priority-flow-control", "on"]:
            pfc_on = True
        elif w[:2] == ["priority-flow-control", "priority"] and len(w) == 4 and w[3] == "no-drop":
            no_drop.add(int(w[2]))
        elif w == ["priority-flow-control", "pause", "watchdog"]:
            watchdog = True
        elif w[:5] == ["priority-flow-control", "pause", "watchdog", "port", "timer"]:
            timer = dict(zip(w[5::2], w[6::2], strict=False))
        elif w[:5] == ["priority-flow-control", "pause", "watchdog", "port", "action"]:
            action = w[5]
        elif w[0] == "tx-queue" and len(w) == 2:
            queue = int(w[1])
            _read_tx_queue(queue, child, ecn, strict, weights)
    timeout = timer.get("timeout", defaults.get("timeout"))
    recovery = timer.get("recovery-time", defaults.get("recovery-time"))
    if not watchdog:
        picture = WATCHDOG_OFF
    elif not (timeout and recovery):
        raise ValueError("the PFC watchdog is on but its timeout or recovery-time is not configured")
    else:
        picture = (True, _ms(timeout), _ms(recovery), action)
    return {
        "lossless": frozenset(no_drop if pfc_on else ()),
        "ecn": tuple(sorted(ecn)),
        "strict": frozenset(strict),
        "weights": tuple(sorted(weights)),
        "watchdog": picture,
        "trust": trust,
    }


def _read_tx_queue(queue: int, node: _Node, ecn: list[tuple[int, int, int, int]], strict: set[int],
                   weights: list[tuple[int, int]]) -> None:
    for line in node.children:
        w = _words(line)
        if w == ["priority", "strict"]:
            strict.add(queue)
        elif w[:2] == ["bandwidth", "percent"] and len(w) == 3:
            weights.append((queue, int(w[2])))
        elif w[:3] == ["random-detect", "ecn", "minimum-threshold"]:
            low, high = w.index("minimum-threshold"), w.index("maximum-threshold")
            # Without max-mark-probability the line marks every packet above the maximum: read as 100 %.
            probability = int(w[w.index("max-mark-probability") + 1]) if "max-mark-probability" in w else 100
            ecn.append((queue, _bytes(w[low + 1], w[low + 2]), _bytes(w[high + 1], w[high + 2]), probability))
