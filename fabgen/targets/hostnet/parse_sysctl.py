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

The twin applies only what fabgen writes and keeps its stricter reader
(:func:`fabgen.twin.hostfiles.parse_sysctl`).
"""

from __future__ import annotations

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


def read_sysctl(text: str) -> SysctlFile:
    """What ``text`` assigns (never raises: systemd-sysctl skips a line it cannot use, and so does this)."""
    explicit: dict[str, tuple[str, int]] = {}
    globs: list[tuple[tuple[str, ...], str, int]] = []
    excluded: set[str] = set()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        quiet = line.startswith("-")
        key, equals, value = line.removeprefix("-").partition("=")
        path = proc_path(key.strip())
        if not path:
            continue
        if not equals:
            if quiet:
                excluded.add(path)
            continue
        if _GLOB.isdisjoint(path):
            explicit[path] = (value.strip(), number)
        else:
            globs.append((tuple(path.split("/")), value.strip(), number))
    return SysctlFile(explicit, tuple(globs), frozenset(excluded))
