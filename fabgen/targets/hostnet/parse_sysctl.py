"""A sysctl.d file as ``systemd-sysctl`` reads it: which value each ``/proc/sys`` key gets from it.

Why: ``lint --deployed`` compares a host's collected ``60-fabgen-roce.conf``
(``sysctl.conf`` in fabgen's tree) with the plan by what the file makes the
kernel hold, not by its text. The rules are sysctl.d(5)'s:

- ``#`` and ``;`` start a comment line; ``-`` before a key only silences a
  failed write; a line without ``=`` is no assignment (``-KEY`` alone keeps
  KEY out of every glob), and systemd-sysctl skips it;
- the first of ``/`` and ``.`` in a key is its separator: with ``/`` dots are
  literal (``net/ipv4/conf/ens1.100/rp_filter``), with ``.`` the two swap
  (``net.ipv4.conf.ens1/100.rp_filter`` is the same key);
- a later assignment of a key overrides an earlier one;
- a glob (``net.ipv4.conf.*.rp_filter``) writes every matching key, part by
  part as glob(3) matches paths, except those the file assigns explicitly or
  excludes; of two globs matching a key, the later one's write is the last.

The twin reads the same lines (:func:`sysctl_lines`) and refuses what it would
not apply faithfully (:func:`fabgen.twin.hostfiles.parse_sysctl`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatchcase

_GLOB = frozenset("*?[")


@dataclass(frozen=True)
class SysctlFile:
    explicit: dict[str, tuple[str, int]]
    """``/proc/sys`` path (``net/ipv4/conf/ens1np0/rp_filter``) -> (value, line) of its last assignment."""
    globs: tuple[tuple[tuple[str, ...], str, int], ...]
    """(path pattern split at ``/``, value, line) of each glob assignment, in file order."""
    excluded: frozenset[str]
    """Paths a ``-KEY`` line without ``=`` keeps out of glob matching."""

    def value(self, path: str) -> tuple[str, int] | None:
        """(value, line) systemd-sysctl writes to ``path`` from this file; None when it writes nothing there."""
        found = self.explicit.get(path)
        if found is not None or path in self.excluded:
            return found
        parts = path.split("/")
        for pattern, value, line in reversed(self.globs):
            if len(pattern) == len(parts) and all(map(fnmatchcase, parts, pattern)):
                return value, line
        return None


def proc_path(key: str) -> str:
    """A sysctl.d key as its ``/proc/sys`` path: ``/`` separates, whichever separator the key began with."""
    slash, dot = key.find("/"), key.find(".")
    if slash != -1 and (dot == -1 or slash < dot):
        return key
    return key.translate(_SWAP)


_SWAP = str.maketrans("./", "/.")


@dataclass(frozen=True, slots=True)
class SysctlLine:
    """One line of a sysctl.d file that is no comment."""

    line: int
    key: str
    """As written, without the ``-``."""
    path: str
    """The key's ``/proc/sys`` path (:func:`proc_path`)."""
    value: str | None
    """None on a line without ``=``."""
    quiet: bool
    """``-KEY``: a failed write is silent (and, without ``=``, the key stays out of globs)."""


def sysctl_lines(text: str) -> Iterator[SysctlLine]:
    """The lines of ``text`` that are not blank or comments, split as systemd-sysctl splits them."""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        quiet = line.startswith("-")
        key, equals, value = line.removeprefix("-").partition("=")
        key = key.strip()
        yield SysctlLine(number, key, proc_path(key), value.strip() if equals else None, quiet)


def read_sysctl(text: str) -> SysctlFile:
    """What ``text`` assigns (never raises: systemd-sysctl skips a line it cannot use, and so does this)."""
    explicit: dict[str, tuple[str, int]] = {}
    globs: list[tuple[tuple[str, ...], str, int]] = []
    excluded: set[str] = set()
    for entry in sysctl_lines(text):
        if not entry.path:
            continue
        if entry.value is None:
            if entry.quiet:
                excluded.add(entry.path)
        elif _GLOB.isdisjoint(entry.path):
            explicit[entry.path] = (entry.value, entry.line)
        else:
            globs.append((tuple(entry.path.split("/")), entry.value, entry.line))
    return SysctlFile(explicit, tuple(globs), frozenset(excluded))
