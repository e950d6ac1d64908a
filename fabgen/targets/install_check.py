"""The output check of the ``install-hosts`` and ``install-switches`` targets (:mod:`fabgen.targets.install`).

In a module of its own, importing nothing but ``json``, ``re`` and
:mod:`fabgen.errors`, because the one-device cache (:mod:`fabgen.plan_cache`)
re-runs it on every hit and must not import the host targets (lxml, Jinja2,
the planner's intents) for a switch's install list.

Why a cache of *shapes*: the 2,048 switch lists of the 24k fabric (and the
hosts' of one profile) differ only in the device's name, and parsing each one
cost fifty times writing it. A list's shape is its text with the device name
(from its path) replaced by ``@``; a shape whose list passed is judged passed
for any other *safe* name (:data:`SAFE_NAME`) without a parse. That is exact,
not a sampling: a shape is admitted only when no test's verdict can depend on
which safe name stands in for ``@`` (:func:`_name_free`).
"""

from __future__ import annotations

import json
import re

from fabgen.errors import Problem

_SOURCE = re.compile(r"^(?:hosts|switches)/[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9_][A-Za-z0-9._-]*)*$")
_DEST = re.compile(r"^/(?:[A-Za-z0-9_][A-Za-z0-9._-]*/)*[A-Za-z0-9_][A-Za-z0-9._-]*$")


SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""A device name that is itself in JSON and in every path segment (no quote, slash, escape; never ``..``)."""
_KEYS = frozenset({"source", "dest", "mode", "then"})
_PASSED: set[str] = set()
"""Shapes of lists that passed, ``@`` for the device name."""
_MAX_SHAPES = 4096


def _device_of(path: str) -> str | None:
    """The device a list's path names (``switches/NAME.install.json``, ``hosts/NAME/install.json``), if safe."""
    if path.startswith("switches/") and path.endswith(".install.json"):
        name = path[9:-13]
    elif path.startswith("hosts/") and path.endswith("/install.json"):
        name = path[6:-13]
    else:
        return None
    return name if SAFE_NAME.fullmatch(name) else None


def _name_free(shape: str) -> bool:
    """Whether a passed list's shape passes with any safe name in place of ``@``.

    The text has no ``@`` of its own, so the shape is the text exactly, the name
    put back. If the shape parses, each ``@`` is inside a string (outside one
    it is no JSON), and a safe name there parses as the same characters. Then:
    top-level keys and each entry's keys and mode hold no ``@``, so they are the
    same for every name; a source holds none in its first segment (the only
    literal the pattern has, ``hosts``/``switches``); elsewhere in a source or
    dest each character of a safe name is in the class the patterns allow at its
    place (its first an alphanumeric, fit to start a segment) and no segment
    holding it is ``..``. ``then`` is not judged. Two destinations alike with
    one name would be alike in the shape (the name has no quote, so replacing
    it stays inside each string), and so with the name that passed.
    """
    try:
        data = json.loads(shape)
    except ValueError:
        return False
    if not isinstance(data, dict) or any("@" in key for key in data) or not isinstance(data.get("files", []), list):
        return False
    return all(isinstance(entry, dict) and set(entry) == _KEYS
               and all(isinstance(entry[k], str) for k in ("source", "dest", "mode"))
               and "@" not in entry["mode"] and "@" not in entry["source"].split("/", 1)[0]
               for entry in data.get("files", []))


def check_install_map(path: str, text: str) -> list[Problem]:
    """Relative sources inside the tree, absolute destinations without ``..``, octal modes, one file per dest."""
    name = _device_of(path)
    shape = text.replace(name, "@") if name is not None and "@" not in text else None
    if shape is not None and shape in _PASSED:
        return []
    problems = _check(path, text)
    if shape is not None and not problems and len(_PASSED) < _MAX_SHAPES and _name_free(shape):
        _PASSED.add(shape)
    return problems


def passes_for_every_safe_name(shape: str, path: str, name: str) -> bool:
    """Whether ``shape.replace("@", n)`` passes :func:`check_install_map` for every safe ``n``, from one full check.

    For a target that prints every device's list from one shape (``@`` for the
    name) and so need not check each copy: the list for ``name`` (at ``path``)
    is checked in full, and the shape is admitted as :func:`check_install_map`
    admits one, so a later ``check_install_map`` of any copy agrees at once.
    False (nothing admitted) when the check finds a problem or the verdict
    could depend on the name; the caller then checks each list on its own.
    """
    if shape in _PASSED:
        return True
    if "@" in name or not SAFE_NAME.fullmatch(name) or _check(path, shape.replace("@", name)) or not _name_free(shape):
        return False
    if len(_PASSED) < _MAX_SHAPES:
        _PASSED.add(shape)
    return True


def shape_passed(shape: str) -> bool:
    """Whether ``shape`` is admitted (:func:`passes_for_every_safe_name` said so and the verdicts were not reset)."""
    return shape in _PASSED


def all_safe(names: list[str]) -> bool:
    """Whether every name is a :data:`SAFE_NAME`, from C-speed scans of them all joined (no call per name).

    Joined by newlines (which no safe name holds, so the count must be one less
    than the names): every character is one a safe name may hold, and no name
    is empty or starts with ``.``, ``_`` or ``-``, so each starts with a letter
    or digit, which is :data:`SAFE_NAME` exactly. ``tests/targets/test_install_many.py``
    compares it with ``SAFE_NAME`` name by name.
    """
    joined = "\n".join(names)
    if not names or joined.count("\n") != len(names) - 1 or not joined.isascii():
        return False
    data = f"\n{joined}\n".encode("ascii")
    return not data.translate(None, _SAFE_BYTES) and _BAD_START.search(data) is None


_SAFE_BYTES = b"\nABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
_BAD_START = re.compile(rb"\n[\n._-]")
"""An empty name, or one that starts with a character only a later place allows."""


def _check(path: str, text: str) -> list[Problem]:
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
