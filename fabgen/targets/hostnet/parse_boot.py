"""Read a host's boot files back as their consumers read them, for ``lint --deployed`` (FG510).

Why: the settings ``roce-nic.sh`` gives the NICs (trust, PFC, DCQCN) last only
as long as the netdevs do. The systemd unit runs the script once every backend
netdev exists; the udev rule runs it again when the mlx5 driver recreates one;
lldpd's configuration makes each NIC announce itself, the evidence ``lint
--wiring`` reads. A unit that no longer waits for one NIC's device runs before
it exists, and that rail comes up lossy after the next reboot; a lost udev rule
leaves every NIC lossy after a driver reload; an interface pattern that leaves a
NIC out hides its cable.

Each reader follows its consumer:

* a unit as systemd reads it (``systemd.syntax(7)``): ``#`` and ``;`` comment
  lines, a trailing backslash joins the next line, white space around ``=`` is
  dropped; list settings (``Wants=``, ``After=``, ``Before=``, ``WantedBy=``,
  ``ExecStart=``) add up, and an empty assignment clears them; any other
  setting takes its last assignment;
* udev rules as udevd reads them (``udev(7)``): one rule a line (a trailing
  backslash joins the next), ``#`` comments, each rule a comma-separated set of
  ``KEY==value`` matches and ``KEY+=value`` assignments, whose order does not
  matter;
* ``lldpd.conf`` as ``lldpcli -c`` runs it: one command a line, the last
  ``configure system interface pattern`` and ``configure lldp portidsubtype``
  winning; an interface is admitted as lldpd's ``pattern_match`` admits it
  (comma-separated ``fnmatch`` patterns, ``!`` denies, ``!!`` allows back).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass

UNIT_LISTS = frozenset({"Wants", "After", "Before", "WantedBy", "ExecStart"})
"""Unit settings that add up over their assignments (an empty one clears the list)."""
_TRUE = frozenset({"1", "yes", "y", "true", "t", "on"})


@dataclass(frozen=True)
class UnitFile:
    """What systemd takes from a unit file: each ``Section.Key`` with its values, and the line of its last
    assignment."""

    settings: dict[str, tuple[str, ...]]
    """``Unit.Wants`` -> its values in order (a list setting's words, each once); a scalar's one value."""
    lines: dict[str, int]


@dataclass(frozen=True)
class UdevRules:
    """Each rule as the set of its ``(key, operator, value)`` parts, with its line."""

    rules: tuple[tuple[frozenset[tuple[str, str, str]], int], ...]


@dataclass(frozen=True)
class LldpdConf:
    """What lldpd runs from its configuration: the interface pattern and the port-id subtype, each the last
    command's (None where no command sets it), with their lines."""

    pattern: str | None
    pattern_line: int
    port_id: str | None
    port_id_line: int

    def admits(self, netdev: str) -> bool:
        """lldpd speaks on ``netdev``: no pattern (every physical interface), or the pattern admits it."""
        return self.pattern is None or pattern_match(netdev, self.pattern)


BootFile = UnitFile | UdevRules | LldpdConf


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with backslash continuations joined by a space, comment lines kept out."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending:
            start = number
            if not line or line[0] in "#;":
                continue
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        pending.append(line)
        yield start, " ".join(pending).strip()
        pending = []
    if pending:
        yield start, " ".join(pending).strip()


def read_unit(text: str) -> UnitFile:
    settings: dict[str, dict[str, None]] = {}  # values in order, each once (a dict: a long list stays linear)
    lines: dict[str, int] = {}
    section = ""
    for number, line in _logical_lines(text):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, equals, value = line.partition("=")
        if not equals:
            continue  # systemd warns and ignores the line
        key, value = key.strip(), value.strip()
        name = f"{section}.{key}"
        lines[name] = number
        if key not in UNIT_LISTS:
            settings[name] = {value: None}
        elif not value:
            settings[name] = {}
        else:
            settings.setdefault(name, {}).update(dict.fromkeys(
                [" ".join(value.split())] if key == "ExecStart" else value.split()))
    return UnitFile({name: tuple(values) for name, values in settings.items()}, lines)


def unit_true(value: str) -> bool:
    """A boolean setting as systemd reads it (``yes``, ``true``, ``on``, ``1``...)."""
    return value.lower() in _TRUE


_UDEV_PART = re.compile(r'\s*([A-Za-z_]+(?:\{[^}]*\})?)\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def read_udev_rules(text: str) -> UdevRules:
    rules = []
    for number, line in _logical_lines(text):
        parts: set[tuple[str, str, str]] = set()
        position = 0
        while position < len(line):
            match = _UDEV_PART.match(line, position)
            if match is None or match.end() == position:
                parts = set()  # udevd skips a rule it cannot parse
                break
            parts.add((match.group(1), match.group(2), match.group(3)))
            position = match.end()
        if parts:
            rules.append((frozenset(parts), number))
    return UdevRules(tuple(rules))


MAX_PATTERNS = 1000
"""More interface patterns than a host has interfaces by far: each costs a compiled ``fnmatch`` per NIC."""


def read_lldpd_conf(text: str) -> LldpdConf:
    """lldpd's settings from its configuration; ValueError ("not read: ...", a finding's words) for an interface
    pattern of more than :data:`MAX_PATTERNS` entries (read, it could take minutes)."""
    pattern: str | None = None
    port_id: str | None = None
    pattern_line = port_id_line = 0
    for number, line in _logical_lines(text):
        words = line.split()
        if words[:4] == ["configure", "system", "interface", "pattern"] and len(words) == 5:
            if words[4].count(",") >= MAX_PATTERNS:
                raise ValueError(f"not read: line {number}: an interface pattern of more than {MAX_PATTERNS} entries")
            pattern, pattern_line = words[4], number
        elif words[:4] == ["unconfigure", "system", "interface", "pattern"]:
            pattern, pattern_line = None, number
        elif words[:3] == ["configure", "lldp", "portidsubtype"] and len(words) >= 4:
            port_id, port_id_line = words[3], number
        elif words[:3] == ["unconfigure", "lldp", "portidsubtype"]:
            port_id, port_id_line = None, number
    return LldpdConf(pattern, pattern_line, port_id, port_id_line)


def pattern_match(name: str, patterns: str) -> bool:
    """lldpd's ``pattern_match(name, patterns, 0)``: the last matching ``!`` pattern denies and a later plain
    match does not admit it back; a matching ``!!`` pattern admits at once."""
    found = denied = False
    for pattern in (p for p in patterns.split(",") if p):
        if pattern.startswith("!!") and fnmatch.fnmatchcase(name, pattern[2:]):
            return True
        if pattern.startswith("!") and fnmatch.fnmatchcase(name, pattern[1:]):
            denied, found = True, False
        elif not denied and fnmatch.fnmatchcase(name, pattern):
            found = True
    return found
