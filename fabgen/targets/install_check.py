"""The output check of the ``install-hosts`` and ``install-switches`` targets (:mod:`fabgen.targets.install`).

In a module of its own, importing nothing but ``json``, ``re`` and
:mod:`fabgen.errors`, because the one-device cache (:mod:`fabgen.plan_cache`)
re-runs it on every hit and must not import the host targets (lxml, Jinja2,
the planner's intents) for a switch's install list.
"""

from __future__ import annotations

import json
import re

from fabgen.errors import Problem

_SOURCE_RE = r"(?:hosts|switches)/[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9_][A-Za-z0-9._-]*)*"
_DEST_RE = r"/(?:[A-Za-z0-9_][A-Za-z0-9._-]*/)*[A-Za-z0-9_][A-Za-z0-9._-]*"
_SOURCE = re.compile(rf"^{_SOURCE_RE}$")
_DEST = re.compile(rf"^{_DEST_RE}$")
_SOURCES = re.compile(rf"{_SOURCE_RE}(?:\n{_SOURCE_RE})*")
_DESTS = re.compile(rf"{_DEST_RE}(?:\n{_DEST_RE})*")
"""A whole list's sources (destinations) joined by newlines, which no single one may hold."""
_KEYS = frozenset({"source", "dest", "mode", "then"})
_MODES = frozenset({"0600", "0644", "0755"})


def check_install_map(path: str, text: str) -> list[Problem]:
    """Relative sources inside the tree, absolute destinations without ``..``, octal modes, one file per dest."""
    if _good_lines(text):
        return []
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [Problem(f"not JSON: {exc}", file=path)]
    entries = data.get("files", []) if isinstance(data, dict) else [None]
    if _all_good(entries):
        return []
    problems: list[Problem] = []
    dests: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) != _KEYS:
            problems.append(Problem(f"bad entry {entry!r}", file=path))
            continue
        if not _SOURCE.match(entry["source"]) or ".." in entry["source"].split("/"):
            problems.append(Problem(f"source {entry['source']!r} is not a path in the output tree", file=path))
        if not _DEST.match(entry["dest"]) or ".." in entry["dest"].split("/"):
            problems.append(Problem(f"dest {entry['dest']!r} is not an absolute path", file=path))
        if entry["dest"] in dests:
            problems.append(Problem(f"two files installed as {entry['dest']}", file=path))
        dests.add(entry["dest"])
        if entry["mode"] not in _MODES:
            problems.append(Problem(f"mode {entry['mode']!r} is not one fabgen uses", file=path))
    return problems


def _all_good(entries: object) -> bool:
    """The per-entry rules above, each as one scan over the whole list: true only when no entry breaks one.

    24k host lists hold 37k entries; one regex over the joined sources (and one
    over the destinations) replaces two matches and two splits per entry. Any
    doubt (a non-string, a newline inside a value) answers false, and the
    per-entry loop then finds and words the problem. A ``..`` segment cannot
    pass either pattern: every segment starts with a letter, digit or ``_``.
    """
    if not isinstance(entries, list):
        return False
    if not entries:
        return True
    try:
        if not all(type(e) is dict and e.keys() == _KEYS for e in entries):
            return False
        sources = "\n".join([e["source"] for e in entries])
        dest_list = [e["dest"] for e in entries]
        dests = "\n".join(dest_list)
        modes = {e["mode"] for e in entries}
    except TypeError:  # a value that is not a string (or not hashable)
        return False
    lines = len(entries) - 1
    return (modes <= _MODES and sources.count("\n") == lines and dests.count("\n") == lines
            and len(set(dest_list)) == len(entries)
            and _SOURCES.fullmatch(sources) is not None and _DESTS.fullmatch(dests) is not None)


_HEAD = re.compile(r'\{"device": "[ !#-\[\]-~]*", "kind": "(?:host|switch)", "files": \[')
"""The first line as :func:`fabgen.targets.install._dump` prints it, a device name without JSON escapes."""
_GOOD_LINES: dict[str, str] = {}
"""Entry lines (without the comma) already found good, to their ``dest``: a profile's lines are on all its hosts."""
_GOOD_LINES_MAX = 1 << 16


def _good_lines(text: str) -> bool:
    """True only when ``text`` is a list in the one-entry-a-line layout fabgen writes and every entry is good.

    Each distinct entry line is parsed and checked once (a 24k host list has
    eleven lines, seven of them its profile's, the same on every host of it):
    the lines not seen before are parsed together as one JSON array, which must
    hold exactly one object per line, so a line is a whole JSON value and means
    in the list what it means alone (a raw newline is never inside a JSON
    string, so splitting at ``,`` and newline splits between values or fails). Anything else (another layout, an empty
    list, a bad entry) answers false and the whole text is parsed and checked.
    """
    head_end = text.find("\n")
    if head_end < 0 or not text.endswith("\n]}\n") or _HEAD.fullmatch(text, 0, head_end) is None:
        return False
    body = text[head_end + 1:-4].split(",\n")
    new = [line for line in body if line not in _GOOD_LINES]
    if new:
        try:
            entries = json.loads("[" + ",".join(new) + "]")
        except ValueError:
            return False
        if len(entries) != len(new) or not _all_good(entries):
            return False
        if len(_GOOD_LINES) > _GOOD_LINES_MAX:
            _GOOD_LINES.clear()
        _GOOD_LINES.update(zip(new, (e["dest"] for e in entries), strict=True))
    return len({_GOOD_LINES[line] for line in body}) == len(body)
