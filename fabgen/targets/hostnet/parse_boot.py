"""Read a host's boot files back as their consumers read them, for ``lint --deployed`` (FG510).

Why: the settings ``roce-nic.sh`` gives the NICs (trust, PFC, DCQCN) last only
as long as the netdevs do. The systemd unit runs the script once every backend
netdev exists; the udev rule runs it again when the mlx5 driver recreates one;
lldpd's configuration makes each NIC announce itself, the evidence ``lint
--wiring`` reads. A unit that no longer waits for one NIC's device runs before
it exists, and that rail comes up lossy after the next reboot; a lost udev rule
leaves every NIC lossy after a driver reload; an interface pattern that leaves a
NIC out hides its cable.

Each reader follows its consumer's source, not a generic INI reading:

* a unit as systemd's ``config_parse`` reads it (``systemd.syntax(7)``): a line
  ends at a newline, a carriage return or a NUL; a line whose first
  non-blank character is ``#`` or ``;`` is a comment even inside a
  continuation (the continued line goes on after it); a line ending in an
  unescaped backslash continues on the next, the backslash read as a space;
  white space around ``=`` is dropped; list settings (``Wants=``, ``After=``,
  ``Before=``, ``WantedBy=``, ``ExecStart=``) add up, and an empty assignment
  clears them; any other setting takes its last assignment; a line over
  systemd's 1 MiB limit makes the unit unreadable;
* udev rules as ``udev_rules_parse_file`` reads them (``udev(7)``): one rule a
  line, leading blanks skipped; a ``#`` line is a comment even inside a
  continuation; a trailing backslash is removed and the next line appended; a
  continuation still open at the end of the file, or longer than udev's 16 KiB
  line, is ignored; each rule a comma-separated set of ``KEY==value`` matches
  and ``KEY+=value`` assignments, whose order does not matter;
* ``lldpd.conf`` as ``lldpcli -c`` runs it: one command a line, and only a line
  that ends in a newline; its words as lldpcli's ``tokenize_line`` makes them
  (``#`` outside quotes starts a comment anywhere, a backslash escapes one
  character, quotes group; a line with an open quote or a trailing backslash is
  not run); the last ``configure system interface pattern`` and ``configure
  lldp portidsubtype`` winning; an interface is admitted as lldpd's
  ``pattern_match`` admits it (comma-separated ``fnmatch`` patterns, ``!``
  denies, ``!!`` allows back).
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


_EOL = re.compile("(?:\r\n?|\n\r?)\0?|\0")
r"""Where systemd's ``read_line`` ends a line (unit files and udev rules alike): a run of line-end characters, each
of CR and LF at most once, a NUL only as its last (``\r\n``, ``\n\r`` and ``\n\0`` are one end each;
``\r\r`` and ``\0\r`` two)."""
_SYSTEMD_BLANKS = " \t\n\r"
"""systemd's ``WHITESPACE``: what it strips around a line, a key or a value, and splits a list at."""
UNIT_LINE_LIMIT = 1 << 20
"""systemd's ``LONG_LINE_MAX`` in bytes: a longer line, or continuation, and the unit does not load at all."""
UDEV_LINE_LIMIT = 16384
"""udev's ``UDEV_LINE_SIZE`` in bytes: a line this long makes the rules file unreadable; a continuation this long
is ignored."""


def _too_long(line: str, limit: int) -> bool:
    return len(line) >= limit // 4 and len(line.encode("utf-8", "surrogateescape")) >= limit


def _odd_backslashes_at_end(piece: str) -> bool:
    """The piece ends in a backslash that is not itself escaped (an odd run of them)."""
    return (len(piece) - len(piece.rstrip("\\"))) % 2 == 1


def _unit_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, logical line, stripped) as ``config_parse`` sees them; comments and blank lines out.

    A continued piece ends in a space (its backslash), so whether the next
    piece ends escaped depends on that piece alone: the pieces are kept in a
    list and joined once, linear in the file however many continuations. A
    comment line is skipped before it could start or end a continuation, so no
    logical line begins with ``#`` or ``;``.
    """
    pieces: list[str] = []
    start = 0
    for number, raw in enumerate(_EOL.split(text), 1):
        if _too_long(raw, UNIT_LINE_LIMIT):
            raise ValueError(f"not read: line {number} is longer than systemd's 1 MiB line limit")
        first = raw.lstrip(_SYSTEMD_BLANKS)[:1]
        if first and first in "#;":
            continue
        if not pieces:
            start = number
        continued = _odd_backslashes_at_end(raw)
        pieces.append(raw[:-1] + " " if continued else raw)
        if not continued:
            if line := _joined_unit_line(start, pieces):
                yield start, line
            pieces = []
    if pieces and (line := _joined_unit_line(start, pieces)):
        yield start, line


def _joined_unit_line(start: int, pieces: list[str]) -> str:
    line = "".join(pieces)
    if _too_long(line, UNIT_LINE_LIMIT):
        raise ValueError(f"not read: the line continued from line {start} is longer than systemd's 1 MiB line limit")
    return line.strip(_SYSTEMD_BLANKS)


def _udev_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, rule line) as ``udev_rules_parse_file`` sees them."""
    pieces: list[str] = []
    start = 0
    for number, raw in enumerate(_EOL.split(text), 1):
        if _too_long(raw, UDEV_LINE_LIMIT):
            raise ValueError(f"not read: line {number} is longer than udev's 16 KiB line limit (udevd reads no "
                             "rule of the file)")
        line = raw.lstrip(_SYSTEMD_BLANKS)
        if line.startswith("#"):
            continue
        if not pieces:
            start = number
        continued = line.endswith("\\")
        pieces.append(line[:-1] if continued else line)
        if continued:
            continue
        joined, pieces = "".join(pieces), []
        if joined and not _too_long(joined, UDEV_LINE_LIMIT):  # udevd ignores a continued line this long
            yield start, joined
    # a continuation still open at the end of the file: udevd ignores it ("Unexpected EOF after line continuation")


def _lldpcli_words(line: str) -> list[str] | None:
    """The words lldpcli's ``tokenize_line`` makes of ``line``; None where it refuses the line (an open quote or a
    trailing backslash), which lldpcli then does not run."""
    marked: list[tuple[str, bool]] = []  # (character, kept in its word whatever it is); "" marks a quote's start
    escaped, quote = False, ""
    for char in line:
        if char == "#" and not escaped and not quote:
            break
        if not escaped and char == "\\":
            escaped = True
        elif not escaped and not quote and char in "'\"":
            marked.append(("", True))
            quote = char
        elif not escaped and char == quote:
            quote = ""
        else:
            marked.append((char, escaped or bool(quote)))
            escaped = False
    if escaped or quote:
        return None
    words: list[list[str]] = []
    in_word = False
    for char, kept in marked:
        if not kept and char in " \n\t":
            in_word = False
        elif in_word:
            words[-1].append(char)
        else:
            words.append([char])
            in_word = True
    return ["".join(word) for word in words]


def _lldpcli_commands(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, words) of each command ``lldpcli -c`` runs: each line that ends in a newline (``getline``;
    a last line without one is read and dropped), cut at a NUL (a C string), tokenized, when it has words."""
    for number, line in enumerate(text.split("\n")[:-1], 1):
        words = _lldpcli_words(line.split("\0", 1)[0])
        if words:
            yield number, words


def read_unit(text: str) -> UnitFile:
    settings: dict[str, dict[str, None]] = {}  # values in order, each once (a dict: a long list stays linear)
    lines: dict[str, int] = {}
    section = ""
    for number, line in _unit_lines(text):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, equals, value = line.partition("=")
        key, value = key.strip(_SYSTEMD_BLANKS), value.strip(_SYSTEMD_BLANKS)
        if not equals or not key:
            continue  # systemd warns and ignores the line
        name = f"{section}.{key}"
        lines[name] = number
        if key not in UNIT_LISTS:
            settings[name] = {value: None}
        elif not value:
            settings[name] = {}
        else:
            words = [word for word in value.replace("\t", " ").split(" ") if word]  # systemd's blanks only
            settings.setdefault(name, {}).update(dict.fromkeys([" ".join(words)] if key == "ExecStart" else words))
    return UnitFile({name: tuple(values) for name, values in settings.items()}, lines)


def unit_true(value: str) -> bool:
    """A boolean setting as systemd reads it (``yes``, ``true``, ``on``, ``1``...)."""
    return value.lower() in _TRUE


_UDEV_PART = re.compile(r'\s*([A-Za-z_]+(?:\{[^}]*\})?)\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def read_udev_rules(text: str) -> UdevRules:
    rules = []
    for number, line in _udev_lines(text):
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
    for number, words in _lldpcli_commands(text):
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
