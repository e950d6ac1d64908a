"""``switches/NAME/patch.yaml``: fabgen's subtrees for ``nv config patch``, and nothing else.

Why a third form beside ``startup.yaml`` and ``nvue.sh``: ``nv config replace
startup.yaml`` replaces the whole pending configuration (users, management VRF,
NTP, syslog, every port fabgen does not configure are gone), and the ``nv
set`` script only merges, so a value an earlier run set and this spec no
longer wants (a DSCP that left the RoCE class, a BGP neighbour of a removed
leaf) stays. ``nv config patch FILE`` "updates the pending configuration with
an NVUE configuration file" (NVUE command reference): a list of operations,
applied in order. This file holds two: an ``- unset:`` of each subtree fabgen
owns, then a ``- set:`` of the same tree as ``startup.yaml``. So fabgen's
subtrees end up exactly as the spec says, and everything outside them is left
as it is. ``nv config diff`` shows the change before ``nv config apply``, and
NVUE applies only the difference, so a subtree that comes back unchanged is
not touched.

What fabgen owns is cut at a fixed depth per top-level key (:data:`OWNED_DEPTH`):
a whole interface it configures (``interface swp1``), a QoS profile
(``qos pfc default-global``), ``router bgp``, the underlay's ``vrf default
router bgp``, ``system hostname`` and ``system forwarding ecmp-hash``; a
shallower leaf is owned as it is. The unset leaves are YAML nulls, the form
NVUE's own ``nv config diff -o yaml`` prints for an unset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from fabgen.errors import Problem
from fabgen.targets.nvue.parse import check_nvue_output, check_nvue_startup, fast_clean
from fabgen.targets.nvue.subset import read_subset

Tree = dict[str, Any]
Path = tuple[str, ...]

_DIRTY = Problem("the set item has a problem: read again by ruamel for its message and position")
"""What the fast path's set check returns for a problem; never reported, the ruamel path reports it."""

OWNED_DEPTH: dict[str, int] = {"interface": 2, "qos": 3, "router": 2, "vrf": 4, "system": 3}
"""Top-level key -> depth of the subtrees fabgen owns under it (a leaf above that depth is owned itself)."""


def patch_path(name: str) -> str:
    return f"switches/{name}/patch.yaml"


def owned_paths(tree: Tree) -> list[Path]:
    """The subtrees of ``tree`` fabgen replaces, in tree order."""

    def walk(node: Tree, path: Path, depth: int) -> Iterator[Path]:
        for key, value in node.items():
            here = (*path, key)
            if len(here) >= depth or not isinstance(value, dict) or not value:
                yield here
            else:
                yield from walk(value, here, depth)

    found: list[Path] = []
    for top, value in tree.items():
        if top not in OWNED_DEPTH:
            raise ValueError(f"nvue: no owned depth for top-level key {top!r}")
        found.extend(walk(value, (top,), OWNED_DEPTH[top]) if isinstance(value, dict) and value else [(top,)])
    return found


def unset_lines(paths: list[Path], quote: Callable[[str], str]) -> list[str]:
    """``- unset:`` with every path as nested keys (each through ``quote``, startup.yaml's) and a null leaf."""
    lines = ["- unset:"]
    printed: list[str] = []
    for path in paths:
        for depth, key in enumerate(path):
            if printed[: depth + 1] == list(path[: depth + 1]) and depth < len(path) - 1:
                continue
            pad = " " * (4 + 2 * depth)
            lines.append(f"{pad}{quote(key)}: null" if depth == len(path) - 1 else f"{pad}{quote(key)}:")
        printed = list(path)
    return lines


def patch_yaml(header: tuple[str, ...], unset: list[str], set_item: list[str]) -> str:
    """The patch: ``header`` comments, ``unset`` (:func:`unset_lines`), then ``set_item`` (startup.yaml's)."""
    lines = [f"# {line}" for line in header]
    lines += [
        "# Apply on the switch: nv config patch /full/path/patch.yaml; review: nv config diff;",
        "# then: nv config apply. Only the subtrees below are replaced; all other configuration stays.",
        *unset,
        *set_item,
    ]
    return "\n".join(lines) + "\n"


def _leaves(node: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _leaves(value, (*path, str(key)))
    else:
        yield path, node


def check_patch(path: str, text: str) -> list[Problem]:
    """The shape ``nv config patch`` takes; the set item against NVUE's schema; unsets only what is set again.

    The text is read once by :func:`read_subset` (the set item is checked from
    that same tree); only when it is outside the emitter's subset, or has a
    problem, is it read by ruamel as before, so problems keep their messages
    and positions.
    """
    fast = read_subset(text)
    if fast is not None and not _patch_problems(path, fast, lambda: [] if fast_clean(path, fast[1:]) else [_DIRTY]):
        return []
    try:
        doc = YAML(typ="safe").load(text)
    except YAMLError as exc:
        return [Problem(f"not valid YAML: {' '.join(str(exc).split())}", file=path, line=1, col=1)]

    def set_problems() -> list[Problem]:
        lines = text.splitlines()
        if "- set:" not in lines:  # a set item the loader reads but spelled otherwise (``- "set":``)
            return [Problem("the set item must be written '- set:' on a line of its own", file=path, line=1, col=1)]
        start = lines.index("- set:")
        return [Problem(p.message, file=path, line=(p.line or 1) + start, col=p.col, path=p.path)
                for p in check_nvue_startup(path, "\n".join(lines[start:]) + "\n")]

    return _patch_problems(path, doc, set_problems)


def _patch_problems(path: str, doc: Any, set_problems: Callable[[], list[Problem]]) -> list[Problem]:
    """:func:`check_patch` of a loaded document; ``set_problems`` checks its set item."""
    if (not isinstance(doc, list) or len(doc) != 2 or not all(isinstance(i, dict) and len(i) == 1 for i in doc)
            or [next(iter(i)) for i in doc] != ["unset", "set"]):
        return [Problem("a patch is the list [- unset: ..., - set: ...]", file=path, line=1, col=1)]
    problems = set_problems()
    unset, written = doc[0]["unset"], doc[1]["set"]
    for where, leaf in _leaves(unset):
        if leaf is not None:
            problems.append(Problem(f"unset {'.'.join(where)}: the leaf must be null, not {leaf!r}", file=path))
        node: Any = written
        for key in where:
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            problems.append(Problem(f"unset {'.'.join(where)}: the patch does not set it again, so it would "
                                    "erase configuration fabgen does not write", file=path))
    return problems


def check_nvue_files(path: str, text: str) -> list[Problem]:
    """The nvue target's validator: the patch here, startup.yaml and nvue.sh in :mod:`~fabgen.targets.nvue.parse`."""
    if path.endswith("/patch.yaml"):
        return check_patch(path, text)
    return check_nvue_output(path, text)
