"""Read back the YAML subset the nvue emitter writes, line by line, or say "not sure".

Why: ruamel's pure-Python parser cost about a second per 64-port switch to
read back ``startup.yaml`` and ``patch.yaml``, 40x the bytes themselves. The
emitter (:func:`fabgen.targets.nvue.config.startup_yaml`,
:func:`fabgen.targets.nvue.patch.patch_yaml`) prints only a small, fixed
subset of YAML, and every line of it has one reading. :func:`read_subset`
accepts exactly that subset and returns the tree a YAML loader builds from it
(plain ``list``/``dict``/``str``/``int``/``None``); for anything else (odd
indentation, flow sequences, anchors, tags, blank lines, trailing comments, a
plain scalar whose YAML type could be other than a string, escapes other than
``\\"`` and ``\\\\``, a duplicate key, non-ASCII) it returns None and the caller
runs the YAML loader as before. Being strict costs nothing but time: a text
it refuses is only checked the slow way.
"""

from __future__ import annotations

import re
from typing import Any

from fabgen.targets.memo import remember

PLAIN_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
"""A key the emitter prints unquoted (unless it is one of :data:`YAML_WORDS`): no YAML 1.1 or 1.2 type but str."""
YAML_WORDS = frozenset({"y", "yes", "n", "no", "true", "false", "on", "off", "null"})
"""Letter-only plain scalars some YAML version reads as a bool or null (compared lower-cased)."""

_OUTSIDE = re.compile(r"[^\x20-\x7e\n]")
_DQ = r'"(?:[^"\\]|\\["\\])*"'
_INT = r"0|-?[1-9][0-9]*"
_ENTRY = re.compile(rf"( *)([A-Za-z][A-Za-z0-9_-]*|{_DQ}):(?: (.+))?")
_ITEM = re.compile(r"- ([A-Za-z][A-Za-z0-9_-]*):")
_VALUE = re.compile(rf"(null)|({_INT})|({_DQ})")
_FLOW = re.compile(rf"([A-Za-z][A-Za-z0-9_-]*|{_DQ}): (\{{\}}|{_INT}|{_DQ})(, |\}}\Z)")
_ESCAPE = re.compile(r'\\(["\\])')
_KEY_MAX = 128
"""Longer keys are left to the loader: YAML allows an implicit key of at most 1024 characters."""


class _NotSure(Exception):
    """The text leaves the subset: the YAML loader must read it."""


def read_subset(text: str) -> list[Any] | None:
    """The document the YAML loader reads from ``text`` when it is in the emitter's subset, else None.

    The subset: comment lines (``#`` at the indentation of the next content
    line), top-level ``- KEY:`` items each holding one block mapping at
    indentation 4, block mappings nested two spaces deeper under ``KEY:``, and
    values ``null``, a decimal integer, a double-quoted string or a one-line
    flow mapping of such scalars and ``{}``.
    """
    if not text.endswith("\n") or _OUTSIDE.search(text):
        return None
    try:
        return _read(text.split("\n")[:-1])
    except _NotSure:
        return None


_COMMENT, _ITEM_LINE, _OPEN, _SCALAR, _FLOW_LINE, _OUT = range(6)
"""What a line is: a comment, ``- KEY:``, ``KEY:``, ``KEY: scalar``, ``KEY: {flow}``, or outside the subset."""
_EMPTY = object()
"""``{}`` inside a remembered flow mapping: a fresh dict is built for each read, so no tree shares one."""
Shape = tuple[int, int, str, Any]
"""(what the line is, its indentation, its key, its value: a scalar or the flow mapping's (key, value) pairs)."""
_SHAPES: dict[str, Shape] = {}
"""Each line's shape, read once: a switch repeats most of its lines (every port's, every DSCP's), switches
repeat each other's."""
_SHAPES_MAX = 1 << 15


def _read(lines: list[str]) -> list[Any] | None:
    doc: list[Any] = []
    stack: list[tuple[int, dict[str, Any]]] = []
    """(indentation of the entries, the mapping) of each open block mapping, outermost first."""
    opened = False
    """The last content line was ``KEY:``: the next one must be its first entry."""
    comment = -1
    """Indentation of the comment lines since the last content line, -1 when there were none."""
    shapes = _SHAPES
    for line in lines:
        shape = shapes.get(line)
        if shape is None:
            shape = remember(shapes, line, _shape(line), _SHAPES_MAX)
        kind, indent, key, value = shape
        if kind == _COMMENT:
            if comment not in (-1, indent):
                return None
            comment = indent
            continue
        if kind == _OUT or comment not in (-1, indent):
            return None
        comment = -1
        if kind == _ITEM_LINE:
            if opened:
                return None
            mapping: dict[str, Any] = {}
            doc.append({key: mapping})
            stack = [(4, mapping)]
            opened = True
            continue
        if opened:
            if indent != stack[-1][0]:
                return None
            opened = False
        else:
            while stack and stack[-1][0] > indent:
                stack.pop()
            if not stack or stack[-1][0] != indent:
                return None
        parent = stack[-1][1]
        if key in parent:
            return None
        if kind == _OPEN:
            child: dict[str, Any] = {}
            parent[key] = child
            stack.append((indent + 2, child))
            opened = True
        elif kind == _SCALAR:
            parent[key] = value
        else:
            parent[key] = {k: {} if v is _EMPTY else v for k, v in value}
    if opened or comment != -1 or not doc:
        return None
    return doc


def _shape(line: str) -> Shape:
    body = line.lstrip(" ")
    indent = len(line) - len(body)
    if body.startswith("#"):
        return _COMMENT, indent, "", None
    if indent == 0:
        item = _ITEM.fullmatch(line)
        return (_ITEM_LINE, 0, item[1], None) if item is not None and not _word(item[1]) else (_OUT, 0, "", None)
    entry = _ENTRY.fullmatch(line)
    try:
        if entry is None:
            raise _NotSure
        key = _key(entry[2])
        if entry[3] is None:
            return _OPEN, indent, key, None
        if entry[3][0] == "{":
            return _FLOW_LINE, indent, key, _flow(entry[3])
        return _SCALAR, indent, key, _value(entry[3])
    except _NotSure:
        return _OUT, 0, "", None


def _word(plain: str) -> bool:
    return plain.lower() in YAML_WORDS


def _key(token: str) -> str:
    if len(token) > _KEY_MAX:
        raise _NotSure
    if token[0] == '"':
        return _ESCAPE.sub(r"\1", token[1:-1])
    if _word(token):
        raise _NotSure
    return token


def _value(token: str) -> Any:
    """A block scalar value: ``null``, an integer or a string."""
    match = _VALUE.fullmatch(token)
    if match is None:
        raise _NotSure
    if match[1]:
        return None
    if match[2]:
        return int(token)
    return _ESCAPE.sub(r"\1", token[1:-1])


def _flow(token: str) -> tuple[tuple[str, Any], ...]:
    """A one-line flow mapping as (key, value) pairs, ``{}`` values as :data:`_EMPTY`."""
    if token == "{}":
        return ()
    pairs: dict[str, Any] = {}
    at = 1
    while True:
        item = _FLOW.match(token, at)
        if item is None:
            raise _NotSure
        key = _key(item[1])
        if key in pairs:
            raise _NotSure
        value = item[2]
        pairs[key] = _EMPTY if value == "{}" else _value(value)
        if item[3] == "}":
            return tuple(pairs.items())
        at = item.end()
