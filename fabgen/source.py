"""Load a spec file and remember where every node came from.

The ruamel.yaml round-trip loader keeps line and column for every mapping key,
value and sequence item. We convert the document to plain Python data once and
keep a ``path -> (line, col)`` index beside it, so that any later error
(pydantic's, the planner's, the linter's) can say ``spec.yaml:42:7``.

Hostile input is refused early and cheaply: files above :data:`MAX_BYTES`,
non-UTF-8 bytes, a byte-order mark, and documents whose aliases expand to more
than :data:`MAX_NODES` nodes (a "billion laughs" is a small DAG in memory; we
count its expanded size before walking it).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer, ComposerError
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from fabgen.bounded import decode_utf8, read_bytes
from fabgen.errors import FabgenError, Problem, SpecError

MAX_BYTES = 16 * 1024 * 1024
"""Largest spec file read (16 MiB). A 24k-GPU spec is a few kB."""
MAX_NODES = 1_000_000
"""Most YAML nodes a document may expand to, aliases counted as copies."""
MAX_DEPTH = 64
"""Deepest nesting of mappings and sequences (a real spec nests about 7 levels)."""
MAX_SOURCE_NODES = 250_000
"""Most YAML nodes (keys, values, items) written in the file, counted while parsing. Each costs the
pure-Python parser about 45 us and 0.6 kB: without this bound a 2 MB ``[1,1,1,...]`` took 50 s and
1.2 GB before the expanded-size check could refuse it. 200,000 explicit host names fit."""

DataPath = tuple[str | int, ...]

_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in
                        ("str", "int", "float", "bool", "null", "map", "seq", "merge", "timestamp"))
"""Tags a spec may carry (implicitly or as ``!!str``). Anything else (``!vault``, ``!!python/object``, ``!Ref``)
means the author expected a tool to do something with it; ignoring it silently would generate something else."""


class _DepthLimitedComposer(Composer):
    """Refuses nesting deeper than :data:`MAX_DEPTH`, and more than :data:`MAX_SOURCE_NODES` nodes,
    at the node that goes too far, while parsing (not after: the parse is the expensive part).

    Without it, ``[[[[...`` runs ruamel's scanner (quadratic in the flow depth)
    for seconds until Python's recursion limit stops it, with no position.
    """

    _nesting = 0
    _nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self._nesting >= MAX_DEPTH:
            mark = self.parser.peek_event().start_mark
            raise ComposerError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
        self._nodes += 1
        if self._nodes > MAX_SOURCE_NODES:
            mark = self.parser.peek_event().start_mark
            raise ComposerError(None, None, f"more than {MAX_SOURCE_NODES} YAML nodes; refusing the rest", mark)
        self._nesting += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._nesting -= 1
        tag = str(getattr(node.tag, "value", node.tag) or "")
        if tag and tag not in _PLAIN_TAGS:
            shown = tag.replace("tag:yaml.org,2002:", "!!")[:60]
            raise ComposerError(None, None, f"YAML tag {shown!r} is not supported: a spec is plain data "
                                "(remove the tag; quote the value if it should be a string)", node.start_mark)
        return node


def format_path(path: DataPath) -> str:
    """``('fabric', 'tiers', 'leaf', 'ports')`` -> ``fabric.tiers.leaf.ports``; items as ``[3]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


@dataclass(frozen=True)
class SourceDoc:
    """A loaded spec: plain data plus where each node was written."""

    file: str
    text: str
    data: Any
    value_positions: dict[DataPath, tuple[int, int]] = field(repr=False)
    key_positions: dict[DataPath, tuple[int, int]] = field(repr=False)

    def locate(self, path: DataPath, *, key: bool = False) -> tuple[int, int]:
        """1-based (line, col) of the node at ``path``, or of its nearest written ancestor."""
        table = self.key_positions if key else self.value_positions
        probe = tuple(path)
        while probe:
            if probe in table:
                return table[probe]
            if not key and probe in self.key_positions:
                return self.key_positions[probe]
            probe = probe[:-1]
        return self.value_positions.get((), (1, 1))

    def problem(self, message: str, path: DataPath, *, key: bool = False) -> Problem:
        line, col = self.locate(path, key=key)
        return Problem(message, file=self.file, line=line, col=col, path=format_path(path))


def spec_problem(doc: SourceDoc | None, message: str, path: DataPath) -> Problem:
    """A problem at ``path`` of the spec: ``file:line:col`` when the source is known, else just the data path."""
    if doc is not None:
        return doc.problem(message, path)
    return Problem(message, file="<spec>", path=format_path(path))


def load_source(source: str | Path, *, text: str | None = None) -> SourceDoc:
    """Read and parse a spec. ``source`` names the file; pass ``text`` to parse a string instead."""
    file = str(source)
    if text is None:
        text = _read_text(Path(source))
    elif len(text) > MAX_BYTES:
        raise SpecError([Problem(f"spec is larger than {MAX_BYTES} bytes; refusing to read it", file=file)])
    if text.startswith("\ufeff"):
        raise SpecError([Problem("file starts with a byte-order mark; save it as UTF-8 without BOM", file=file, line=1, col=1)])
    if not text.strip():
        raise SpecError([Problem("spec is empty", file=file, line=1, col=1)])

    yaml = YAML(typ="rt", pure=True)
    yaml.allow_duplicate_keys = False
    yaml.Composer = _DepthLimitedComposer
    try:
        root = yaml.load(text)
    except DuplicateKeyError as exc:
        raise SpecError([_marked_problem(exc, file, "duplicate key")]) from None
    except MarkedYAMLError as exc:
        raise SpecError([_marked_problem(exc, file, "invalid YAML")]) from None
    except (YAMLError, RecursionError, ValueError) as exc:
        raise SpecError([Problem(f"invalid YAML: {_one_line(str(exc))}", file=file)]) from None

    if not isinstance(root, CommentedMap):
        kind = {type(None): "nothing", CommentedSeq: "a list"}.get(type(root), "a single value")
        raise SpecError([Problem(f"spec must be a mapping at the top level, got {kind}", file=file, line=1, col=1)])

    expanded = _expanded_size(root)
    if expanded > MAX_NODES:
        raise SpecError([Problem(
            f"document expands to {expanded} nodes through aliases (limit {MAX_NODES}); refusing it",
            file=file, line=1, col=1)])

    values: dict[DataPath, tuple[int, int]] = {(): (root.lc.line + 1, root.lc.col + 1)}
    keys: dict[DataPath, tuple[int, int]] = {}
    data = _to_plain(root, (), values, keys)
    return SourceDoc(file=file, text=text, data=data, value_positions=values, key_positions=keys)


def _read_text(path: Path) -> str:
    """The spec's text: a regular file only (``/dev/zero`` and FIFOs report size 0), bounded by :data:`MAX_BYTES`."""
    try:
        raw = read_bytes(path, MAX_BYTES, what="spec")
    except FabgenError as exc:
        raise SpecError(exc.problems) from None
    try:
        return decode_utf8(raw, str(path), what="not valid UTF-8")
    except FabgenError as exc:
        raise SpecError(exc.problems) from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _marked_problem(exc: MarkedYAMLError, file: str, prefix: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or str(exc)
    detail = _one_line(str(problem))
    if isinstance(exc, DuplicateKeyError):
        detail = _one_line(str(exc.problem))
        prefix = "duplicate key"
    if "'\\t'" in detail:
        detail += " (YAML does not allow tabs for indentation)"
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
    return Problem(f"{prefix}: {detail}", file=file, line=line, col=col)


def _expanded_size(root: Any) -> int:
    """Node count with aliases expanded, computed on the DAG in linear time."""
    sizes: dict[int, int] = {}
    on_stack: set[int] = set()

    def size(node: Any) -> int:
        if not isinstance(node, (CommentedMap, CommentedSeq)):
            return 1
        ident = id(node)
        if ident in sizes:
            return sizes[ident]
        if ident in on_stack:  # recursive alias: infinite expansion
            return MAX_NODES + 1
        on_stack.add(ident)
        children = node.values() if isinstance(node, CommentedMap) else node
        total = 1 + sum(size(child) for child in children)
        on_stack.discard(ident)
        sizes[ident] = total = min(total, 10 * MAX_NODES)
        return total

    return size(root)


def _to_plain(node: Any, path: DataPath, values: dict[DataPath, tuple[int, int]],
              keys: dict[DataPath, tuple[int, int]]) -> Any:
    """ruamel nodes -> dict/list/str/int/float/bool/None, recording positions."""
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key in node:
            child_path = (*path, key if isinstance(key, (str, int)) else str(key))
            try:
                kl, kc = node.lc.key(key)
                keys[child_path] = (kl + 1, kc + 1)
                vl, vc = node.lc.value(key)
                values[child_path] = (vl + 1, vc + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            plain_key = _scalar(key)
            out[plain_key] = _to_plain(node[key], child_path, values, keys)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, item in enumerate(node):
            child_path = (*path, index)
            try:
                il, ic = node.lc.item(index)
                values[child_path] = (il + 1, ic + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            items.append(_to_plain(item, child_path, values, keys))
        return items
    return _scalar(node)


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    return str(value)
