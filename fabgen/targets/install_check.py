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

_SOURCE = re.compile(r"^(?:hosts|switches)/[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9_][A-Za-z0-9._-]*)*$")
_DEST = re.compile(r"^/(?:[A-Za-z0-9_][A-Za-z0-9._-]*/)*[A-Za-z0-9_][A-Za-z0-9._-]*$")


def check_install_map(path: str, text: str) -> list[Problem]:
    """Relative sources inside the tree, absolute destinations without ``..``, octal modes, one file per dest."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [Problem(f"not JSON: {exc}", file=path)]
    problems: list[Problem] = []
    dests: set[str] = set()
    for entry in data.get("files", []) if isinstance(data, dict) else [None]:
        if not isinstance(entry, dict) or set(entry) != {"source", "dest", "mode", "then"}:
            problems.append(Problem(f"bad entry {entry!r}", file=path))
            continue
        if not _SOURCE.match(entry["source"]) or ".." in entry["source"].split("/"):
            problems.append(Problem(f"source {entry['source']!r} is not a path in the output tree", file=path))
        if not _DEST.match(entry["dest"]) or ".." in entry["dest"].split("/"):
            problems.append(Problem(f"dest {entry['dest']!r} is not an absolute path", file=path))
        if entry["dest"] in dests:
            problems.append(Problem(f"two files installed as {entry['dest']}", file=path))
        dests.add(entry["dest"])
        if entry["mode"] not in ("0600", "0644", "0755"):
            problems.append(Problem(f"mode {entry['mode']!r} is not one fabgen uses", file=path))
    return problems
