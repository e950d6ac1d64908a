"""A strict grammar of every EOS configuration line fabgen emits.

Why a grammar and not a diff against goldens: a golden only says the output did
not change; this says every line is one EOS accepts, at the right depth, with
arguments inside the ranges Arista documents. No EOS image is needed to run it.

What it knows (sources: ``shared/reference/switch.md`` §1, lines rendered by
Arista AVD 6.4.0 and AVD's ``eos_cli_config_gen`` schema; Arista's own pyeapi
for the IP MTU range 68-9214):

* modes and their depth (3 spaces per level): global; ``qos profile`` with
  ``tx-queue`` blocks; ``platform trident mmu queue profile`` (ingress
  headroom in bytes, AVD 6.4.0's ``platform.trident.mmu``) and its global
  ``apply``; ``load-balance policies`` with ``load-balance sand
  profile`` and its ``fields udp`` block; ``interface``; ``router bgp`` with
  its ``address-family ipv4`` block (AVD 6.4.0's ``router_bgp`` schema for the
  ranges: ASN asplain 1-4294967295, ``maximum-paths`` and ``ecmp`` 1-600,
  ``timers bgp`` keepalive 0-3600 and hold 0 or 3-7200, BFD interval and
  min-rx 50-60000 ms, multiplier 3-50);
* each command with typed arguments (DSCP 0-63, traffic class and tx-queue
  0-7, watchdog timeout/recovery-time 0.01-60 s with at most 2 decimals and
  polling-interval 0.005-30 s with at most 3, ECN thresholds 1-256000000 in
  segments/bytes/kbytes/mbytes/microseconds/milliseconds, max-mark-probability
  1-100, weight 0-15, MTU 68-9214, ...);
* ``!`` separators (any depth up to the current block), ``! text`` comments at
  depth 0, ``!! text`` comments inside blocks, a final ``end``;
* no tabs, no trailing whitespace, no control or non-ASCII characters, no blank
  lines, a final newline;
* a few block rules that make a config wrong although every line parses: ECN
  and WRED-drop on one queue (AVD silently drops one of them), ``priority
  strict`` with ``no priority``, a DSCP mapped twice, a ``service-profile`` with
  no such ``qos profile``, an address on a switchport, duplicates.

Anything else is an error: the checker accepts what fabgen writes (and the
AVD-rendered RoCE excerpt of the reference), nothing more.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache, lru_cache

from fabgen.targets.memo import remember

INDENT = 3
"""EOS indents each configuration mode by three spaces."""
MAX_DESCRIPTION = 240
"""Longest interface description EOS stores."""
ECN_THRESHOLD_MAX = 256_000_000
"""Upper bound of an ECN/WRED threshold value (AVD schema, per-interface tx-queue)."""
HEADROOM_MAX = 128 * 1024 * 1024
"""Ceiling fabgen accepts for a Trident MMU ``ingress headroom``: no StrataXGS chip has more buffer than this."""
"""Upper bound of an ECN/WRED threshold value (AVD schema, per-interface tx-queue)."""


@dataclass(frozen=True, slots=True)
class SyntaxIssue:
    """One problem: 1-based line and column, and what is wrong."""

    line: int
    col: int
    message: str


# -- argument types ---------------------------------------------------------------------

Validator = Callable[[str], str | None]
"""Returns an error message, or None when the token is valid."""


def _integer(low: int, high: int, what: str) -> Validator:
    def check(token: str) -> str | None:
        if not re.fullmatch(r"0|[1-9][0-9]{0,9}", token):
            return f"{what} must be an integer {low}-{high}, not {token!r}"
        if not low <= int(token) <= high:
            return f"{what} {token} is out of range {low}-{high}"
        return None

    return check


def _seconds(low: str, high: str, decimals: int, what: str, allow_auto: bool = False) -> Validator:
    pattern = re.compile(rf"(0|[1-9][0-9]*)(\.[0-9]{{1,{decimals}}})?")

    def check(token: str) -> str | None:
        if allow_auto and token == "auto":
            return None
        if not pattern.fullmatch(token):
            return f"{what} must be seconds with at most {decimals} decimals, not {token!r}"
        if not Decimal(low) <= Decimal(token) <= Decimal(high):
            return f"{what} {token} s is out of range {low}-{high} s"
        return None

    return check


def _choice(*choices: str, what: str) -> Validator:
    def check(token: str) -> str | None:
        return None if token in choices else f"{what} must be one of {', '.join(choices)}, not {token!r}"

    return check


def _regex(pattern: str, what: str) -> Validator:
    compiled = re.compile(pattern)

    def check(token: str) -> str | None:
        return None if compiled.fullmatch(token) else f"{token!r} is not a valid {what}"

    return check


_LANE_RATES = {10, 25, 50, 100, 200}
_PLAIN_SPEEDS = {1, 10, 25, 40, 50, 100, 200, 400, 800}


def speed_problem(token: str) -> str | None:
    """``400g-8`` (speed, lanes), ``100g``; the per-lane rate must be a real SerDes rate."""
    match = re.fullmatch(r"([1-9][0-9]*)g(?:-([1248]))?", token)
    if not match:
        return f"speed must look like 400g-8 or 100g, not {token!r}"
    speed, lanes = int(match.group(1)), match.group(2)
    if lanes is None:
        return None if speed in _PLAIN_SPEEDS else f"speed {token} is not an EOS speed"
    if speed % int(lanes) or speed // int(lanes) not in _LANE_RATES:
        return f"speed {token}: {speed}G over {lanes} lanes is not a SerDes rate EOS offers"
    return None


def _interface(token: str) -> str | None:
    if re.fullmatch(r"Ethernet[1-9][0-9]{0,2}(/[1-9][0-9]?){0,2}|Loopback(0|[1-9][0-9]{0,3})|Management[0-9](/[1-9])?",
                    token):
        return None
    return f"{token!r} is not an EOS interface name (EthernetN[/M], LoopbackN, ManagementN)"


_DOTTED = re.compile(r"(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})/([0-9]|[12][0-9]|3[0-2])")


def _address(token: str) -> str | None:
    """An IPv4 interface address with prefix; not the network or broadcast address of a /0-/30.

    Plain integer arithmetic: this runs once per port of every switch of a fabric.
    """
    match = _DOTTED.fullmatch(token)
    if not match:
        return f"{token!r} is not an IPv4 address/prefix written canonically (a.b.c.d/len)"
    octets = [int(g) for g in match.groups()[:4]]
    if max(octets) > 255:
        return f"{token!r} has an octet above 255"
    prefix = int(match.group(5))
    if prefix <= 30:
        value = int.from_bytes(bytes(octets), "big")
        host = value & ((1 << (32 - prefix)) - 1)
        if host in (0, (1 << (32 - prefix)) - 1):
            return f"{token} is the network or broadcast address of its /{prefix}"
    return None


def _ipv4(token: str) -> str | None:
    """A bare IPv4 address (router-id, neighbour), dotted quad without leading zeros."""
    if re.fullmatch(r"(0|[1-9][0-9]{0,2})(\.(0|[1-9][0-9]{0,2})){3}", token) and \
            max(int(o) for o in token.split(".")) <= 255:
        return None
    return f"{token!r} is not an IPv4 address"


def _prefix(token: str) -> str | None:
    """A network prefix with no host bits set (``network`` takes the route as it is in the RIB)."""
    match = _DOTTED.fullmatch(token)
    if not match or max(int(g) for g in match.groups()[:4]) > 255:
        return f"{token!r} is not an IPv4 prefix (a.b.c.d/len)"
    value = int.from_bytes(bytes(int(g) for g in match.groups()[:4]), "big")
    if value & ((1 << (32 - int(match.group(5)))) - 1):
        return f"{token} has host bits set; a network prefix ends where its length says"
    return None


def _hold(token: str) -> str | None:
    error = _integer(0, 7200, "hold time")(token)
    if error is None and token in ("1", "2"):
        return f"hold time {token} is out of range: 0 or 3-7200"
    return error


def _byte_range(token: str) -> str | None:
    match = re.fullmatch(r"(0|[1-9][0-9]?)(?:-(0|[1-9][0-9]?))?", token)
    if not match:
        return f"payload bytes must be N or N-M, not {token!r}"
    if match.group(2) is not None and int(match.group(2)) < int(match.group(1)):
        return f"payload bytes {token}: the range is reversed"
    return None


def _text(token: str) -> str | None:
    if not token:
        return "empty text"
    if len(token) > MAX_DESCRIPTION:
        return f"text is {len(token)} characters; EOS keeps at most {MAX_DESCRIPTION}"
    if "?" in token:
        return "'?' asks the EOS CLI for help instead of being stored"
    return None


_NAME = _regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", "name")
TYPES: dict[str, Validator] = {
    "hostname": _regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", "hostname"),
    "name": _NAME,
    "dscp": _integer(0, 63, "DSCP"),
    "tc": _integer(0, 7, "traffic class"),
    "txq": _integer(0, 7, "tx-queue"),
    "priority": _integer(0, 7, "PFC priority"),
    "percent": _integer(1, 100, "percent"),
    "probability": _integer(1, 100, "max-mark-probability"),
    "drop-probability": _integer(1, 100, "drop-probability"),
    "weight": _integer(0, 15, "weight"),
    "drop-precedence": _integer(0, 2, "drop-precedence"),
    "threshold": _integer(1, ECN_THRESHOLD_MAX, "threshold"),
    "units": _choice("segments", "bytes", "kbytes", "mbytes", "microseconds", "milliseconds", what="unit"),
    "timeout": _seconds("0.01", "60", 2, "timeout"),
    "recovery": _seconds("0.01", "60", 2, "recovery-time"),
    "polling": _seconds("0.005", "30", 3, "polling-interval"),
    "polling-or-auto": _seconds("0.005", "30", 3, "polling-interval", allow_auto=True),
    # 6.4.0 renders drop|errdisable|notify-only; the older AVD schema also knew no-drop.
    "global-action": _choice("drop", "errdisable", "notify-only", "no-drop", what="watchdog action"),
    "port-action": _choice("drop", "notify-only", what="watchdog port action"),
    "trust": _choice("dscp", "cos", what="qos trust"),
    "mtu": _integer(68, 9214, "mtu"),
    "speed": speed_problem,
    "interface": _interface,
    "address": _address,
    "udp-port": _integer(1, 65535, "UDP port"),
    "bytes": _byte_range,
    "headroom-bytes": _integer(1, HEADROOM_MAX, "ingress headroom bytes"),
    "text": _text,
    "ip": _ipv4,
    "prefix": _prefix,
    "asn": _integer(1, 4_294_967_295, "AS number"),
    "paths": _integer(1, 600, "maximum-paths"),
    "keepalive": _integer(0, 3600, "keepalive"),
    "hold": _hold,
    "bfd-ms": _integer(50, 60_000, "BFD interval"),
    "bfd-multiplier": _integer(3, 50, "BFD multiplier"),
}

_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_EVEN_OCTET = r"(?:25[024]|2[0-4][02468]|1[0-9][02468]|[1-9]?[02468])"
STRICT: dict[str, str] = {
    "ip": rf"{_OCTET}(?:\.{_OCTET}){{3}}",
    "address": rf"{_OCTET}(?:\.{_OCTET}){{3}}/3[12]",
    "prefix": rf"{_OCTET}(?:\.{_OCTET}){{2}}\.(?:{_OCTET}/32|{_EVEN_OCTET}/31)",
    "text": rf"[^?\n]{{1,{MAX_DESCRIPTION}}}",
}
"""Per argument type, a regex of tokens its validator surely accepts (a subset, never more).

Why: these are the tokens that differ on every port (peer and interface
addresses, networks, descriptions), so a memo of their verdicts never hits; a
shape whose tokens all fall in these sets is validated inside one C-level
regex match. A /31 or /32 has no network or broadcast address to refuse, a /32
no host bits, a /31 prefix none when its last octet is even. A token outside
the subset goes through the validator as before, which gives the message.
"""


# -- command forms ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Arg:
    kind: str
    repeat: bool = False
    rest: bool = False


@dataclass(frozen=True, slots=True)
class Form:
    """One command shape, e.g. ``qos map dscp {dscp}+ to traffic-class {tc}``.

    ``{type}`` is one typed token, ``{type}+`` one or more, ``{text}`` the rest
    of the line. ``enters`` names the mode whose lines follow one level deeper.
    """

    spec: str
    enters: str | None = None
    check: Callable[[list[str]], str | None] | None = None
    items: tuple[str | _Arg, ...] = field(init=False)

    def __post_init__(self) -> None:
        items: list[str | _Arg] = []
        for word in self.spec.split(" "):
            match = re.fullmatch(r"\{([a-z-]+)\}(\+?)", word)
            if match:
                kind = match.group(1)
                if kind not in TYPES:
                    raise ValueError(f"unknown argument type {kind} in {self.spec!r}")
                items.append(_Arg(kind, repeat=bool(match.group(2)), rest=kind == "text"))
            else:
                items.append(word)
        object.__setattr__(self, "items", tuple(items))

    def match(self, tokens: Sequence[str]) -> tuple[int, str | None, list[str]]:
        """(literal words matched, error or None, argument values).

        The count ranks candidate forms so the error shown is that of the form
        the line most resembles.
        """
        values: list[str] = []
        i = 0
        words = 0
        for n, item in enumerate(self.items):
            if isinstance(item, str):
                if i >= len(tokens):
                    return words, f"incomplete command: expected {item!r}", values
                if tokens[i] != item:
                    if tokens[i] == "":
                        return words, "two spaces in a row", values
                    return words, f"expected {item!r}, found {tokens[i]!r}", values
                words += 1
                i += 1
                continue
            if item.rest:
                text = " ".join(tokens[i:])
                error = TYPES[item.kind](text)
                if error:
                    return words, error, values
                values.append(text)
                i = len(tokens)
                continue
            if i >= len(tokens):
                return words, f"incomplete command: expected a {item.kind}", values
            stop = self.items[n + 1] if n + 1 < len(self.items) and isinstance(self.items[n + 1], str) else None
            taken = 0
            while i < len(tokens) and (taken == 0 or (item.repeat and tokens[i] != stop)):
                error = TYPES[item.kind](tokens[i]) if tokens[i] else "two spaces in a row"
                if error:
                    return words, error, values
                values.append(tokens[i])
                i += 1
                taken += 1
        if i < len(tokens):
            return words, f"unexpected {' '.join(tokens[i:])!r} at the end of the command", values
        if self.check is not None:
            error = self.check(values)
            if error:
                return words, error, values
        return words, None, values


def _ecn_check(values: list[str]) -> str | None:
    low, low_units, high, high_units = values[0], values[1], values[2], values[3]
    if low_units != high_units:
        return f"minimum-threshold in {low_units} but maximum-threshold in {high_units}"
    if int(low) >= int(high):
        return f"minimum-threshold {low} must be below maximum-threshold {high}"
    return None


def _drop_check(values: list[str]) -> str | None:
    offset = 1 if len(values) == 7 else 0  # optional drop-precedence first
    return _ecn_check(values[offset:offset + 4])


def _timer_check(values: list[str]) -> str | None:
    """polling-interval <= min(timeout, recovery-time) / 2 (Arista RoCE notes, switch.md §1 [2nd])."""
    timeout, polling, recovery = values
    if polling == "auto":
        return None
    if Decimal(polling) * 2 > min(Decimal(timeout), Decimal(recovery)):
        return (f"polling-interval {polling} must be at most half of min(timeout {timeout}, "
                f"recovery-time {recovery})")
    return None


def _dscp_unique(values: list[str]) -> str | None:
    dscps = values[:-1]
    return None if len(set(dscps)) == len(dscps) else "a DSCP appears twice in this map"


def _bgp_timers(values: list[str]) -> str | None:
    keepalive, hold = int(values[0]), int(values[1])
    if hold and hold < keepalive:
        return f"hold time {hold} is shorter than the keepalive {keepalive}"
    return None


def _ecmp_paths(values: list[str]) -> str | None:
    paths, ecmp = int(values[0]), int(values[1])
    return None if ecmp >= paths else f"ecmp {ecmp} must be at least maximum-paths {paths}"


_TX_QUEUE_FORMS = (
    Form("priority strict"),
    Form("no priority"),
    Form("bandwidth percent {percent}"),
    Form("bandwidth guaranteed percent {percent}"),
    Form("random-detect ecn minimum-threshold {threshold} {units} maximum-threshold {threshold} {units} "
         "max-mark-probability {probability} weight {weight}", check=_ecn_check),
    Form("random-detect ecn minimum-threshold {threshold} {units} maximum-threshold {threshold} {units} "
         "max-mark-probability {probability}", check=_ecn_check),
    Form("random-detect ecn count"),
    Form("random-detect drop minimum-threshold {threshold} {units} maximum-threshold {threshold} {units} "
         "drop-probability {drop-probability} weight {weight}", check=_drop_check),
    Form("random-detect drop drop-precedence {drop-precedence} minimum-threshold {threshold} {units} "
         "maximum-threshold {threshold} {units} drop-probability {drop-probability} weight {weight}",
         check=_drop_check),
)

_END = Form("end")
MODES: dict[str, tuple[Form, ...]] = {
    "global": (
        Form("hostname {hostname}"),
        Form("ip routing"),
        Form("qos map dscp {dscp}+ to traffic-class {tc}", check=_dscp_unique),
        Form("qos map traffic-class {tc}+ to tx-queue {txq}"),
        Form("qos profile {name}", enters="qos-profile"),
        Form("priority-flow-control pause watchdog default timeout {timeout}"),
        Form("priority-flow-control pause watchdog default recovery-time {recovery}"),
        Form("priority-flow-control pause watchdog default polling-interval {polling}"),
        Form("priority-flow-control pause watchdog action {global-action}"),
        Form("platform trident mmu queue profile {name}", enters="mmu-queue-profile"),
        Form("platform trident mmu queue profile {name} apply"),
        Form("load-balance policies", enters="load-balance-policies"),
        Form("interface {interface}", enters="interface"),
        Form("ip hardware fib load-balance distribution dynamic"),
        Form("router bgp {asn}", enters="router-bgp"),
        _END,
    ),
    "qos-profile": (
        Form("qos trust {trust}"),
        Form("no qos trust"),
        Form("priority-flow-control on"),
        Form("no priority-flow-control"),
        Form("priority-flow-control priority {priority} no-drop"),
        Form("priority-flow-control priority {priority} drop"),
        Form("priority-flow-control pause watchdog"),
        Form("priority-flow-control pause watchdog port timer timeout {timeout} polling-interval {polling-or-auto} "
             "recovery-time {recovery}", check=_timer_check),
        Form("priority-flow-control pause watchdog port timer timeout {timeout} polling-interval {polling-or-auto} "
             "recovery-time {recovery} forced", check=_timer_check),
        Form("priority-flow-control pause watchdog port action {port-action}"),
        Form("tx-queue {txq}", enters="tx-queue"),
    ),
    "tx-queue": _TX_QUEUE_FORMS,
    "mmu-queue-profile": (
        Form("ingress headroom bytes {headroom-bytes}"),
    ),
    "load-balance-policies": (
        Form("load-balance sand profile {name}", enters="sand-profile"),
    ),
    "sand-profile": (
        Form("fields udp dst-port {udp-port}", enters="sand-udp"),
    ),
    "sand-udp": (
        Form("payload bytes {bytes}"),
    ),
    "router-bgp": (
        Form("router-id {ip}"),
        Form("no bgp default ipv4-unicast"),
        Form("timers bgp {keepalive} {hold}", check=_bgp_timers),
        Form("maximum-paths {paths} ecmp {paths}", check=_ecmp_paths),
        Form("bgp bestpath as-path multipath-relax"),
        Form("neighbor {ip} remote-as {asn}"),
        Form("neighbor {ip} bfd"),
        Form("neighbor {ip} bfd interval {bfd-ms} min-rx {bfd-ms} multiplier {bfd-multiplier}"),
        Form("neighbor {ip} description {text}"),
        Form("address-family ipv4", enters="bgp-af-ipv4"),
    ),
    "bgp-af-ipv4": (
        Form("neighbor {ip} activate"),
        Form("network {prefix}"),
    ),
    "interface": (
        Form("description {text}"),
        Form("shutdown"),
        Form("no shutdown"),
        Form("mtu {mtu}"),
        Form("speed {speed}"),
        Form("no switchport"),
        Form("ip address {address}"),
        Form("service-profile {name}"),
        Form("qos trust {trust}"),
        Form("tx-queue {txq}", enters="tx-queue"),
    ),
}


# -- the walk ---------------------------------------------------------------------------


@dataclass(slots=True)
class Line:
    """A parsed command line and the block it opens (if any)."""

    number: int
    depth: int
    text: str
    mode: str
    form: Form
    values: tuple[str, ...]
    children: list[Line] = field(default_factory=list)


_BAD_CHAR = re.compile(r"[^\x20-\x7e]")


_BAD_TEXT_CHAR = re.compile(r"[^\x20-\x7e\n]")
"""A character no line may hold. With no such character, no blank line and no space before a newline in the
whole text (plain substring scans: one alternation regex over the text cost a millisecond per config), lines
skip the per-line lexical check."""


@lru_cache(maxsize=8)
def checked_text(text: str) -> tuple[SyntaxIssue, ...]:
    """:func:`check_text`, answered once per distinct text.

    A switch's ``.session`` body is its ``.cfg`` again, checked right after it:
    the second check of the same bytes is the first one's verdict (the check is
    a pure function of the text, so nothing is skipped).
    """
    return tuple(check_text(text))


def check_text(text: str) -> list[SyntaxIssue]:
    """Every problem in an EOS configuration text, in line order.

    The loop is the hot path of rendering a large fabric (hundreds of lines per
    switch, thousands of switches): lines are matched through a memoised
    per-mode lookup and the lexical check runs per line only when a scan of the
    whole text found something.
    """
    issues: list[SyntaxIssue] = []
    if not text:
        return [SyntaxIssue(1, 1, "empty configuration")]
    if not text.endswith("\n"):
        issues.append(SyntaxIssue(text.count("\n") + 1, 1, "the file must end with a newline"))
    lexical = (_BAD_TEXT_CHAR.search(text) is not None or " \n" in text or "\n\n" in text or text[0] == "\n"
               or not text.endswith("\n"))
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    root: list[Line] = []
    # stack[k] = (mode of the lines at depth k, the list that receives them, their texts seen so far)
    stack: list[tuple[str, list[Line], dict[str, int]]] = [("global", root, {})]
    end_line = 0
    number = 0
    count = len(lines)
    while number < count:
        raw = lines[number]
        number += 1
        if end_line:
            issues.append(SyntaxIssue(number, 1, "text after 'end'"))
            break
        if lexical:
            issue = _lexical(number, raw)
            if issue:
                issues.append(issue)
                continue
        body = raw.lstrip(" ")
        spaces = len(raw) - len(body)
        depth, misaligned = divmod(spaces, INDENT)
        if misaligned:
            issues.append(SyntaxIssue(number, 1, f"indentation of {spaces} spaces is not a multiple of {INDENT}"))
            continue
        if body[0] == "!":
            issue = _comment(number, depth, body, len(stack) - 1)
            if issue:
                issues.append(issue)
            elif body == "!" or body.startswith("! "):
                del stack[depth + 1:]  # a separator closes the deeper blocks
            continue
        if depth >= len(stack):
            issues.append(SyntaxIssue(number, spaces + 1, f"indented to depth {depth}, but no block is open at "
                                                          f"depth {depth - 1}"))
            continue
        del stack[depth + 1:]
        mode, siblings, seen = stack[depth]
        form, values, error = _match_fast(body, mode)
        if form is None:
            issues.append(SyntaxIssue(number, spaces + 1, error or "unparsable line"))
            continue
        if body in seen:
            issues.append(SyntaxIssue(number, spaces + 1, f"{body!r} repeats line {seen[body]}"))
        else:
            seen[body] = number
        line = Line(number, depth, body, mode, form, values)
        siblings.append(line)
        if form.enters:
            children: dict[str, int] = {}
            stack.append((form.enters, line.children, children))
            if depth == 0 and not lexical:
                number += _fast_block(form, line, lines, number, children)
        elif form is _END:
            end_line = number
    if not end_line:
        issues.append(SyntaxIssue(len(lines) or 1, 1, "the configuration must finish with 'end'"))
    issues.extend(_block_rules(root))
    return sorted(issues, key=lambda i: (i.line, i.col))


@dataclass(frozen=True, slots=True)
class _Block:
    """The children of a top-level block (an interface's eight lines) as one regex over the joined lines.

    Learnt from the first block of its header's form whose children are all
    plain one-level lines of distinct fast shapes; a later block that matches
    it, with every argument valid and every form's own check passing, gets the
    same :class:`Line` objects the line-by-line walk would make, so the block
    rules see exactly what they would have seen.
    """

    size: int
    pattern: re.Pattern[str]
    children: tuple[tuple[_Shape, int, int], ...]
    """Each child's shape and the slice of the regex's groups that are its values."""
    validators: tuple[Callable[[str], str | None], ...]
    """One per group, in order."""
    checks: tuple[tuple[Callable[[list[str]], str | None], int, int], ...]
    """The children's own form checks, each with its slice of the groups."""
    strict: re.Pattern[str]
    """:attr:`pattern` from the children's strict shapes: a match needs only :attr:`residual` run."""
    residual: tuple[tuple[int, Callable[[str], str | None]], ...]
    """(group index, validator) of the groups :attr:`strict` does not validate itself."""

    def groups(self, text: str) -> tuple[str, ...] | None:
        """The values of the children joined in ``text``, or None unless every argument is valid."""
        match = self.strict.fullmatch(text)
        if match is not None:
            groups = match.groups()
            if any(valid(groups[n]) is not None for n, valid in self.residual):
                return None
        else:
            match = self.pattern.fullmatch(text)
            if match is None:
                return None
            groups = match.groups()
            if any(valid(token) is not None for valid, token in zip(self.validators, groups, strict=True)):
                return None
        if all(check(list(groups[low:high])) is None for check, low, high in self.checks):
            return groups
        return None


_BLOCKS: dict[Form, list[_Block]] = {}
_BLOCKS_PER_FORM = 4


def _fast_block(header: Form, line: Line, lines: list[str], start: int, seen: dict[str, int]) -> int:
    """How many lines after ``start`` a learnt block shape accounted for (their Lines appended), or 0.

    Only called when the whole text passed the lexical scan (no tab, control
    character, trailing space or blank line anywhere), which the per-line walk
    would otherwise check line by line.
    """
    mode = header.enters
    assert mode is not None
    known = _BLOCKS.get(header, [])
    for rank, block in enumerate(known):
        end = start + block.size
        if end > len(lines):
            continue
        groups = block.groups("\n".join(lines[start:end]))
        if groups is None:
            continue
        if rank:  # the shape of the last match first: a switch's ports come in runs of one shape
            known.insert(0, known.pop(rank))
        number = start
        for shape, low, high in block.children:
            body = lines[number][INDENT:]
            number += 1
            seen[body] = number
            line.children.append(Line(number, 1, body, mode, shape.form, groups[low:high]))
        return block.size
    _learn_block(header, lines, start)
    return 0


def _learn_block(header: Form, lines: list[str], start: int) -> None:
    """Compile the block that starts at ``start`` if it is a run of plain depth-1 lines of distinct fast shapes."""
    known = _BLOCKS.setdefault(header, [])
    if len(known) >= _BLOCKS_PER_FORM:
        return
    mode = header.enters
    assert mode is not None
    shapes: list[_Shape] = []
    for raw in lines[start:]:
        if not raw.startswith(" " * INDENT) or raw[INDENT:INDENT + 1] in (" ", "!", ""):
            break
        body = raw[INDENT:]
        form = _match_line(body, mode)[0]
        shape = next((s for s in _SHAPES[mode].get(body.partition(" ")[0], ()) if s.form is form), None)
        if form is None or shape is None or form.enters or any(s.form is form for s in shapes):
            return
        shapes.append(shape)
    if not shapes:
        return
    parts, strict, children, residual, low = [], [], [], [], 0
    for shape in shapes:
        parts.append(" " * INDENT + shape.pattern.pattern.replace("[^ ]", "[^ \n]"))
        strict.append(" " * INDENT + shape.strict.pattern.replace("[^ ]", "[^ \n]"))
        children.append((shape, low, low + len(shape.validators)))
        residual += [(low + n, valid) for n, valid in shape.residual]
        low += len(shape.validators)
    known.append(_Block(len(shapes), re.compile("\n".join(parts)), tuple(children),
                        tuple(v for shape in shapes for v in shape.validators),
                        tuple((s.form.check, low, high) for s, low, high in children if s.form.check is not None),
                        re.compile("\n".join(strict)), tuple(residual)))


def _lexical(number: int, raw: str) -> SyntaxIssue | None:
    if raw == "":
        return SyntaxIssue(number, 1, "blank line")
    bad = _BAD_CHAR.search(raw)
    if bad:
        char = bad.group()
        name = "tab" if char == "\t" else f"character U+{ord(char):04X}"
        return SyntaxIssue(number, bad.start() + 1, f"{name} is not allowed (printable ASCII and spaces only)")
    if raw.endswith(" "):
        return SyntaxIssue(number, len(raw.rstrip(" ")) + 1, "trailing whitespace")
    return None


def _comment(number: int, depth: int, body: str, open_depth: int) -> SyntaxIssue | None:
    """``!`` (separator, any open depth), ``! text`` (depth 0), ``!! text`` (inside a block)."""
    col = depth * INDENT + 1
    if body == "!":
        return None if depth <= open_depth else SyntaxIssue(number, col, "'!' deeper than any open block")
    if body.startswith("!! "):
        if depth == 0:
            return SyntaxIssue(number, col, "'!!' comments belong inside a block; use '! text' at the top")
        if depth > open_depth:
            return SyntaxIssue(number, col, "comment deeper than any open block")
        return _text_issue(number, col + 3, body[3:])
    if body.startswith("! "):
        if depth != 0:
            return SyntaxIssue(number, col, "inside a block a comment is written '!! text'")
        return _text_issue(number, col + 2, body[2:])
    return SyntaxIssue(number, col, "a comment is '!', '! text' or '!! text'")


def _text_issue(number: int, col: int, text: str) -> SyntaxIssue | None:
    error = _text(text)
    return SyntaxIssue(number, col, error) if error else None


_Match = tuple[Form | None, tuple[str, ...], str | None]


def _match_fast(body: str, mode: str) -> _Match:
    """:func:`_match_line`'s answer, cheaply for lines that differ from earlier ones only in their arguments.

    A fabric's configs repeat most lines verbatim (answered by ``_match_line``'s
    memo), but each port adds lines seen once (its description, address and BGP
    neighbour): those are matched by the mode's compiled shapes (literal words
    compared in place, each argument through a memoised validator: the same
    ASN or peer address recurs on several lines). Only an accepted line takes
    this path; anything a shape refuses goes to ``_match_line``, which finds the
    form and the error exactly as before, so no check is weakened.
    """
    seen = _ACCEPTED[mode]
    known = seen.get(body)
    if known is not None:
        return known
    for shape in _SHAPES[mode].get(body.partition(" ")[0], ()):
        values = shape.accept(body)
        if values is not None:
            return remember(seen, body, (shape.form, values, None), _ACCEPTED_MAX)
    return _match_line(body, mode)


_ACCEPTED_MAX = 1 << 16
_ACCEPTED: dict[str, dict[str, _Match]] = {}
"""mode -> {line: accepted match}: the lines every config repeats, answered by one dict lookup (bounded)."""


@dataclass(frozen=True, slots=True)
class _Shape:
    """A form compiled for the fast path: one regex for its literal words, a memoised validator per argument."""

    form: Form
    pattern: re.Pattern[str]
    validators: tuple[Callable[[str], str | None], ...]
    strict: re.Pattern[str]
    """:attr:`pattern` with the :data:`STRICT` arguments narrowed: a match needs only :attr:`residual` run."""
    residual: tuple[tuple[int, Callable[[str], str | None]], ...]
    """(group index, validator) of the arguments :attr:`strict` does not validate itself."""

    def accept(self, body: str) -> tuple[str, ...] | None:
        match = self.strict.fullmatch(body)
        if match is not None:
            values = match.groups()
            for n, valid in self.residual:
                if valid(values[n]) is not None:
                    return None
        else:
            match = self.pattern.fullmatch(body)
            if match is None:
                return None
            values = match.groups()
            for valid, token in zip(self.validators, values, strict=True):
                if valid(token) is not None:
                    return None
        if self.form.check is not None and self.form.check(list(values)) is not None:
            return None
        return values


def _fixed(form: Form) -> bool:
    """A form of one token per item (a {text} rest allowed last): the shapes the fast path compiles."""
    last = len(form.items) - 1
    return all(isinstance(item, str) or (not item.repeat and (not item.rest or n == last))
               for n, item in enumerate(form.items))


def _disjoint(a: Form, b: Form) -> bool:
    """No line matches both: a literal differs at a position both reach, or both are fixed forms of different lengths."""
    for x, y in zip(a.items, b.items, strict=False):  # up to the shorter form
        if isinstance(x, str) and isinstance(y, str):
            if x != y:
                return True
        elif _variable(x) or _variable(y):
            return False
    return _fixed(a) and _fixed(b) and len(a.items) != len(b.items) \
        and not any(isinstance(i, _Arg) and i.rest for i in (*a.items, *b.items))


def _variable(item: str | _Arg) -> bool:
    """An item that may take more than one token: after it, positions no longer line up."""
    return isinstance(item, _Arg) and (item.repeat or item.rest)


@cache
def _memo_type(kind: str) -> Callable[[str], str | None]:
    """TYPES[kind] memoised per token (bounded): a peer address or an ASN recurs on several lines of a config."""
    return lru_cache(maxsize=1 << 16)(TYPES[kind])


def _shape_index() -> dict[str, dict[str, tuple[_Shape, ...]]]:
    """Per mode and first word, the fixed forms that no earlier form of the group could also match.

    ``_match_line`` returns the first form of the group that accepts a line; a
    shape is only used when every earlier form is disjoint from it, so the fast
    path can never pick a different form than the slow one.
    """
    index: dict[str, dict[str, tuple[_Shape, ...]]] = {}
    for mode, groups in _BY_FIRST_WORD.items():
        index[mode] = {}
        for word, forms in groups.items():
            shapes = []
            for n, form in enumerate(forms):
                if not _fixed(form) or not all(_disjoint(earlier, form) for earlier in forms[:n]):
                    continue
                # A literal is itself; an argument one token (no space; an empty one is Form.match's
                # "two spaces"); a final {text} the rest of the line, as Form.match joins it.
                args = [item for item in form.items if isinstance(item, _Arg)]
                shapes.append(_Shape(form, re.compile(_shape_pattern(form, strict=False)), tuple(
                    _memo_type(item.kind) for item in args), re.compile(_shape_pattern(form, strict=True)),
                    tuple((n, _memo_type(item.kind)) for n, item in enumerate(args) if item.kind not in STRICT)))
            index[mode][word] = tuple(shapes)
    return index


def _shape_pattern(form: Form, strict: bool) -> str:
    """The regex of a fixed form, one group per argument.

    A literal is itself; an argument one token (no space; an empty one is
    Form.match's "two spaces"); a final {text} the rest of the line, as
    Form.match joins it. ``strict`` narrows the arguments of :data:`STRICT`
    types to the tokens their validator surely accepts.
    """
    parts = []
    for item in form.items:
        if isinstance(item, str):
            parts.append(re.escape(item))
        elif strict and item.kind in STRICT:
            parts.append(f"({STRICT[item.kind]})")
        else:
            parts.append("(.*)" if item.rest else "([^ ]+)")
    return " ".join(parts)


@lru_cache(maxsize=65536)
def _match_line(body: str, mode: str) -> tuple[Form | None, tuple[str, ...], str | None]:
    """The form a line matches (memoised: a fabric's configs repeat most lines thousands of times)."""
    tokens = body.split(" ")
    best: tuple[int, str | None] = (-1, None)
    for form in _BY_FIRST_WORD[mode].get(tokens[0], ()):
        words, error, values = form.match(tokens)
        if error is None:
            return form, tuple(values), None
        if words > best[0]:
            best = (words, error)
    if best[0] <= 0:
        return None, (), f"unknown command in {mode} mode: {body!r}"
    return None, (), best[1]


def _first_word_index() -> dict[str, dict[str, tuple[Form, ...]]]:
    index: dict[str, dict[str, tuple[Form, ...]]] = {}
    for mode, forms in MODES.items():
        by_word: dict[str, list[Form]] = {}
        for form in forms:
            first = form.items[0]
            assert isinstance(first, str), form.spec
            by_word.setdefault(first, []).append(form)
        index[mode] = {word: tuple(group) for word, group in by_word.items()}
    return index


_BY_FIRST_WORD = _first_word_index()
"""Forms of each mode by their first word: a line is only tried against forms that can match it."""
_SHAPES = _shape_index()
_ACCEPTED.update((mode, {}) for mode in MODES)
"""The fast path's compiled forms (see :func:`_match_fast`)."""


# -- rules over blocks ------------------------------------------------------------------


def _block_rules(root: list[Line]) -> list[SyntaxIssue]:
    issues: list[SyntaxIssue] = []
    profiles = {line.values[0] for line in root if line.form.spec.startswith("qos profile ")}
    dscp_seen: dict[str, int] = {}
    hostnames = [line for line in root if line.form.spec.startswith("hostname ")]
    if len(hostnames) > 1:
        issues.append(SyntaxIssue(hostnames[1].number, 1, f"hostname set twice (first on line {hostnames[0].number})"))
    for line in root:
        if line.form.spec.startswith("qos map dscp "):
            for dscp in line.values[:-1]:
                if dscp in dscp_seen:
                    issues.append(SyntaxIssue(line.number, 1, f"DSCP {dscp} is already mapped on line "
                                                               f"{dscp_seen[dscp]}"))
                dscp_seen.setdefault(dscp, line.number)
        if line.form.enters == "qos-profile":
            issues.extend(_profile_rules(line))
        if line.form.enters == "interface":
            issues.extend(_interface_rules(line, profiles))
        if line.form.enters == "router-bgp":
            issues.extend(_bgp_rules(line))
    routers = [line for line in root if line.form.enters == "router-bgp"]
    if len(routers) > 1:
        issues.append(SyntaxIssue(routers[1].number, 1, f"a second 'router bgp' (first on line {routers[0].number}); "
                                                        "EOS runs one BGP instance"))
    return issues


def _bgp_rules(router: Line) -> list[SyntaxIssue]:
    """Every neighbour line names a peer that has a ``remote-as``; BFD timers need ``bfd`` on."""
    issues: list[SyntaxIssue] = []
    col = INDENT + 1
    peers = {line.values[0] for line in router.children if line.form.spec == "neighbor {ip} remote-as {asn}"}
    bfd_on = {line.values[0] for line in router.children if line.form.spec == "neighbor {ip} bfd"}
    lines = list(router.children)
    for family in (c for c in router.children if c.form.enters == "bgp-af-ipv4"):
        lines += family.children
    for line in lines:
        if not line.form.spec.startswith("neighbor ") or line.form.spec.endswith("remote-as {asn}"):
            continue
        peer = line.values[0]
        where = (line.depth * INDENT) + 1
        if peer not in peers:
            issues.append(SyntaxIssue(line.number, where, f"neighbor {peer} has no 'remote-as' in this router bgp"))
        elif " bfd interval " in line.text and peer not in bfd_on:
            issues.append(SyntaxIssue(line.number, col, f"BFD timers for {peer} without 'neighbor {peer} bfd'"))
    return issues


def _has(block: Line, prefix: str) -> list[Line]:
    return [c for c in block.children if c.text == prefix or c.text.startswith(prefix + " ")]


def _profile_rules(profile: Line) -> list[SyntaxIssue]:
    issues: list[SyntaxIssue] = []
    col = INDENT + 1
    on, off = _has(profile, "priority-flow-control on"), _has(profile, "no priority-flow-control")
    if on and off:
        issues.append(SyntaxIssue(off[0].number, col, "PFC is both 'on' and off in this profile"))
    for line in _has(profile, "priority-flow-control priority"):
        if not on:
            issues.append(SyntaxIssue(line.number, col, "PFC priority set without 'priority-flow-control on'"))
    for queue in profile.children:
        if queue.form.enters == "tx-queue":
            issues.extend(_tx_queue_rules(queue))
    return issues


def _tx_queue_rules(queue: Line) -> list[SyntaxIssue]:
    issues: list[SyntaxIssue] = []
    col = (queue.depth + 1) * INDENT + 1
    ecn = [c for c in queue.children if c.text.startswith("random-detect ecn minimum-threshold")]
    drop = [c for c in queue.children if c.text.startswith("random-detect drop")]
    if ecn and drop:
        issues.append(SyntaxIssue(drop[0].number, col, f"tx-queue {queue.values[0]} has ECN and WRED-drop; "
                                                       "EOS/AVD keep only one of them"))
    strict, rr = _has(queue, "priority strict"), _has(queue, "no priority")
    if strict and rr:
        issues.append(SyntaxIssue(rr[0].number, col, f"tx-queue {queue.values[0]} is both strict and round-robin"))
    if strict:
        for line in _has(queue, "bandwidth percent"):
            issues.append(SyntaxIssue(line.number, col, "bandwidth percent has no effect on a strict-priority queue"))
    return issues


_ANY_INTERFACE = {"description {text}", "ip address {address}", "shutdown", "no shutdown"}
"""What Loopback and Management interfaces take; the rest is for front-panel ports."""


def _interface_rules(interface: Line, profiles: set[str]) -> list[SyntaxIssue]:
    issues: list[SyntaxIssue] = []
    name = interface.values[0]
    ethernet = name.startswith("Ethernet")
    col = INDENT + 1
    addresses: list[Line] = []
    routed = False
    for line in interface.children:
        spec = line.form.spec
        if spec == "ip address {address}":
            addresses.append(line)
        elif spec == "no switchport":
            routed = True
        elif spec == "service-profile {name}" and line.values[0] not in profiles:
            issues.append(SyntaxIssue(line.number, col, f"service-profile {line.values[0]}: no 'qos profile "
                                                        f"{line.values[0]}' in this configuration"))
        if not ethernet and spec not in _ANY_INTERFACE:
            issues.append(SyntaxIssue(line.number, col, f"{line.text!r} is only for Ethernet interfaces"))
    if len(addresses) > 1:
        issues.append(SyntaxIssue(addresses[1].number, col, f"{name} has more than one primary address"))
    if ethernet and addresses and not routed:
        issues.append(SyntaxIssue(addresses[0].number, col, f"{name} is a switchport: add 'no switchport' "
                                                            "before an IP address"))
    if name.startswith("Loopback"):
        for line in addresses:
            if not line.values[0].endswith("/32"):
                issues.append(SyntaxIssue(line.number, col, f"{name} address must be a /32"))
    return issues
